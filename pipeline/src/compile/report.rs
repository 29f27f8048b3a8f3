//! The feasibility report of a placed program: per-stage resource use against Tofino2's
//! budgets, per-table allocation, stage timing and latency per gress, the parser (states,
//! TCAM rows, extractors, headers and their containers), PHV use and the verdict.
//! Text for people ([`Report`]'s `Display`), JSON for tools (serde).

use crate::compile::place::{
    Allocation, Budget, NoFit, Placed, Resource, RESOURCES, SRAM_BITS, SRAM_WORDS,
};
use crate::hw::fields;
use crate::hw::params::PipelineParams;
use crate::hw::parser::{self, Graph};
use crate::hw::phv::Container;
use crate::hw::stage::{Dependency, Placement};
use crate::program::check::{Checked, Thread};
use serde::Serialize;
use std::fmt::{self, Write as _};

/// Used / available of one resource.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Amount {
    pub resource: &'static str,
    pub used: u32,
    pub available: u32,
    pub percent: f64,
}

fn amount(resource: &'static str, used: u32, available: u32) -> Amount {
    let percent = if available == 0 {
        0.0
    } else {
        (used as f64 * 1000.0 / available as f64).round() / 10.0
    };
    Amount {
        resource,
        used,
        available,
        percent,
    }
}

/// One stage.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageReport {
    pub stage: usize,
    /// How the stage depends on the previous one, per gress (`match` or `action`).
    pub ingress_dependency: Dependency,
    pub egress_dependency: Dependency,
    pub units: Vec<String>,
    pub resources: Vec<Amount>,
}

/// Stage timing and latency of one gress.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GressLatency {
    pub gress: &'static str,
    pub stage_cycles: Vec<u32>,
    /// Stages that cost a full pipeline length (stage 0 and match-dependent ones).
    pub match_dependent_stages: Vec<usize>,
    /// The longest chain of match and action dependencies, as `unit@stage`.
    pub critical_path: Vec<String>,
    pub mau_cycles: u32,
    pub parser_cycles: u32,
    pub deparser_cycles: u32,
    pub total_cycles: u32,
    pub total_ns: f64,
}

/// PHV containers in use.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhvUse {
    /// Normal containers used / available, per width 8, 16, 32.
    pub normal: Vec<Amount>,
    /// Dark 8-bit containers holding gateway outcomes and split tables' hit bits.
    pub gateway_dark_8: Amount,
    /// Program metadata and its containers.
    pub metadata: Vec<(String, String)>,
}

/// One parser state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParserStateUse {
    pub name: String,
    pub extracts: Vec<String>,
    pub tcam_rows: u32,
    pub extractors: u32,
}

/// One header the parser extracts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeaderUse {
    pub name: String,
    pub bytes: u32,
    /// A built-in header in the fixed containers of `layout.rs`.
    pub builtin: bool,
    /// Its containers, as `<width>-bit #<index>` with the header bytes each holds.
    pub containers: Vec<String>,
    pub valid: String,
}

/// The parser: states and headers against the limits of one Tofino2 parser.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParserUse {
    pub states: Vec<ParserStateUse>,
    pub tcam_rows: Amount,
    /// The state with the most 16-bit extractors (the first of equals) and their use.
    pub worst_state: String,
    pub worst_state_extractors: Amount,
    /// Bytes of all the headers the graph extracts.
    pub header_bytes: u32,
    /// In deparse (wire) order.
    pub headers: Vec<HeaderUse>,
    /// Normal containers the program's own headers take (data and valid bits), per width
    /// 8, 16, 32; built-in headers sit in their fixed ones.
    pub header_containers: [u32; 3],
}

fn container_name(c: Container) -> String {
    format!("{}-bit #{}", c.bytes() * 8, c.index)
}

impl ParserUse {
    fn new(g: &Graph) -> ParserUse {
        let states: Vec<ParserStateUse> = g
            .states
            .iter()
            .enumerate()
            .map(|(s, st)| ParserStateUse {
                name: st.name.clone(),
                extracts: st
                    .extracts
                    .iter()
                    .map(|&h| g.headers[h].name.clone())
                    .collect(),
                tcam_rows: g.state_tcam_rows(s),
                extractors: g.state_extractors(s),
            })
            .collect();
        let worst = states.iter().fold(
            &states[0],
            |w, s| if s.extractors > w.extractors { s } else { w },
        );
        let mut own: Vec<Container> = Vec::new();
        // In wire order: the order the deparser emits them.
        let headers = g
            .deparse_order
            .iter()
            .map(|&h| {
                let h = &g.headers[h];
                let builtin = parser::builtin_layout(&h.name).is_some();
                let containers = h.extracts.iter().map(|e| {
                    format!(
                        "{} bytes {}..{}",
                        container_name(e.container),
                        e.offset,
                        e.offset + e.len
                    )
                });
                if !builtin {
                    for c in h
                        .extracts
                        .iter()
                        .map(|e| e.container)
                        .chain([h.valid.container])
                    {
                        if !own.contains(&c) {
                            own.push(c);
                        }
                    }
                }
                HeaderUse {
                    name: h.name.clone(),
                    bytes: h.bytes as u32,
                    builtin,
                    containers: containers.collect(),
                    valid: format!(
                        "{} bit {}",
                        container_name(h.valid.container),
                        h.valid.shift
                    ),
                }
            })
            .collect();
        let mut header_containers = [0; 3];
        for c in own {
            header_containers[crate::hw::fields::width_index(c.width)] += 1;
        }
        ParserUse {
            tcam_rows: amount(
                "parser_tcam_rows",
                states.iter().map(|s| s.tcam_rows).sum(),
                parser::TCAM_ROWS,
            ),
            worst_state: worst.name.clone(),
            worst_state_extractors: amount(
                "parser_extractors",
                worst.extractors,
                parser::EXTRACTORS_PER_STATE,
            ),
            header_bytes: g.headers.iter().map(|h| h.bytes as u32).sum(),
            headers,
            header_containers,
            states,
        }
    }
}

/// Register memory against the pipe's SRAM.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatefulUse {
    pub register_arrays: usize,
    pub register_bits: u64,
    /// Data RAMs of register arrays / all SRAMs of the pipe's stages. Counted from the
    /// arrays the program's tables use, so a program that does not fit still shows them.
    pub rams: Amount,
    /// Map RAMs the arrays need (one per data RAM and one per array's spare RAM) / all map
    /// RAMs of the pipe's stages.
    pub map_rams: Amount,
}

/// The chip: every pipe runs the program, so each figure is the pipe's times the pipes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChipUse {
    pub pipes: u32,
    pub sram: Amount,
    pub map_ram: Amount,
    /// Register data RAMs against the SRAM of the whole chip.
    pub stateful_rams: Amount,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub program: String,
    pub fits: bool,
    pub failure: Option<NoFit>,
    pub stages: Vec<StageReport>,
    /// Use over all stages against all stages' budgets, with the mean per stage.
    pub totals: Vec<Amount>,
    pub tables: Vec<Allocation>,
    pub latency: Vec<GressLatency>,
    pub parser: ParserUse,
    pub phv: PhvUse,
    pub stateful: StatefulUse,
    /// Chip-wide totals, once [`Report::with_pipes`] says how many pipes run the program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chip: Option<ChipUse>,
}

/// A unit's name, with `[part/parts]` for a part of a table split over stages.
fn unit_label(a: &Allocation) -> String {
    if a.parts > 1 {
        format!("{}[{}/{}]", a.name, a.part, a.parts)
    } else {
        a.name.clone()
    }
}

/// The longest chain of units of `thread` linked by dependencies that need a later stage.
fn critical_path(p: &Checked, placed: &Placed, thread: Thread) -> Vec<String> {
    let k = thread.index();
    let units = &p.flat[k];
    // (chain length, previous unit) ending at each unit.
    let mut best: Vec<(usize, Option<usize>)> = vec![(0, None); units.len()];
    for i in 0..units.len() {
        if placed.stage_of[k][i].is_none() {
            continue;
        }
        best[i] = (1, None);
        for d in placed.deps[k].iter().filter(|d| d.to == i) {
            if d.kind.needs_later_stage() && best[d.from].0 + 1 > best[i].0 {
                best[i] = (best[d.from].0 + 1, Some(d.from));
            }
        }
    }
    let Some(mut at) = (0..units.len()).rev().max_by_key(|&i| best[i].0) else {
        return Vec::new();
    };
    if best[at].0 == 0 {
        return Vec::new();
    }
    let mut path = Vec::new();
    loop {
        let stage = placed.stage_of[k][at].expect("placed");
        path.push(format!("{}@{stage}", p.unit_name(units[at].unit)));
        match best[at].1 {
            Some(prev) => at = prev,
            None => break,
        }
    }
    path.reverse();
    path
}

fn latency(
    gress: &'static str,
    t: &Placement,
    critical_path: Vec<String>,
    params: &PipelineParams,
    clock_hz: u64,
) -> GressLatency {
    let lat = &params.stage_latency;
    let mau = t.mau_cycles(lat);
    let total = params.parser_cycles + mau + params.deparser_cycles;
    GressLatency {
        gress,
        stage_cycles: t.stage_cycles(lat),
        match_dependent_stages: (0..t.stages.len())
            .filter(|&k| k == 0 || t.stages[k].dependency == Dependency::Match)
            .collect(),
        critical_path,
        mau_cycles: mau,
        parser_cycles: params.parser_cycles,
        deparser_cycles: params.deparser_cycles,
        total_cycles: total,
        total_ns: (total as f64 * 1e9 / clock_hz as f64 * 1000.0).round() / 1000.0,
    }
}

impl Report {
    pub fn new(
        p: &Checked,
        placed: &Placed,
        budget: &Budget,
        params: &PipelineParams,
        clock_hz: u64,
    ) -> Report {
        let stages = (0..budget.stages)
            .map(|s| StageReport {
                stage: s,
                ingress_dependency: placed.ingress_timing.stages[s].dependency,
                egress_dependency: placed.egress_timing.stages[s].dependency,
                units: placed
                    .units
                    .iter()
                    .filter(|u| u.allocation.stage == s)
                    .map(|u| unit_label(&u.allocation))
                    .collect(),
                resources: Resource::ALL
                    .iter()
                    .map(|&r| {
                        amount(
                            r.name(),
                            placed.stage_usage[s].get(r),
                            budget.per_stage.get(r),
                        )
                    })
                    .collect(),
            })
            .collect();
        let totals = Resource::ALL
            .iter()
            .map(|&r| {
                let used = placed.stage_usage.iter().map(|u| u.get(r)).sum();
                amount(
                    r.name(),
                    used,
                    budget.per_stage.get(r) * budget.stages as u32,
                )
            })
            .collect();
        let widths = ["normal_8", "normal_16", "normal_32"];
        let phv = PhvUse {
            normal: (0..3)
                .map(|w| {
                    amount(
                        widths[w],
                        p.phv_normal_used[w] as u32,
                        p.phv.normal[w] as u32,
                    )
                })
                .collect(),
            gateway_dark_8: amount(
                "dark_8",
                fields::gateway_containers(p.gateways.len() + placed.splits.len()) as u32,
                p.phv.dark[0] as u32,
            ),
            metadata: p
                .metadata
                .iter()
                .map(|(n, f)| {
                    let w = f.container.bytes() * 8;
                    (
                        n.clone(),
                        format!(
                            "{w}-bit #{} bits {}..{}",
                            f.container.index,
                            f.shift,
                            f.shift + f.bits
                        ),
                    )
                })
                .collect(),
        };
        // The arrays some table uses, each once (a ghost table shares ingress's), sized as
        // placement sizes them: whether or not placement got to them.
        let used: Vec<usize> = (0..p.registers.len())
            .filter(|&r| p.tables.iter().any(|t| t.registers.contains(&r)))
            .collect();
        let data_rams = |r: usize| {
            let bits = p.registers[r].total_bits();
            u32::try_from(bits.div_ceil((SRAM_WORDS * SRAM_BITS) as u64)).unwrap_or(u32::MAX)
        };
        let register_rams = used
            .iter()
            .fold(0u32, |acc, &r| acc.saturating_add(data_rams(r)));
        let map_rams = used.iter().fold(0u32, |acc, &r| {
            acc.saturating_add(data_rams(r).saturating_add(1))
        });
        let stateful = StatefulUse {
            register_arrays: p.registers.len(),
            register_bits: p.registers.iter().map(|r| r.total_bits()).sum(),
            rams: amount(
                "register_rams",
                register_rams,
                budget.per_stage.get(Resource::Sram) * budget.stages as u32,
            ),
            map_rams: amount(
                "register_map_rams",
                map_rams,
                budget.per_stage.get(Resource::MapRam) * budget.stages as u32,
            ),
        };
        Report {
            program: p.name.clone(),
            fits: placed.fits(),
            failure: placed.failure.clone(),
            stages,
            totals,
            tables: placed.units.iter().map(|u| u.allocation.clone()).collect(),
            latency: vec![
                latency(
                    "ingress",
                    &placed.ingress_timing,
                    critical_path(p, placed, Thread::Ingress),
                    params,
                    clock_hz,
                ),
                latency(
                    "egress",
                    &placed.egress_timing,
                    critical_path(p, placed, Thread::Egress),
                    params,
                    clock_hz,
                ),
            ],
            parser: ParserUse::new(&p.parser),
            phv,
            stateful,
            chip: None,
        }
    }

    /// The report with chip-wide totals for `pipes` pipes, each running the program: SRAM
    /// and map RAM as placed (over all stages of every pipe), and the register arrays' data
    /// RAMs against the chip's SRAM.
    pub fn with_pipes(mut self, pipes: u32) -> Report {
        let total = |r: &str| {
            self.totals
                .iter()
                .find(|a| a.resource == r)
                .map_or((0, 0), |a| (a.used, a.available))
        };
        let times = |(u, a): (u32, u32), name| {
            amount(name, u.saturating_mul(pipes), a.saturating_mul(pipes))
        };
        let st = &self.stateful.rams;
        self.chip = Some(ChipUse {
            pipes,
            sram: times(total("sram"), "sram"),
            map_ram: times(total("map_ram"), "map_ram"),
            stateful_rams: times((st.used, st.available), "register_rams"),
        });
        self
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }
}

/// Short column headings, in `Resource::ALL` order.
const HEADINGS: [&str; RESOURCES] = [
    "sram", "tcam", "map", "salu", "lid", "tern", "gw", "xb_ex", "xb_tn", "hash", "adb", "row_i",
    "row_e",
];

fn dep(d: Dependency) -> &'static str {
    match d {
        Dependency::Match => "M",
        Dependency::Action => "a",
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        let _ = writeln!(s, "program          {}", self.program);
        match &self.failure {
            None => {
                let _ = writeln!(s, "verdict          fits");
            }
            Some(nf) => {
                let _ = writeln!(s, "verdict          DOES NOT FIT: {nf}");
            }
        }
        let _ = writeln!(s);
        let _ = write!(s, "stage  dep(i/e)");
        for h in HEADINGS {
            let _ = write!(s, " {h:>5}");
        }
        let _ = writeln!(s, "  units");
        for st in &self.stages {
            let _ = write!(
                s,
                "{:>5}  {:>4}/{:<3}",
                st.stage,
                dep(st.ingress_dependency),
                dep(st.egress_dependency)
            );
            for a in &st.resources {
                let _ = write!(s, " {:>5}", a.used);
            }
            let _ = writeln!(s, "  {}", st.units.join(" "));
            s.truncate(s.trim_end().len());
            s.push('\n');
        }
        let _ = write!(s, "avail  {:>8}", "");
        for a in &self.stages[0].resources {
            let _ = write!(s, " {:>5}", a.available);
        }
        let _ = writeln!(s);
        let _ = write!(s, "total  {:>8}", "");
        for a in &self.totals {
            let _ = write!(s, " {:>5}", a.used);
        }
        let _ = writeln!(s);
        let _ = write!(s, "%all   {:>8}", "");
        for a in &self.totals {
            let _ = write!(s, " {:>5.1}", a.percent);
        }
        let _ = writeln!(s);
        let _ = write!(s, "peak%  {:>8}", "");
        for k in 0..self.totals.len() {
            let peak = self
                .stages
                .iter()
                .map(|st| st.resources[k].percent)
                .fold(0.0, f64::max);
            let _ = write!(s, " {peak:>5.1}");
        }
        let _ = writeln!(s);
        let n = self.stages.len().max(1) as f64;
        let _ = write!(s, "mean   {:>8}", "");
        for a in &self.totals {
            let _ = write!(s, " {:>5.1}", a.used as f64 / n);
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "(dep: M = match-dependent, a = action-dependent; row_i/row_e = instruction rows of ingress/egress)");
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "table            thread   kind     stage  entries  key  entry/word  ways  match  adata  tind  tcam  regram  selram"
        );
        for t in &self.tables {
            let _ = writeln!(
                s,
                "{:<16} {:<8} {:<8} {:>5} {:>8} {:>4} {:>6}/{:<4} {:>5} {:>6} {:>6} {:>5} {:>5} {:>7} {:>7}",
                unit_label(t),
                t.thread,
                t.kind,
                t.stage,
                t.entries,
                t.key_bits,
                t.entry_bits,
                t.entries_per_word,
                t.ways,
                t.match_rams,
                t.action_data_rams,
                t.ternary_indirection_rams,
                t.tcams,
                t.register_rams,
                t.selector_rams
            );
        }
        let _ = writeln!(s);
        for l in &self.latency {
            let _ = writeln!(
                s,
                "latency {:<8} MAU {} cycles (full-length stages {:?}); parser {} + MAU {} + deparser {} = {} cycles = {:.3} ns",
                l.gress,
                l.mau_cycles,
                l.match_dependent_stages,
                l.parser_cycles,
                l.mau_cycles,
                l.deparser_cycles,
                l.total_cycles,
                l.total_ns
            );
            let _ = writeln!(s, "  stage cycles {:?}", l.stage_cycles);
            if !l.critical_path.is_empty() {
                let _ = writeln!(s, "  critical path {}", l.critical_path.join(" -> "));
            }
        }
        let _ = writeln!(s);
        let pr = &self.parser;
        let _ = writeln!(
            s,
            "parser           {} states; TCAM rows {}/{}; most extractors {}/{} in {}; {} header bytes; program headers in {}/{}/{} containers of 8/16/32 bits",
            pr.states.len(),
            pr.tcam_rows.used,
            pr.tcam_rows.available,
            pr.worst_state_extractors.used,
            pr.worst_state_extractors.available,
            pr.worst_state,
            pr.header_bytes,
            pr.header_containers[0],
            pr.header_containers[1],
            pr.header_containers[2]
        );
        let _ = writeln!(s, "  state                    rows  extractors  extracts");
        for st in &pr.states {
            let _ = writeln!(
                s,
                "  {:<24} {:>4} {:>11}  {}",
                st.name,
                st.tcam_rows,
                st.extractors,
                st.extracts.join(" ")
            );
            s.truncate(s.trim_end().len());
            s.push('\n');
        }
        for h in &pr.headers {
            let _ = writeln!(
                s,
                "  header {:<17} {:>3} B  {}; valid {}{}",
                h.name,
                h.bytes,
                h.containers.join(", "),
                h.valid,
                if h.builtin { " (built-in)" } else { "" }
            );
        }
        let _ = write!(s, "phv              normal containers");
        for (a, w) in self.phv.normal.iter().zip(["8", "16", "32"]) {
            let _ = write!(s, " {w}-bit {}/{}", a.used, a.available);
        }
        let g = &self.phv.gateway_dark_8;
        let _ = writeln!(
            s,
            "; gateway and split-table bits in dark 8-bit {}/{}",
            g.used, g.available
        );
        for (name, at) in &self.phv.metadata {
            let _ = writeln!(s, "  {name:<24} {at}");
        }
        let r = &self.stateful;
        let _ = writeln!(
            s,
            "stateful         {} register arrays, {} bits in {} data RAMs = {:.1}% of the pipe's SRAM",
            r.register_arrays, r.register_bits, r.rams.used, r.rams.percent
        );
        let _ = writeln!(
            s,
            "                 map RAMs {}/{} = {:.1}% of the pipe's (one per data RAM, one per array's spare)",
            r.map_rams.used, r.map_rams.available, r.map_rams.percent
        );
        if let Some(c) = &self.chip {
            let _ = writeln!(
                s,
                "chip             {} pipes: SRAM {}/{} = {:.1}%, map RAM {}/{} = {:.1}%, register data RAMs {}/{} = {:.1}% of the chip's SRAM",
                c.pipes,
                c.sram.used,
                c.sram.available,
                c.sram.percent,
                c.map_ram.used,
                c.map_ram.available,
                c.map_ram.percent,
                c.stateful_rams.used,
                c.stateful_rams.available,
                c.stateful_rams.percent
            );
        }
        f.write_str(&s)
    }
}
