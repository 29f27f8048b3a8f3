//! The incast scenario: N hosts send UDP at a fixed rate through one chip to one receiver.
//!
//! With its defaults (4 senders at 100 Gb/s line rate, 1500 B frames, 100 ns links, 100 us)
//! it is what `t2sim run` runs with no arguments. Port 0 (pipe 0, MAC 0) faces the receiver;
//! senders are spread over the pipes round-robin so that traffic crosses the TM between pipes.

use super::WaveRequest;
use crate::capture::{CaptureFile, PcapRequest, ReplayRequest};
use crate::chip::params::Tofino2Params;
use crate::chip::{port_channels, Chip, ChipConfig, PortSpec};
use std::fmt;
use std::net::Ipv4Addr;
use t2_clock::{Clock, Cycle, LineRate};
use t2_pipeline::headers::MacAddr;
use t2_pipeline::ir::Program;
use t2_testbench::{Host, Network, NodeId, Stepping, UdpFlow};

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncastScenario {
    pub params: Tofino2Params,
    /// Hosts sending to the one receiver.
    pub senders: u32,
    /// Speed of every port and NIC, b/s.
    pub port_bps: u64,
    /// Each sender's rate as a percentage of `port_bps` (1..=100).
    pub load_percent: u32,
    /// Frame length with FCS.
    pub frame_bytes: u32,
    /// Cycles the senders send and the simulation runs.
    pub duration_cycles: Cycle,
    /// Propagation delay of every link, ns.
    pub link_delay_ns: u64,
    pub stepping: Stepping,
    /// A waveform to write, if any.
    pub waves: Option<WaveRequest>,
    /// A program for the chip instead of the built-in forwarding (its `ipv4_host` table gets
    /// the host routes).
    pub program: Option<Program>,
    /// Packet captures to write (`crate::capture`), if any.
    pub pcap: Option<PcapRequest>,
    /// A capture to replay into a node's port, if any.
    pub replay: Option<ReplayRequest>,
}

impl Default for IncastScenario {
    fn default() -> IncastScenario {
        let params = Tofino2Params::default();
        IncastScenario {
            senders: 4,
            port_bps: 100_000_000_000,
            load_percent: 100,
            frame_bytes: 1500,
            duration_cycles: params.clock().ns_to_cycles_ceil(100_000),
            link_delay_ns: 100,
            stepping: Stepping::Jump,
            waves: None,
            program: None,
            pcap: None,
            replay: None,
            params,
        }
    }
}

/// A scenario that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

/// A built scenario: the network and where its parts are.
pub struct Built {
    pub net: Network,
    pub chip: NodeId,
    pub receiver: NodeId,
    pub senders: Vec<NodeId>,
    pub link_delay_cycles: Cycle,
}

/// Where every packet a run offered is, each counted where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Census {
    /// Frames the senders sent.
    pub offered: u64,
    /// Frames the receiver got (stamped or not).
    pub delivered: u64,
    /// Frames that came back to a sender (a program sent them back, as PABO's bounce does).
    pub returned: u64,
    /// Frames the chip dropped, all causes.
    pub dropped: u64,
    /// Frames inside the chip (FIFOs, pipelines, wires, queues, MACs).
    pub in_chip: u64,
    /// Frames on links.
    pub on_links: u64,
}

impl Census {
    /// Delivered + dropped + inside + on links: equal to `offered` when nothing is lost.
    pub fn accounted(&self) -> u64 {
        self.delivered + self.returned + self.dropped + self.in_chip + self.on_links
    }
}

impl Built {
    /// Counts where the offered packets are now.
    pub fn census(&self) -> Census {
        let rx = self.net.node::<Host>(self.receiver);
        let chip = self.net.node::<Chip>(self.chip);
        Census {
            offered: self
                .senders
                .iter()
                .map(|&h| self.net.node::<Host>(h).sent())
                .sum(),
            delivered: rx.latencies().count() + rx.foreign(),
            returned: self
                .senders
                .iter()
                .map(|&h| {
                    let s = self.net.node::<Host>(h);
                    s.latencies().count() + s.foreign()
                })
                .sum(),
            dropped: chip.counters().dropped(),
            in_chip: chip.packets_inside(),
            on_links: self.net.frames_on_links() as u64,
        }
    }
}

fn host_mac(i: u32) -> MacAddr {
    let b = i.to_be_bytes();
    MacAddr([0x02, 0x00, b[0], b[1], b[2], b[3]])
}

/// Address of sender `i` (from 0): 10.0.0.1 onwards.
pub fn sender_ip(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, 0, 1)) + i)
}

/// Address of the receiver.
pub const RECEIVER_IP: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);

impl IncastScenario {
    /// Where the ports sit: the receiver's first (pipe 0, MAC 0, channel 0), then each
    /// sender's, spread over the pipes round-robin (sender `i` on pipe `i % pipes`, after the
    /// receiver on pipe 0). Senders that find their pipe full take the first free slot of
    /// another pipe, so every slot of the chip can be used. `None` if the chip has no room.
    fn ports(&self, channels: u32) -> Option<Vec<PortSpec>> {
        let p = &self.params;
        let per_mac = p.channels_per_mac / channels;
        let per_pipe = per_mac * p.macs_per_pipe;
        let room = (per_pipe as u64) * (p.pipes as u64);
        if self.senders as u64 + 1 > room {
            return None;
        }
        let spec = |pipe: u32, slot: u32| PortSpec {
            pipe,
            mac: slot / per_mac,
            channel: (slot % per_mac) * channels,
            bps: self.port_bps,
        };
        let mut used = vec![vec![false; per_pipe as usize]; p.pipes as usize];
        used[0][0] = true;
        let mut ports = vec![spec(0, 0)];
        for i in 0..self.senders {
            let pipe = i % p.pipes;
            // Pipe 0's first port is the receiver's.
            let slot = i / p.pipes + u32::from(pipe == 0);
            let (pipe, slot) = if slot < per_pipe && !used[pipe as usize][slot as usize] {
                (pipe, slot)
            } else {
                (0..p.pipes)
                    .flat_map(|q| (0..per_pipe).map(move |s| (q, s)))
                    .find(|&(q, s)| !used[q as usize][s as usize])?
            };
            used[pipe as usize][slot as usize] = true;
            ports.push(spec(pipe, slot));
        }
        Some(ports)
    }

    /// Ports of the chip at this speed.
    fn room(&self, channels: u32) -> u64 {
        let p = &self.params;
        (p.channels_per_mac / channels) as u64 * p.macs_per_pipe as u64 * p.pipes as u64
    }

    /// Builds the chip, the hosts and the links.
    pub fn build(&self) -> Result<Built, ScenarioError> {
        let err = |s: String| Err(ScenarioError(s));
        if self.senders == 0 {
            return err("senders: need at least 1".into());
        }
        if !(1..=100).contains(&self.load_percent) {
            return err(format!("load: {}% is outside 1..=100", self.load_percent));
        }
        if self.duration_cycles == 0 {
            return err("duration: must be above 0".into());
        }
        let max_delay = crate::scenario::topology::MAX_LINK_DELAY_NS;
        if !(1..=max_delay).contains(&self.link_delay_ns) {
            return err(format!(
                "link delay: {} ns is outside 1..={max_delay} (1 s)",
                self.link_delay_ns
            ));
        }
        self.params
            .validate()
            .map_err(|e| ScenarioError(e.to_string()))?;
        let channels = match port_channels(self.port_bps) {
            Ok(channels) => channels,
            Err(e) => return err(format!("port speed: {e}")),
        };
        let clock = self.params.clock();
        let Some(ports) = self.ports(channels) else {
            return err(format!(
                "senders: {} senders and the receiver need {} ports of {} b/s; the chip has room for {}",
                self.senders,
                self.senders as u64 + 1,
                self.port_bps,
                self.room(channels)
            ));
        };
        let mut routes = vec![(RECEIVER_IP, 0)];
        routes.extend((0..self.senders).map(|i| (sender_ip(i), i as usize + 1)));
        let config = ChipConfig {
            params: self.params,
            ports,
            routes,
            program: self.program.clone(),
        };
        let chip = Chip::new("chip", &config).map_err(|e| ScenarioError(e.to_string()))?;
        let mut net = Network::new(self.stepping);
        let chip = net.add(chip);
        let delay = clock.propagation_cycles(self.link_delay_ns);
        let receiver = net.add(Host::new(
            "receiver",
            host_mac(0xffff),
            RECEIVER_IP,
            clock,
            self.port_bps,
        ));
        let link = |net: &mut Network, host, port| {
            net.link(host, 0, chip, port, delay)
                .map_err(|e| ScenarioError(e.to_string()))
        };
        link(&mut net, receiver, 0)?;
        let mut senders = Vec::new();
        for i in 0..self.senders {
            let mut h = Host::new(
                &format!("sender{i}"),
                host_mac(i),
                sender_ip(i),
                clock,
                self.port_bps,
            );
            h.send(
                clock,
                UdpFlow {
                    flow_id: i,
                    dst_ip: RECEIVER_IP,
                    dst_mac: host_mac(0xffff),
                    src_port: 10_000 + (i % 50_000) as u16,
                    dst_port: 9000,
                    frame_bytes: self.frame_bytes,
                    rate_bps: self.port_bps / 100 * self.load_percent as u64,
                    start: 0,
                    end: Some(self.duration_cycles),
                    packets: None,
                },
            )
            .map_err(|e| ScenarioError(e.to_string()))?;
            let id = net.add(h);
            link(&mut net, id, i as usize + 1)?;
            senders.push(id);
        }
        Ok(Built {
            net,
            chip,
            receiver,
            senders,
            link_delay_cycles: delay,
        })
    }

    /// Builds and runs the scenario to its end and summarizes what happened. With a wave
    /// request, writes the VCD dump and its GTKWave save file.
    pub fn run(&self) -> Result<RunSummary, ScenarioError> {
        let mut b = self.build()?;
        // The summary needs counts and the latency histogram only: memory stays flat.
        b.net.node_mut::<Host>(b.receiver).keep_receptions(false);
        if let Some(w) = &self.waves {
            w.start(b.net.node_mut::<Chip>(b.chip))
                .map_err(ScenarioError)?;
        }
        let clock = self.params.clock();
        let replayed = match &self.replay {
            Some(r) => Some(r.inject(&mut b.net, clock).map_err(ScenarioError)?),
            None => None,
        };
        let capturing = match &self.pcap {
            Some(p) => Some(p.start(&mut b.net, clock).map_err(ScenarioError)?),
            None => None,
        };
        crate::scenario::progress::run_until(&mut b.net, clock, self.duration_cycles);
        let mut summary = RunSummary::of(self, &b);
        summary.replayed = replayed;
        if let Some(c) = capturing {
            summary.pcap_files = c.finish(&mut b.net).map_err(ScenarioError)?;
        }
        if let Some(w) = &self.waves {
            let chip = b.net.node_mut::<Chip>(b.chip);
            let n = w
                .finish(chip, self.duration_cycles, self.params.clock_hz)
                .map_err(ScenarioError)?;
            summary.traced_signals = Some(n);
        }
        Ok(summary)
    }
}

/// Minimum, median and maximum of a set of cycle counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spread {
    pub min: Cycle,
    pub median: Cycle,
    pub max: Cycle,
}

impl Spread {
    /// Lower median for an even count. `None` for no values.
    pub fn of(mut v: Vec<Cycle>) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        Some(Spread {
            min: v[0],
            median: v[(v.len() - 1) / 2],
            max: v[v.len() - 1],
        })
    }
}

/// What a run did. Everything here is simulated, hence deterministic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    pub clock: Clock,
    pub scenario: IncastScenario,
    pub simulated_cycles: Cycle,
    pub offered: u64,
    /// Frames that reached the receiver, `foreign` ones included.
    pub delivered: u64,
    /// Delivered frames the receiver could not read as a sender's (e.g. a program added a
    /// VLAN tag); they have no latency.
    pub foreign: u64,
    /// Frames that came back to a sender instead (a program sent them back, as PABO does).
    pub returned: u64,
    pub drops: Vec<(String, u64)>,
    pub in_chip: u64,
    pub on_links: u64,
    /// Frames the receiver's line could carry in the run.
    pub line_capacity: u64,
    /// Port-to-port latency (last bit in to last bit out), from the receiver's bounded
    /// histogram: min and max exact, the median exact below 131,072 cycles of latency and
    /// within 1/1024 of itself above (`t2_testbench::metrics::CycleHistogram`).
    pub latency: Option<Spread>,
    /// Unloaded port-to-port latency from the formula in `docs/timing.md`.
    pub unloaded_latency: Cycle,
    pub peak_queue_cells: u32,
    pub visited_cycles: u64,
    /// Signals written to the waveform, when one was asked for.
    pub traced_signals: Option<usize>,
    /// Capture files written.
    pub pcap_files: Vec<CaptureFile>,
    /// Frames replayed from a capture.
    pub replayed: Option<usize>,
    /// The digests the chip's program sent the control plane, oldest first, and the
    /// program's digests (name, field names) they refer to.
    pub digests: Vec<crate::chip::DigestRecord>,
    pub digest_names: Vec<(String, Vec<String>)>,
}

impl RunSummary {
    pub fn of(s: &IncastScenario, b: &Built) -> RunSummary {
        let chip = b.net.node::<Chip>(b.chip);
        let receiver = b.net.node::<Host>(b.receiver);
        // Port-to-port: the latency less both links' propagation.
        let h = receiver.latencies();
        let links = 2 * b.link_delay_cycles;
        let latency = h.count().checked_sub(1).map(|last| Spread {
            min: h.nth(0).expect("a value") - links,
            median: h.nth(last / 2).expect("a value") - links,
            max: h.nth(last).expect("a value") - links,
        });
        let line = LineRate::new(s.params.clock(), s.port_bps);
        let ticks = b.net.now() * line.ticks_per_cycle();
        let census = b.census();
        RunSummary {
            clock: s.params.clock(),
            scenario: s.clone(),
            simulated_cycles: b.net.now(),
            offered: b
                .senders
                .iter()
                .map(|&h| b.net.node::<Host>(h).sent())
                .sum(),
            delivered: census.delivered,
            foreign: receiver.foreign(),
            returned: census.returned,
            drops: chip
                .counters()
                .drops
                .iter()
                .map(|(c, n)| (c.to_string(), *n))
                .collect(),
            in_chip: census.in_chip,
            on_links: census.on_links,
            line_capacity: ticks / line.serialization_ticks(s.frame_bytes as u64),
            latency,
            unloaded_latency: chip.unloaded_latency(s.frame_bytes as u64, 0),
            peak_queue_cells: chip.tm().port_stats(0).peak_cells,
            visited_cycles: b.net.visited_cycles(),
            traced_signals: None,
            pcap_files: Vec::new(),
            replayed: None,
            digests: chip.digests().to_vec(),
            digest_names: chip.digest_names(),
        }
    }

    pub fn dropped(&self) -> u64 {
        self.drops.iter().map(|(_, n)| n).sum()
    }

    /// Offered and replayed frames that are neither delivered, returned (taken in by a
    /// sender: bounced back, or replayed into one), dropped, in the chip nor on a link: 0
    /// when the summary adds up (a frame the chip copies, e.g. a mirror, makes it negative).
    pub fn unaccounted(&self) -> i128 {
        (self.offered + self.replayed.unwrap_or(0) as u64) as i128
            - (self.delivered + self.returned + self.dropped() + self.in_chip + self.on_links)
                as i128
    }
}

impl fmt::Display for RunSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.scenario;
        let c = self.clock;
        let rate = |bps: u64| {
            let mut t = String::new();
            t2_clock::write_rate(&mut t, bps).expect("writing to a String");
            t
        };
        writeln!(
            f,
            "t2sim: incast, {} senders at {}% of {} -> 1 receiver at {}, {} B frames",
            s.senders,
            s.load_percent,
            rate(s.port_bps),
            rate(s.port_bps),
            s.frame_bytes
        )?;
        writeln!(
            f,
            "simulated        {} cycles = {} ns at {} MHz",
            self.simulated_cycles,
            c.format_ns(self.simulated_cycles),
            c.hz / 1_000_000
        )?;
        writeln!(f, "offered          {} packets", self.offered)?;
        writeln!(
            f,
            "delivered        {} packets (the receiver's line could carry {} in this time)",
            self.delivered, self.line_capacity
        )?;
        if self.foreign > 0 {
            writeln!(
                f,
                "  not readable   {} of them (not a sender's UDP frame, e.g. tagged by the program: no latency)",
                self.foreign
            )?;
        }
        if self.returned > 0 {
            writeln!(
                f,
                "returned         {} packets reached senders (sent back by the program, e.g. bounced, or replayed into one)",
                self.returned
            )?;
        }
        writeln!(f, "dropped          {} packets", self.dropped())?;
        for (cause, n) in &self.drops {
            writeln!(f, "  {cause:<22} {n}")?;
        }
        writeln!(
            f,
            "still inside     {} in the chip, {} on links",
            self.in_chip, self.on_links
        )?;
        match self.latency {
            Some(l) => writeln!(
                f,
                "port-to-port     min {} / median {} / max {} cycles = {} / {} / {} ns",
                l.min,
                l.median,
                l.max,
                c.format_ns(l.min),
                c.format_ns(l.median),
                c.format_ns(l.max)
            )?,
            None => writeln!(f, "port-to-port     no packet delivered")?,
        }
        writeln!(
            f,
            "  unloaded       {} cycles = {} ns (docs/timing.md)",
            self.unloaded_latency,
            c.format_ns(self.unloaded_latency)
        )?;
        writeln!(
            f,
            "peak queue       {} cells of {} B at the receiver's port",
            self.peak_queue_cells, s.params.tm.cell_bytes
        )?;
        writeln!(
            f,
            "kernel           visited {} of {} cycles",
            self.visited_cycles,
            self.simulated_cycles + 1
        )?;
        if let (Some(n), Some(w)) = (self.traced_signals, &s.waves) {
            writeln!(
                f,
                "waves            {} signals in {} (GTKWave: {})",
                n,
                w.vcd.display(),
                w.gtkw().display()
            )?;
        }
        if let (Some(n), Some(r)) = (self.replayed, &s.replay) {
            writeln!(
                f,
                "replayed         {n} frames from {} into {}:{}",
                r.file.display(),
                r.node,
                r.port
            )?;
            // Replayed frames go where offered ones do (a sender takes in those replayed
            // into it: `returned`), so the sum is shown with them in it.
            writeln!(
                f,
                "  census         {} offered + {n} replayed = {} delivered + {} returned + {} \
                 dropped + {} in the chip + {} on links ({} unaccounted)",
                self.offered,
                self.delivered,
                self.returned,
                self.dropped(),
                self.in_chip,
                self.on_links,
                self.unaccounted()
            )?;
        }
        for p in &self.pcap_files {
            writeln!(
                f,
                "pcap             {} frames in {}",
                p.frames,
                p.path.display()
            )?;
        }
        Ok(())
    }
}
