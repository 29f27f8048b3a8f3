//! Running a checked scenario: building the network, stepping it until the flows are done or
//! the time is up, sampling queues, and measuring what happened into [`RunResults`].

use crate::chip::Chip;
use crate::scenario::topology::Topology;
use std::collections::BTreeMap;
use std::path::PathBuf;
use t2_clock::Cycle;
use t2_testbench::metrics::{self, Drops, FlowRecord, Reordering};
use t2_testbench::workload::{self, FlowSpec, HostSet};
use t2_testbench::Rng;

use super::*;

impl ScenarioFile {
    /// Puts the results into `dir` instead of `output.dir` (`--out`), with the VCD dump when
    /// `output.vcd` is relative and the captures when `output.pcap_dir` is not given.
    pub fn set_out_dir(&mut self, dir: PathBuf) {
        if let (Some((w, _)), Some(vcd)) = (self.waves.as_mut(), &self.vcd_as_written) {
            w.vcd = dir.join(vcd);
        }
        if let Some(p) = self.pcap.as_mut().filter(|_| !self.pcap_dir_given) {
            p.dir = dir.clone();
        }
        self.out_dir = Some(dir);
    }

    /// Moves what this run writes while it runs (the VCD dump and its save file, the
    /// captures) into subfolder `name` of where it would go, so that the points of a sweep
    /// each write their own files instead of one file side by side.
    /// The dump's subfolder is made here (the captures make theirs when they start).
    pub fn set_own_folder(&mut self, name: &str) -> Result<(), String> {
        if let Some((w, _)) = self.waves.as_mut() {
            let file = w.vcd.file_name().map(PathBuf::from).unwrap_or_default();
            let dir = w
                .vcd
                .parent()
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(name);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("{}: cannot create the folder: {e}", dir.display()))?;
            w.vcd = dir.join(file);
        }
        if let Some(p) = self.pcap.as_mut() {
            p.dir = p.dir.join(name);
        }
        Ok(())
    }

    /// Builds the network: the topology, with `[queues]` given to every switch port.
    pub fn build(&self) -> Result<Topology, String> {
        let mut topo = self.topology.build()?;
        if let Some(queues) = &self.port_queues {
            for &c in &topo.chips {
                let chip = topo.net.node_mut::<Chip>(c);
                for port in 0..t2_testbench::Node::port_count(chip) {
                    chip.set_port_queues(port, queues)
                        .map_err(|e| format!("queues: {e}"))?;
                }
            }
        }
        if let Some((session, bytes)) = self.recirculation_mirror {
            for &c in &topo.chips {
                let chip = topo.net.node_mut::<Chip>(c);
                let port = chip.recirculation_port(0).ok_or_else(|| {
                    format!(
                        "scheme: mirror session {session} needs a recirculation port, and the \
                         recirculation cap is 0"
                    )
                })?;
                chip.set_mirror_session(
                    session,
                    Some(crate::chip::MirrorSession {
                        port,
                        qid: 0,
                        truncate_bytes: Some(bytes),
                    }),
                )
                .map_err(|e| format!("scheme: mirror session {session}: {e}"))?;
            }
        }
        for (i, &c) in topo.chips.iter().enumerate() {
            let chip = topo.net.node_mut::<Chip>(c);
            // Each switch draws its own random numbers, from the run's seed and its index
            // (crate::chip::stream_seed), so no two switches make correlated decisions.
            chip.seed_random_streams(self.seed, i);
            if let Some(setup) = &self.scheme_chip {
                setup.apply_to(chip)?;
            }
            self.control.apply(chip)?;
        }
        if let Some((w, switch)) = &self.waves {
            let chips = topo.chips.len();
            let &chip = topo.chips.get(*switch).ok_or_else(|| {
                format!(
                    "output.trace_switch: {switch}, but the topology has {chips} switches (0..={})",
                    chips - 1
                )
            })?;
            // A dump inside the output folder: the folder is created first, as for results.
            if let Some(dir) = self.out_dir.as_ref().filter(|d| w.vcd.starts_with(d)) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("{}: cannot create the folder: {e}", dir.display()))?;
            }
            w.start(topo.net.node_mut::<Chip>(chip))?;
        }
        Ok(topo)
    }

    /// The hosts the workload runs on, with the core's capacity (`Shape::core_links`).
    fn host_set(&self, topo: &Topology) -> HostSet {
        HostSet {
            hosts: topo.hosts.len(),
            host_bps: self.topology.link_bps,
            clock: self.topology.params.clock(),
            core_bps: self
                .topology
                .shape
                .core_links()
                .map(|n| n as u64 * self.topology.link_bps),
        }
    }

    /// Builds the network, runs it, and measures.
    pub fn run(&self) -> Result<RunResults, String> {
        self.prepare_inner()
            .and_then(Prepared::run_inner)
            .map_err(|e| self.name_files(e))
    }

    /// `e` with the scenario's file, and the parameter file's when a chip refuses one of
    /// its keys (`tm.ppg_min_cells` is checked against the ports only a built chip has).
    fn name_files(&self, e: String) -> String {
        match &self.params_file {
            Some(p) if names_a_param(&e) => {
                format!("{}: params: {p}: {e}", self.source)
            }
            _ => format!("{}: {e}", self.source),
        }
    }

    /// Builds the network with its flows, ready to run: what [`ScenarioFile::run`] does
    /// before the first cycle (a bench times the run apart from it).
    pub fn prepare(&self) -> Result<Prepared<'_>, String> {
        self.prepare_inner().map_err(|e| self.name_files(e))
    }

    fn prepare_inner(&self) -> Result<Prepared<'_>, String> {
        if self
            .pcap
            .as_ref()
            .is_some_and(|p| p.dir.as_os_str().is_empty())
        {
            return Err(
                "output.pcap: needs output.pcap_dir, output.dir or --out (where the captures go)"
                    .into(),
            );
        }
        let mut topo = self.build()?;
        let clock = self.topology.params.clock();
        let hosts = self.host_set(&topo);
        let flows = self
            .workload
            .generate(hosts, self.duration, &Rng::new(self.seed))
            .map_err(|e| format!("workload: {e}"))?;
        if flows.len() as u64 > MAX_FLOWS {
            return Err(format!(
                "workload: {} flows; a scenario runs at most {MAX_FLOWS}",
                flows.len()
            ));
        }
        if self.pcap.is_none() {
            topo.net.set_threads(self.threads)?;
        }
        topo.add_flows(&flows)?;
        let capturing = match &self.pcap {
            Some(p) => Some(p.start(&mut topo.net, clock)?),
            None => None,
        };
        Ok(Prepared {
            file: self,
            topo,
            flows,
            capturing,
        })
    }
}

/// A scenario's network built, with its flows and captures, not yet run
/// ([`ScenarioFile::prepare`]).
pub struct Prepared<'a> {
    file: &'a ScenarioFile,
    topo: Topology,
    flows: Vec<FlowSpec>,
    capturing: Option<crate::capture::Capturing>,
}

impl Prepared<'_> {
    /// Runs the network until its flows are done or the scenario's time is up, and measures,
    /// as [`ScenarioFile::run`] does after building it.
    pub fn run(self) -> Result<RunResults, String> {
        let source = &self.file.source;
        self.run_inner().map_err(|e| format!("{source}: {e}"))
    }

    fn run_inner(self) -> Result<RunResults, String> {
        let Prepared {
            file: this,
            mut topo,
            flows,
            capturing,
        } = self;
        let clock = this.topology.params.clock();
        let end = this.duration + this.drain;
        // Run in slices so that a run whose flows are all done stops early. Queue samples
        // are taken at k x queue_sample_ns (rounded up to a cycle, so they never drift) on
        // the way; stopping the kernel there changes nothing (it is exact at any stop).
        let slice = clock
            .ns_to_cycles_ceil(crate::scenario::progress::SLICE_NS)
            .max(1);
        let mut progress = crate::scenario::progress::Progress::new(clock, end);
        let mut now = 0;
        let mut samples = Vec::new();
        let mut pauses = Vec::new();
        let mut k = 0u64;
        while now < end {
            let stop = (now + slice).min(end);
            if let Some(ns) = this.queue_sample_ns {
                while clock.ns_to_cycles_ceil(k * ns) <= stop {
                    topo.net.run_until(clock.ns_to_cycles_ceil(k * ns));
                    sample_queues(&topo, k * ns, &mut samples);
                    pauses.push((k * ns, pause_frames_so_far(&topo)));
                    k += 1;
                }
            }
            now = stop;
            topo.net.run_until(now);
            progress.update(now);
            if now >= this.duration && all_done(&topo) {
                break;
            }
        }
        progress.finish();
        let mut results = this.measure(&topo, &flows, now);
        results.queue_samples = samples;
        results.pause_samples = pauses;
        if let Some((w, switch)) = &this.waves {
            let chip = topo.net.node_mut::<Chip>(topo.chips[*switch]);
            results.traced_signals = Some(w.finish(chip, now, clock.hz)?);
        }
        if let Some(c) = capturing {
            results.pcap_files = c.finish(&mut topo.net)?;
        }
        Ok(results)
    }
}

impl ScenarioFile {
    /// The results of `flows` on `topo` as it stands at cycle `end`: what `run` reports at
    /// the end, and what a test checks part-way (the frame census balances at any cycle).
    pub fn measure(&self, topo: &Topology, flows: &[FlowSpec], end: Cycle) -> RunResults {
        let clock = self.topology.params.clock();
        let outcomes = FlowOutcomes::of(topo, self.ideal);
        let arrivals = Arrivals::of(topo, &outcomes.records);
        let (drops, drops_by_node) = drops(topo);
        let mut bounces = arrivals.bounces;
        for &h in &topo.hosts {
            let c = t2_testbench::endpoint(&topo.net, h).counters();
            for report in crate::schemes::BOUNCES {
                bounces.bounced.merge((report.arrivals)(&c));
                bounces.resent_by_sources += c.get(report.resent);
            }
        }
        bounces.by_switch = self.bounces_by_switch(topo);
        let hosts = self.host_set(topo);
        let entropies: Vec<f64> = arrivals.reorder_entropy.values().copied().collect();
        let records = outcomes.records;
        RunResults {
            name: self.name.clone(),
            seed: self.seed,
            hosts: topo.hosts.len(),
            switches: topo.chips.len(),
            duration_cycles: self.duration,
            end_cycle: end,
            flows: records.len(),
            completed: records.iter().filter(|r| r.finish.is_some()).count(),
            offered_load: workload::offered_load(flows, hosts, self.duration),
            offered_core_load: workload::offered_core_load(flows, hosts, self.duration, |a, b| {
                topo.crosses_core(a, b)
            }),
            load_on: self
                .workload
                .background
                .as_ref()
                .map(|b| b.load_on)
                .unwrap_or_default(),
            arrival_process: self.workload.background.as_ref().map(|b| b.scope),
            ideal: self.ideal,
            buckets: metrics::by_bucket(&records, &self.buckets),
            size_deciles: metrics::by_size_percentile(&records, &metrics::DECILES),
            frames: frame_census(topo, drops.total()),
            drops,
            drops_by_node,
            timeouts: outcomes.timeouts,
            retransmitted_segments: outcomes.retransmitted,
            duplicate_segments: outcomes.duplicates,
            reordered_segments: arrivals.reordered,
            pause_frames: pause_counts(topo),
            recirculated: topo
                .chips
                .iter()
                .map(|&c| topo.net.node::<Chip>(c).counters().recirculated)
                .sum(),
            control_errors: control_errors(topo, &self.control),
            traced_signals: None,
            bounces: (bounces.bounced.frames + bounces.resent_by_sources > 0).then_some(bounces),
            pcap_files: Vec::new(),
            queue_sample_ns: self.queue_sample_ns,
            queue_samples: Vec::new(),
            pause_samples: Vec::new(),
            mean_reorder_entropy: if entropies.is_empty() {
                0.0
            } else {
                entropies.iter().sum::<f64>() / entropies.len() as f64
            },
            records,
            reorder_entropy: arrivals.reorder_entropy,
            links: link_rows(topo, end, clock),
        }
    }

    /// Bounces decided by each switch, from the program's bounce counter summed over pipes
    /// (the first register array a [`crate::scenario::BounceReport`] names that the program
    /// has); empty when the program has no such register.
    fn bounces_by_switch(&self, topo: &Topology) -> BTreeMap<String, u64> {
        let mut by_switch = BTreeMap::new();
        let counter = self.topology.program.as_ref().and_then(|p| {
            crate::schemes::BOUNCES
                .iter()
                .find_map(|report| p.registers.iter().position(|r| r.name == report.counter))
        });
        if let Some(reg) = counter {
            for (i, &c) in topo.chips.iter().enumerate() {
                let chip = topo.net.node::<Chip>(c);
                let n: u64 = (0..self.topology.params.pipes as usize)
                    .filter_map(|pipe| chip.ingress_registers(pipe))
                    .map(|regs| regs[reg].iter().sum::<u64>())
                    .sum();
                by_switch.insert(format!("switch{i}"), n);
            }
        }
        by_switch
    }
}

/// Every flow's record (in flow id order) and the senders' loss-recovery totals.
struct FlowOutcomes {
    records: Vec<FlowRecord>,
    timeouts: u64,
    retransmitted: u64,
    duplicates: u64,
}

impl FlowOutcomes {
    fn of(topo: &Topology, ideal: crate::scenario::topology::IdealFct) -> FlowOutcomes {
        let mut out = FlowOutcomes {
            records: Vec::new(),
            timeouts: 0,
            retransmitted: 0,
            duplicates: 0,
        };
        for &h in &topo.hosts {
            let host = t2_testbench::endpoint(&topo.net, h);
            out.duplicates += host.duplicate_segments();
            for o in host.outcomes() {
                out.timeouts += o.timeouts;
                out.retransmitted += o.retransmitted_segments;
                out.records.push(FlowRecord {
                    id: o.spec.id,
                    src: o.spec.src,
                    dst: o.spec.dst,
                    size_bytes: o.spec.size_bytes,
                    start: o.spec.start,
                    finish: o.finish,
                    ideal: topo.ideal_fct_as(&o.spec, ideal),
                });
            }
        }
        out.records.sort_by_key(|r| r.id);
        out
    }
}

/// What the receivers saw of each flow's order: segments displaced, each flow's reorder
/// entropy, and the data frames received (the base of the bounce shares).
struct Arrivals {
    reordered: u64,
    reorder_entropy: BTreeMap<u32, f64>,
    bounces: BounceCounts,
}

impl Arrivals {
    fn of(topo: &Topology, records: &[FlowRecord]) -> Arrivals {
        let mut out = Arrivals {
            reordered: 0,
            reorder_entropy: BTreeMap::new(),
            bounces: BounceCounts::default(),
        };
        for r in records {
            let receiver = t2_testbench::endpoint(&topo.net, topo.hosts[r.dst]);
            if let Some(a) = receiver.arrivals(r.id) {
                out.bounces.data_frames_received += a.len() as u64;
                let ro = Reordering::of(a);
                out.reordered += ro.displaced();
                out.reorder_entropy.insert(r.id, ro.entropy);
            }
        }
        out
    }
}

/// Frames lost, by reason, in all and by node (`switch{i}`, `host{i}`, `network`).
fn drops(topo: &Topology) -> (Drops, BTreeMap<String, Drops>) {
    let mut drops = Drops::default();
    let mut by_node: BTreeMap<String, Drops> = BTreeMap::new();
    let mut count = |node: String, reason: String, n: u64| {
        if n > 0 {
            drops.add(&reason, n);
            by_node.entry(node).or_default().add(&reason, n);
        }
    };
    for (i, &c) in topo.chips.iter().enumerate() {
        for (cause, n) in &topo.net.node::<Chip>(c).counters().drops {
            // Control frames the program acted on (a scheme's pause frames) are not lost data.
            if let crate::chip::ChipDrop::Pipeline(_, t2_pipeline::DropReason::Consumed) = cause {
                continue;
            }
            count(format!("switch{i}"), format!("chip.{cause}"), *n);
        }
    }
    for (i, &h) in topo.hosts.iter().enumerate() {
        let host = t2_testbench::endpoint(&topo.net, h);
        count(
            format!("host{i}"),
            "host.foreign_frame".into(),
            host.foreign(),
        );
        count(
            format!("host{i}"),
            "host.lost_on_wire".into(),
            host.frames_lost(),
        );
    }
    count(
        "network".into(),
        "network.unlinked_port".into(),
        topo.net.unlinked_drops(),
    );
    (drops, by_node)
}

/// What left every switch port and every host, with its rate over `end` cycles.
fn link_rows(topo: &Topology, end: Cycle, clock: t2_clock::Clock) -> Vec<LinkRow> {
    let row = |node: String, port: usize, id| {
        let tx = topo.net.link_tx(id, port);
        LinkRow {
            node,
            port,
            frames: tx.frames,
            bytes: tx.bytes,
            gbps: metrics::rate_bps(tx.bytes, end, clock) / 1e9,
        }
    };
    let mut links = Vec::new();
    for (i, &c) in topo.chips.iter().enumerate() {
        let chip = topo.net.node::<Chip>(c);
        for p in 0..t2_testbench::Node::port_count(chip) {
            links.push(row(format!("switch{i}"), p, c));
        }
    }
    for (i, &h) in topo.hosts.iter().enumerate() {
        links.push(row(format!("host{i}"), 0, h));
    }
    links
}

/// Where every frame sent so far is: received, dropped (`dropped` of them), inside a chip or
/// on a link, and how many of them none of those accounts for.
fn frame_census(topo: &Topology, dropped: u64) -> FrameCensus {
    let mut frames = FrameCensus {
        on_links: topo.net.frames_on_links() as u64,
        dropped,
        ..FrameCensus::default()
    };
    for &h in &topo.hosts {
        let host = t2_testbench::endpoint(&topo.net, h);
        frames.sent += host.frames_sent() - host.frames_on_nic();
        // A frame a host cannot place (not its transport's) stays unaccounted: a census
        // that balances then says every frame reached a place that knew what to do.
        frames.received += host.frames_received() - host.foreign();
    }
    for &c in &topo.chips {
        let chip = topo.net.node::<Chip>(c);
        frames.inside_chips += chip.packets_inside();
        // Frames a switch makes (PFC frames, mirror copies such as CNMs and BFC's dequeue
        // records, packet-generator frames such as BFC's pause frames) are sent too; the
        // PFC frames a switch's MAC obeys and the frames its program consumes after
        // acting on them (BFC's pause frames and records) are received.
        let k = chip.counters();
        frames.sent += k.pfc_xoff_sent + k.pfc_xon_sent + k.mirrored + k.pktgen_generated;
        frames.received += k.pfc_frames_received + k.consumed_frames() + k.consumed_copies();
    }
    frames.unaccounted = frames.sent as i64
        - (frames.received + frames.dropped + frames.inside_chips + frames.on_links) as i64;
    frames
}

/// PFC and the schemes' pause frames ([`crate::scenario::PauseKind`]) each switch and host
/// sent and received; nodes with none left out.
fn pause_counts(topo: &Topology) -> BTreeMap<String, PauseCounts> {
    let kinds = crate::schemes::PAUSES;
    let mut pause_frames = BTreeMap::new();
    for (i, &c) in topo.chips.iter().enumerate() {
        let k = topo.net.node::<Chip>(c).counters();
        let mut n = PauseCounts {
            pfc_sent: k.pfc_xoff_sent + k.pfc_xon_sent,
            pfc_received: k.pfc_frames_received,
            kinds,
            ..PauseCounts::default()
        };
        // A scheme's pause frames the program consumed (after acting on them).
        for (slot, kind) in n.received.iter_mut().zip(kinds) {
            *slot = (kind.at_switch)(k);
        }
        if !n.is_empty() {
            pause_frames.insert(format!("switch{i}"), n);
        }
    }
    for (i, &h) in topo.hosts.iter().enumerate() {
        let counters = t2_testbench::endpoint(&topo.net, h).counters();
        let mut n = PauseCounts {
            pfc_sent: 0,
            pfc_received: counters.get(t2_testbench::host_feature::pfc::PFC_FRAMES),
            kinds,
            ..PauseCounts::default()
        };
        for (slot, kind) in n.received.iter_mut().zip(kinds) {
            *slot = counters.get(kind.host_count);
        }
        if !n.is_empty() {
            pause_frames.insert(format!("host{i}"), n);
        }
    }
    pause_frames
}

/// Every chip's control-plane errors, each with its cycle.
/// Each switch's refused operations, each with the `[[control]]` entry it came from (the
/// first of the file's operations of that kind at that cycle not yet named on the switch),
/// so that the line names the key to look at.
fn control_errors(topo: &Topology, setup: &crate::scenario::control::ControlSetup) -> Vec<String> {
    use crate::chip::ControlOp;
    let kind = |op: &ControlOp| match op {
        ControlOp::AddEntry { .. } => "add_entry",
        ControlOp::ModifyEntry { .. } => "modify_entry",
        ControlOp::DeleteEntry { .. } => "delete_entry",
        ControlOp::WriteRegister { .. } => "write_register",
        ControlOp::PortDown { .. } => "port_down",
        _ => "",
    };
    topo.chips
        .iter()
        .flat_map(|&c| {
            let mut named = vec![false; setup.ops.len()];
            topo.net
                .node::<Chip>(c)
                .control_errors()
                .iter()
                .map(|(at, e)| {
                    let text = e.to_string();
                    let k = (0..setup.ops.len()).find(|&k| {
                        let (when, op) = &setup.ops[k];
                        !named[k]
                            && when == at
                            && !kind(op).is_empty()
                            && text.contains(&format!(" {} ", kind(op)))
                    });
                    match k {
                        Some(k) => {
                            named[k] = true;
                            format!("cycle {at}: control[{k}]: {e}")
                        }
                        None => format!("cycle {at}: {e}"),
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Pause frames so far: PFC frames the switches sent and the schemes' pause frames the hosts
/// received (the `pause_frames` of the results, summed).
fn pause_frames_so_far(t: &Topology) -> u64 {
    let chips: u64 = t
        .chips
        .iter()
        .map(|&c| {
            let k = t.net.node::<Chip>(c).counters();
            k.pfc_xoff_sent + k.pfc_xon_sent
        })
        .sum();
    let hosts: u64 = t
        .hosts
        .iter()
        .map(|&h| {
            let counters = t2_testbench::endpoint(&t.net, h).counters();
            crate::schemes::PAUSES
                .iter()
                .map(|kind| counters.get(kind.host_count))
                .sum::<u64>()
        })
        .sum();
    chips + hosts
}

/// Appends the depth of every non-empty egress queue of every chip's front-panel ports.
fn sample_queues(t: &Topology, time_ns: u64, out: &mut Vec<QueueSample>) {
    for (switch, &c) in t.chips.iter().enumerate() {
        let chip = t.net.node::<Chip>(c);
        let tm = chip.tm();
        for port in 0..t2_testbench::Node::port_count(chip) {
            for queue in 0..tm.queue_count(port) {
                let depth_cells = tm.queue_stats(port, queue).depth_cells;
                if depth_cells > 0 {
                    out.push(QueueSample {
                        time_ns,
                        switch,
                        port,
                        queue,
                        depth_cells,
                    });
                }
            }
        }
    }
}

fn all_done(t: &Topology) -> bool {
    t.hosts
        .iter()
        .all(|&h| t2_testbench::endpoint(&t.net, h).all_done())
}

/// Whether error `e` of a chip (`chip NAME: KEY...: problem`) is about one of the parameter
/// file's keys (`tm.ppg_min_cells`), so that the file can be named with it.
pub fn names_a_param(e: &str) -> bool {
    let Some(rest) = e.strip_prefix("chip ") else {
        return false;
    };
    let Some((_, problem)) = rest.split_once(": ") else {
        return false;
    };
    let keys = serde_json::to_value(crate::Tofino2Params::default())
        .ok()
        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
        .unwrap_or_default();
    keys.iter().any(|k| {
        problem
            .strip_prefix(k.as_str())
            .is_some_and(|r| r.starts_with('.') || r.starts_with(':'))
    })
}
