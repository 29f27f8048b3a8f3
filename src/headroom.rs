//! Traffic headroom of the chip running a program: the packet rate each pipe can take against
//! what its front-panel ports offer at line rate, what the recirculation cap leaves for
//! recirculated packets, and what the program asks of the traffic manager (recirculation,
//! mirroring, queues per port).
//!
//! The stage report (`t2_pipeline::report`) knows the MAU; this knows the ports. Both come
//! from the same parameters the chip model runs on: one packet enters each gress of a pipe
//! per cycle, so a pipe takes at most `clock_hz` packets per second; its ports offer
//! `macs_per_pipe x mac_bps`; its recirculation port carries `recirculation_cap_percent` of
//! that. A frame on the wire takes its bytes plus 20 (preamble, start delimiter and gap).

use crate::chip::params::Tofino2Params;
use serde::Serialize;
use std::fmt::{self, Write as _};
use t2_clock::PREAMBLE_AND_IFG_BYTES;
use t2_pipeline::check::{Checked, Op, Thread, Value};

/// Frame sizes (FCS included) the packet-rate table shows.
pub const FRAME_SIZES: [u32; 6] = [64, 128, 256, 512, 1024, 1518];

/// One frame size at full line rate on every port of a pipe.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateRow {
    pub frame_bytes: u32,
    /// Packets per second the pipe's ports offer at line rate.
    pub offered_pps: f64,
    /// Offered packets against the pipe's ingress slots, in percent (above 100: pipe-bound).
    pub slot_use_percent: f64,
    /// Share of the offered packets the pipe can take, in percent.
    pub forwarded_percent: f64,
    /// Highest share of packets, in percent, that may go round the recirculation port once:
    /// bounded by the recirculation bandwidth and by the ingress slots left free.
    pub recirculate_once_percent: f64,
}

/// Queues one port of a given speed can have, and whether the program's queue ids fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortQueues {
    pub speed_gbps: u64,
    pub channels: u32,
    pub max_queues: u32,
    pub fits: bool,
}

/// Where a program sets the queue id, and the highest it can set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QidUse {
    pub highest: u32,
    /// How `highest` was found: a constant, the table's entries, or a field's width.
    pub from: String,
}

/// The whole headroom section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headroom {
    pub pipe_packets_per_second: u64,
    pub front_panel_bps_per_pipe: u64,
    pub recirculation_bps_per_pipe: u64,
    /// Smallest frame every port of a pipe can carry at line rate without the pipe running
    /// out of ingress slots.
    pub line_rate_min_frame_bytes: u64,
    pub rates: Vec<RateRow>,
    /// Tables (`name (thread)`) whose actions recirculate or mirror the packet.
    pub recirculating_tables: Vec<String>,
    pub mirroring_tables: Vec<String>,
    pub qid: Option<QidUse>,
    pub ports: Vec<PortQueues>,
    /// The program's declared overhead against the recirculation cap and the slots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead: Option<OverheadBudget>,
}

/// One limit on the data frame size `D` a declared overhead sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BudgetRow {
    /// `recirculation cap`, `ingress slots` or `egress slots`.
    pub limit: &'static str,
    /// Smallest wire bytes (`D + 20`) of a data frame that keeps every port at line rate.
    pub min_wire_bytes: u64,
    /// The same as a frame size, FCS included (`min_wire_bytes - 20`, at least 0).
    pub min_frame_bytes: u64,
    /// The inequality with its numbers.
    pub arithmetic: String,
}

/// The recirculation and mirror budget of a program that declares, per data packet, a
/// recirculated packet of `recirculated_bytes` and a mirror copy of `mirrored_bytes`.
///
/// At line rate a pipe's ports bring `F / ((D + 20) x 8)` data packets per second (F: the
/// pipe's front-panel b/s). The recirculated packets must fit the cap R:
/// `(D + 20) >= F x (r + 20) / R`. Every data packet and every recirculated one takes an
/// ingress slot (one per cycle, C per second): `(D + 20) x 8 >= n_i x F / C`; in egress the
/// mirror copy takes one more: `(D + 20) x 8 >= n_e x F / C`. The largest bound binds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverheadBudget {
    pub recirculated_bytes: u32,
    pub mirrored_bytes: u32,
    pub rows: Vec<BudgetRow>,
    /// The limit that binds (the largest `min_frame_bytes`).
    pub binding: &'static str,
    pub min_frame_bytes: u64,
}

impl OverheadBudget {
    fn new(o: t2_pipeline::ir::Overhead, params: &Tofino2Params) -> OverheadBudget {
        let front = params.front_panel_bps_per_pipe() as u128;
        let recirc = params.recirculation_bps_per_pipe() as u128;
        let clock = params.clock_hz as u128;
        let gap = PREAMBLE_AND_IFG_BYTES as u128;
        let gbps = |b: u128| format!("{} Gb/s", b as f64 / 1e9);
        let row = |limit, wire: u128, arithmetic: String| BudgetRow {
            limit,
            min_wire_bytes: wire as u64,
            min_frame_bytes: wire.saturating_sub(gap) as u64,
            arithmetic,
        };
        let r = o.recirculated_bytes as u128;
        let mut rows = Vec::new();
        if r > 0 {
            let wire = if recirc == 0 {
                u64::MAX as u128
            } else {
                (front * (r + gap)).div_ceil(recirc)
            };
            rows.push(row(
                "recirculation cap",
                wire,
                format!(
                    "D + 20 >= {} x ({r} + 20) / {} = {wire}",
                    gbps(front),
                    gbps(recirc)
                ),
            ));
        }
        let slots = |limit, n: u128| {
            let wire = (n * front).div_ceil(8 * clock);
            row(
                limit,
                wire,
                format!(
                    "(D + 20) x 8 >= {n} packets x {} / {} Mpkt/s = {} bits, so D + 20 >= {wire}",
                    gbps(front),
                    clock / 1_000_000,
                    (n * front).div_ceil(clock)
                ),
            )
        };
        let ingress = 1 + (r > 0) as u128;
        let egress = ingress + (o.mirrored_bytes > 0) as u128;
        rows.push(slots("ingress slots", ingress));
        rows.push(slots("egress slots", egress));
        let worst = rows.iter().fold(&rows[0], |w, x| {
            if x.min_wire_bytes > w.min_wire_bytes {
                x
            } else {
                w
            }
        });
        OverheadBudget {
            recirculated_bytes: o.recirculated_bytes,
            mirrored_bytes: o.mirrored_bytes,
            binding: worst.limit,
            min_frame_bytes: worst.min_frame_bytes,
            rows,
        }
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Tables of `p` whose actions contain an op `pick` accepts, as `name (thread)`.
fn tables_with(p: &Checked, pick: impl Fn(&Op) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for thread in Thread::ALL {
        for u in &p.flat[thread.index()] {
            let t2_pipeline::check::Unit::Table(t) = u.unit else {
                continue;
            };
            let table = &p.tables[t];
            if table
                .actions
                .iter()
                .any(|&a| p.actions[a].ops.iter().any(&pick))
            {
                out.push(format!("{} ({})", table.name, thread.name()));
            }
        }
    }
    out
}

/// The highest queue id the program's `set_qid` primitives can produce.
fn highest_qid(p: &Checked) -> Option<QidUse> {
    let mut best: Option<QidUse> = None;
    let mut consider = |highest: u32, from: String| {
        let highest = highest.min(127);
        if best.as_ref().is_none_or(|b| highest > b.highest) {
            best = Some(QidUse { highest, from });
        }
    };
    for table in &p.tables {
        for &a in &table.actions {
            let action = &p.actions[a];
            for op in &action.ops {
                let Op::SetQid(v) = op else { continue };
                match *v {
                    Value::Const(c) => {
                        consider(c, format!("a constant in action `{}`", action.name))
                    }
                    Value::Field(f) => consider(
                        ((1u64 << f.bits) - 1) as u32,
                        format!("the width of a field, in action `{}`", action.name),
                    ),
                    Value::Param(i) => {
                        // The control plane's entries say which queues are used; without
                        // entries only the parameter's width bounds it.
                        let used = table
                            .entry_calls()
                            .chain(std::iter::once(&table.default))
                            .filter(|c| c.action == a)
                            .map(|c| c.args[i])
                            .max();
                        match used {
                            Some(q) => consider(
                                q,
                                format!("the entries of table `{}`", table.name),
                            ),
                            None => consider(
                                ((1u64 << action.param_bits[i]) - 1) as u32,
                                format!(
                                    "the width of parameter {i} of action `{}` (table `{}` has no entries)",
                                    action.name, table.name
                                ),
                            ),
                        }
                    }
                }
            }
        }
    }
    best
}

impl Headroom {
    pub fn new(p: &Checked, params: &Tofino2Params) -> Headroom {
        let clock = params.clock_hz;
        let front = params.front_panel_bps_per_pipe();
        let recirc = params.recirculation_bps_per_pipe();
        // Line rate needs front / (8 x wire bytes) <= clock.
        let min_wire = (front as u128).div_ceil(8 * clock as u128) as u64;
        let rates = FRAME_SIZES
            .iter()
            .map(|&frame| {
                let wire_bits = (frame as u64 + PREAMBLE_AND_IFG_BYTES) * 8;
                let offered = front as f64 / wire_bits as f64;
                let slots = clock as f64;
                let by_bandwidth = recirc as f64 / front as f64;
                let by_slots = (slots / offered - 1.0).max(0.0);
                RateRow {
                    frame_bytes: frame,
                    offered_pps: offered.round(),
                    slot_use_percent: round1(offered * 100.0 / slots),
                    forwarded_percent: round1((slots / offered).min(1.0) * 100.0),
                    recirculate_once_percent: round1(by_bandwidth.min(by_slots) * 100.0),
                }
            })
            .collect();
        let qid = highest_qid(p);
        let needed = qid.as_ref().map_or(1, |q| q.highest + 1);
        let lane_bps = params.mac_bps / params.channels_per_mac as u64;
        let ports = (0..)
            .map(|k| 1u32 << k)
            .take_while(|&c| c <= params.channels_per_mac)
            .map(|channels| {
                let max_queues =
                    params.tm.queues_per_port_group * channels / params.channels_per_mac;
                PortQueues {
                    speed_gbps: lane_bps * channels as u64 / 1_000_000_000,
                    channels,
                    max_queues,
                    fits: needed <= max_queues,
                }
            })
            .collect();
        Headroom {
            pipe_packets_per_second: clock,
            front_panel_bps_per_pipe: front,
            recirculation_bps_per_pipe: recirc,
            line_rate_min_frame_bytes: min_wire.saturating_sub(PREAMBLE_AND_IFG_BYTES),
            rates,
            recirculating_tables: tables_with(p, |op| matches!(op, Op::Recirculate)),
            mirroring_tables: tables_with(p, |op| matches!(op, Op::Mirror(_))),
            qid,
            ports,
            overhead: p.overhead.map(|o| OverheadBudget::new(o, params)),
        }
    }
}

impl fmt::Display for Headroom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "packet rate      per pipe: {} Mpkt/s of ingress slots (one per cycle) against {} Gb/s of ports; line rate on every port needs frames of {} B or more",
            self.pipe_packets_per_second / 1_000_000,
            self.front_panel_bps_per_pipe / 1_000_000_000,
            self.line_rate_min_frame_bytes
        );
        let _ = writeln!(
            s,
            "  frame B  offered Mpkt/s  slots used %  forwarded %  may recirculate once %"
        );
        for r in &self.rates {
            let _ = writeln!(
                s,
                "  {:>7}  {:>14.1}  {:>12.1}  {:>11.1}  {:>22.1}",
                r.frame_bytes,
                r.offered_pps / 1e6,
                r.slot_use_percent,
                r.forwarded_percent,
                r.recirculate_once_percent
            );
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        let _ = writeln!(
            s,
            "recirculation    {} Gb/s per pipe; tables that recirculate: {}",
            self.recirculation_bps_per_pipe / 1_000_000_000,
            list(&self.recirculating_tables)
        );
        let _ = writeln!(
            s,
            "mirroring        tables that mirror: {}",
            list(&self.mirroring_tables)
        );
        if let Some(b) = &self.overhead {
            let _ = writeln!(
                s,
                "overhead         per data packet of D bytes: recirculates {} B, mirrors {} B; line rate on every port needs D >= {} B ({} binds)",
                b.recirculated_bytes, b.mirrored_bytes, b.min_frame_bytes, b.binding
            );
            for r in &b.rows {
                let _ = writeln!(
                    s,
                    "  {:<18} {} -> D >= {} B",
                    r.limit, r.arithmetic, r.min_frame_bytes
                );
            }
        }
        match &self.qid {
            None => {
                let _ = writeln!(s, "queues           the program sets no queue id (queue 0)");
            }
            Some(q) => {
                let fits: Vec<String> = self
                    .ports
                    .iter()
                    .map(|p| {
                        format!(
                            "{}G {}{}",
                            p.speed_gbps,
                            p.max_queues,
                            if p.fits { "" } else { " (too few)" }
                        )
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    "queues           highest queue id {} (from {}): needs {} queues per port; a port's most by speed: {}",
                    q.highest,
                    q.from,
                    q.highest + 1,
                    fits.join(", ")
                );
            }
        }
        f.write_str(&s)
    }
}

/// The whole feasibility report of `program` under `params`: its placement on the stages
/// (with chip totals) and its traffic headroom. `t2sim report` prints it; a scheme's
/// [`crate::schemes::Fit`] is read from it.
pub fn feasibility(
    program: &t2_pipeline::ir::Program,
    params: &Tofino2Params,
) -> Result<(t2_pipeline::report::Report, Headroom), t2_pipeline::check::IrError> {
    use t2_pipeline::place::{place, Budget};
    let checked = t2_pipeline::check::check_with(program, &params.pipeline.phv)?;
    let budget = Budget {
        stages: params.pipeline.stages as usize,
        ..Budget::tofino2()
    };
    let placed = place(&checked, &budget);
    let report = t2_pipeline::report::Report::new(
        &checked,
        &placed,
        &budget,
        &params.pipeline,
        params.clock_hz,
    )
    .with_pipes(params.pipes);
    Ok((report, Headroom::new(&checked, params)))
}
