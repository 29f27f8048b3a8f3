//! The chip: front-panel ports, four pipes (ingress and egress), the traffic manager and the
//! MACs, wired with registered signals.
//!
//! A frame's path, cycle by cycle (the formula is in `docs/timing.md`):
//! 1. its last bit reaches the port in cycle `A`; it waits in the port's receive FIFO;
//! 2. the pipe's ingress arbiter (round-robin over the pipe's ports) lets one frame per cycle
//!    into the ingress parser; with nothing ahead of it, in cycle `A`;
//! 3. it crosses the ingress (parser, MAU stages as placed, deparser);
//! 4. one cycle later the TM admits it (or drops it, counted) into the egress port's queue;
//! 5. the pipe's TM scheduler sends one descriptor per cycle into the egress, at the earliest
//!    `queue_latency_cycles` after enqueue and only when the MAC will be free on arrival;
//! 6. one cycle later it enters the egress (parser, stages, deparser);
//! 7. one cycle later it reaches the MAC, which serializes it at line rate; in the cycle its
//!    last bit leaves, the chip hands it to the link.
//!
//! Every crossing between modules is a wire with a fixed latency of at least one cycle, so the
//! order in which the modules are evaluated within a tick does not matter.
//!
//! Beside the front-panel ports, each pipe has a recirculation port whose MAC, capped at the
//! chip's recirculation share, feeds the pipe's ingress again. A port may be mirrored to a
//! session (copy queued with the original, optionally truncated); a program mirrors with
//! `mirror` in ingress or egress, the egress copy being of the packet leaving the egress
//! deparser, and a copy is never mirrored again by egress (`docs/timing.md`, Mirroring). PFC frames are MAC control
//! frames: received ones make the TM hold queues; the TM's XOFF/XON requests for lossless
//! classes go out of the ingress port as PFC frames (`crate::pfc`).

mod admission;
mod arbiter;
mod config;
mod control;
mod counters;
mod digests;
mod egress;
mod flow_control;
mod ghost;
mod ingress;
mod mac;
mod mirror;
pub mod params;
pub mod pipes;
mod pktgen;
pub use digests::{digests_csv, DigestRecord};
mod seed;
pub mod trace;
mod wire;

pub use seed::stream_seed;

pub use config::{
    port_channels, recirculation_dev_port, ChipConfig, ConfigError, MirrorSession, PortSpec,
    MIRROR_SESSIONS, PORT_GROUP_0, PORT_SPEEDS, RECIRCULATION_LOCAL_PORT,
};
pub use control::ControlOp;
pub use counters::{ChipCounters, ChipDrop};
pub use flow_control::AfcMessage;
pub use pktgen::{
    pktgen_header, PktgenApp, PktgenTrigger, PKTGEN_APPLICATIONS, PKTGEN_BUFFER_BYTES,
    PKTGEN_HEADER_BYTES,
};

use crate::chip::params::Tofino2Params;
use crate::chip::pipes::{build_pipes, PipeProgram};
use crate::chip::trace::{serial_in, ChipTrace, TraceLayout};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::{Cells, GhostPipeline, GressPipeline, PacketHandle, PacketPool, StageProgram};
use t2_testbench::{Node, Sent};
use t2_tm::{Dequeued, Descriptor, MacTx, QueueConfig, TmPort, TrafficManager};
use t2_waves::{Signal, TraceFilter, Value};
use wire::{RxFifo, Wire};

struct Port {
    bps: u64,
    /// A recirculation port: what it sends re-enters its pipe's ingress.
    recirculation: bool,
    dev_port: u16,
    rx_fifo: RxFifo,
    mac: MacTx,
    rx_frames: u64,
    tx_frames: u64,
    /// Bytes (FCS included) of the frames sent.
    tx_bytes: u64,
    /// Mirror session that copies every packet that came in on this port and left ingress.
    mirror: Option<u8>,
}

struct Pipe {
    ingress: GressPipeline,
    egress: GressPipeline,
    ingress_program: PipeProgram,
    egress_program: PipeProgram,
    /// The program's ghost thread, run by `ingress_program` (none without a ghost control).
    ghost: Option<GhostPipeline>,
    /// Ports this pipe serves, by index into `Chip::ports`.
    ports: Vec<usize>,
    /// Next port the ingress arbiter looks at first (index into `ports`).
    rx_next: usize,
    /// TM to egress wire: (cycle it arrives, descriptor with its queue metadata).
    to_egress: Wire<Dequeued>,
    /// Descriptors of the packets inside the egress, oldest first: the egress is a FIFO of
    /// fixed latency, so the front is the packet leaving. An egress mirror copy is charged
    /// to its original's ingress port and class, as an ingress copy is.
    in_egress: VecDeque<Descriptor>,
    /// Packets that have entered the ingress / egress parser.
    ingress_entered: u64,
    egress_entered: u64,
}

/// A Tofino2 chip.
pub struct Chip {
    name: String,
    params: Tofino2Params,
    /// Front-panel ports, then (if the cap is above 0) one recirculation port per pipe.
    ports: Vec<Port>,
    front_ports: usize,
    /// Device port to port index.
    dev_ports: Vec<Option<usize>>,
    pipes: Vec<Pipe>,
    tm: TrafficManager,
    /// Ingress deparsers to TM: (arrival cycle, descriptor).
    to_tm: Wire<Descriptor>,
    /// Egress deparsers (and PFC frames, generated packets) to MACs: (arrival cycle, port
    /// index, packet). Used only while tracing; otherwise a MAC takes a frame as it is
    /// handed over, for the cycle it arrives (`Chip::hand_to_mac`).
    to_mac: Wire<(usize, PacketHandle)>,
    /// The first cycle a frame on some MAC finishes (`Cycle::MAX`: none on the wire), so
    /// that the MACs are looked at only when one has something to hand on.
    mac_next_done: Cycle,
    /// Every frame on a MAC as (cycle its last bit leaves, port): the MACs' calendar, so
    /// that a visit looks at the ports with a frame done, not at every port.
    mac_done: BinaryHeap<Reverse<(Cycle, usize)>>,
    /// Scratch for `macs`: the ports with a frame done this cycle.
    mac_due: Vec<usize>,
    /// Frames waiting in all ports' receive FIFOs, so that idle arbiters cost nothing.
    rx_waiting: usize,
    counters: ChipCounters,
    mirror: mirror::Mirroring,
    ingress_latency: Cycle,
    egress_latency: Cycle,
    trace: Option<Box<ChipTrace>>,
    /// Every packet and ghost update runs stage by stage, never a whole pass at once
    /// (`Chip::run_stage_by_stage`).
    stage_by_stage: bool,
    ghost: ghost::GhostFeed,
    /// The ends of PFC holds are chip events: a queue's `pfc_paused` is traced. Otherwise
    /// nothing changes when a hold ends until the queue's next dequeue, which the TM's own
    /// readiness already schedules.
    pfc_release_events: bool,
    pktgen: pktgen::Pktgens,
    /// Per pipe, resubmitted packets waiting for their second ingress pass: (cycle they
    /// may enter, packet, ingress device port).
    resubmit_fifo: Vec<Wire<(PacketHandle, u16)>>,
    /// The cycle the chip has reached (the last one it ran).
    now: Cycle,
    control: control::ControlPlane,
    /// The program's digests, and those the ingress deparsers have sent (`digests`).
    digest_decls: Vec<t2_pipeline::ir::Digest>,
    digests: Vec<DigestRecord>,
}

impl Chip {
    /// Builds a chip running the built-in IPv4 forwarding program in every pipe.
    pub fn new(name: &str, config: &ChipConfig) -> Result<Chip, ConfigError> {
        let params = config.params;
        params.validate().map_err(|e| ConfigError {
            what: e.origin,
            problem: e.problem,
        })?;
        if config.ports.is_empty() {
            return Err(ConfigError {
                what: format!("chip {name}"),
                problem: "has no ports".into(),
            });
        }
        let clock = params.clock();
        let mut dev_ports = config.check_ports()?;
        // Recirculation: one port per pipe whose bandwidth is the pipe's share of the cap.
        let front = config.ports.len();
        let recirc_bps = params.recirculation_bps_per_pipe();
        let recirc_pipes = if recirc_bps > 0 { params.pipes } else { 0 };
        for p in 0..recirc_pipes {
            dev_ports[recirculation_dev_port(p) as usize] = Some(front + p as usize);
        }
        let routes = config.device_routes(recirc_pipes)?;
        let routes_for_control = routes.clone();
        let setups = build_pipes(
            &params.pipeline,
            params.pipes as usize,
            config.program.as_ref(),
            &routes,
        )?;
        let pipes: Vec<Pipe> = setups
            .into_iter()
            .enumerate()
            .map(|(p, [ingress, egress])| {
                let p = p as u32;
                Pipe {
                    ingress: ingress.pipeline,
                    egress: egress.pipeline,
                    ingress_program: ingress.program,
                    egress_program: egress.program,
                    ghost: ingress.ghost,
                    ports: (0..config.ports.len())
                        .filter(|&i| config.ports[i].pipe == p)
                        .chain((p < recirc_pipes).then_some(front + p as usize))
                        .collect(),
                    rx_next: 0,
                    to_egress: Wire::new(1),
                    in_egress: VecDeque::new(),
                    ingress_entered: 0,
                    egress_entered: 0,
                }
            })
            .collect();
        let ingress_latency = pipes[0].ingress.latency();
        let egress_latency = pipes[0].egress.latency();
        let mut lines: Vec<LineRate> = config
            .ports
            .iter()
            .map(|s| LineRate::new(clock, s.bps))
            .collect();
        let mut tm = traffic_manager(name, config, &mut lines, recirc_bps, egress_latency)?;
        let dev_ports_in_order = config
            .ports
            .iter()
            .map(|s| s.dev_port(params.channels_per_mac))
            .chain((0..recirc_pipes).map(recirculation_dev_port));
        let ports = dev_ports_in_order
            .zip(&lines)
            .enumerate()
            .map(|(i, (dev_port, &line))| Port {
                bps: line.bits_per_second(),
                recirculation: i >= front,
                dev_port,
                rx_fifo: RxFifo::default(),
                mac: MacTx::new(line),
                rx_frames: 0,
                tx_frames: 0,
                tx_bytes: 0,
                mirror: None,
            })
            .collect();
        let ghost_events = pipes.iter().any(|p| p.ghost.is_some());
        tm.keep_ghost_delivered(ghost_events);
        let ghost_shared = pipes.len() > 1
            && pipes[0].ghost.is_some()
            && pipes[0].ingress_program.ghost_writes_are_its_own();
        Ok(Chip {
            name: name.to_string(),
            params,
            ports,
            front_ports: front,
            dev_ports,
            pipes,
            tm,
            to_tm: Wire::new(1),
            to_mac: Wire::new(1),
            mac_next_done: Cycle::MAX,
            mac_done: BinaryHeap::new(),
            mac_due: Vec::new(),
            rx_waiting: 0,
            counters: ChipCounters::default(),
            mirror: mirror::Mirroring::new(),
            ingress_latency,
            egress_latency,
            trace: None,
            stage_by_stage: false,
            ghost: ghost::GhostFeed::new(ghost_events, ghost_shared),
            pfc_release_events: false,
            pktgen: pktgen::Pktgens::new(params.pipes as usize),
            resubmit_fifo: (0..params.pipes).map(|_| Wire::new(1)).collect(),
            now: 0,
            digest_decls: config
                .program
                .as_ref()
                .map_or_else(Vec::new, |p| p.digests.clone()),
            digests: Vec::new(),
            control: control::ControlPlane::new(match &config.program {
                Some(p) => Some(crate::chip::pipes::with_routes(p, &routes_for_control)?),
                None => None,
            }),
        })
    }

    /// Traces the signals `filter` selects into a VCD dump written to `out`, from now on.
    /// Fails if the dump cannot be started.
    pub fn enable_trace(
        &mut self,
        filter: TraceFilter,
        out: Box<dyn io::Write + Send>,
    ) -> io::Result<()> {
        let layout = TraceLayout {
            clock_hz: self.params.clock_hz,
            pipes: self.pipes.len(),
            stages: self.params.pipeline.stages as usize,
            ports: self
                .ports
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    (
                        (p.dev_port >> 7) as usize,
                        p.recirculation,
                        self.tm.queue_count(i),
                        p.dev_port,
                    )
                })
                .collect(),
            buffer_cells: self.params.tm.buffer_cells,
            rx_fifo_frames: self.params.rx_fifo_frames,
            registers: self
                .control
                .program
                .iter()
                .flat_map(|p| p.registers.iter().map(|r| r.name.clone()))
                .collect(),
        };
        let mut trace = ChipTrace::new(&layout, filter)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        trace.begin(out)?;
        if trace.traces_ghost() && !self.ghost.events {
            // Traced updates are pulses in their delivery cycles, which the kernel must visit.
            self.ghost.events = true;
            self.tm.keep_ghost_delivered(true);
        }
        // A traced hold falls in the cycle it ends, which the kernel must visit.
        self.pfc_release_events = trace.traces_pfc_holds();
        self.tm.keep_pfc_releases(self.pfc_release_events);
        self.trace = Some(Box::new(trace));
        Ok(())
    }

    /// The chip's trace, if tracing is on.
    pub fn trace(&self) -> Option<&ChipTrace> {
        self.trace.as_deref()
    }

    /// The chip's trace, mutably (to keep an in-memory log of it, say).
    pub fn trace_mut(&mut self) -> Option<&mut ChipTrace> {
        self.trace.as_deref_mut()
    }

    /// Ends the dump at cycle `end` and returns the traced signals (for a save file). Reports
    /// the first write error of the run, if there was one.
    pub fn finish_trace(&mut self, end: Cycle) -> io::Result<Vec<Signal>> {
        let Some(trace) = self.trace.as_mut() else {
            return Ok(Vec::new());
        };
        if let Some(e) = trace.error.take() {
            return Err(e);
        }
        trace.tracer.finish(end)?;
        Ok(trace.tracer.signals().to_vec())
    }

    /// Writes the values of the traced state signals after the tick of cycle `now`.
    fn sample(&mut self, now: Cycle) {
        let Some(t) = self.trace.as_mut() else {
            return;
        };
        let tr = &mut t.tracer;
        if let Some(id) = t.drops {
            tr.set(now, id, Value::Bits(self.counters.dropped()));
        }
        if let Some(id) = t.recirculated {
            tr.set(now, id, Value::Bits(self.counters.recirculated));
        }
        if let Some(id) = t.free_cells {
            tr.set(now, id, Value::Bits(self.tm.free_cells() as u64));
        }
        for (p, id) in t.pools.iter().enumerate() {
            if let Some(id) = *id {
                tr.set(
                    now,
                    id,
                    Value::Bits(self.tm.pool_stats(p).used_cells as u64),
                );
            }
        }
        for (i, (port, sig)) in self.ports.iter().zip(&t.ports).enumerate() {
            if let Some(id) = sig.tx_busy {
                tr.set(now, id, Value::Bits(port.mac.busy(now) as u64));
            }
            if let Some(id) = sig.tx_pkt {
                let on_wire = port.mac.on_wire(now).map_or(0, |h| serial_in(&t.serial, h));
                tr.set(now, id, Value::Bits(on_wire as u64));
            }
            if let Some(id) = sig.rx_fifo {
                tr.set(now, id, Value::Bits(port.rx_fifo.len() as u64));
            }
            if let Some(id) = sig.depth_cells {
                tr.set(now, id, Value::Bits(self.tm.port_depth_cells(i) as u64));
            }
            if sig.any_queue {
                for (q, qs) in sig.queues.iter().enumerate() {
                    let stats = self.tm.queue_stats(i, q);
                    if let Some(id) = qs.depth_cells {
                        tr.set(now, id, Value::Bits(stats.depth_cells as u64));
                    }
                    if let Some(id) = qs.paused {
                        tr.set(now, id, Value::Bits(stats.paused as u64));
                    }
                    if let Some(id) = qs.pfc_paused {
                        // The tick's dequeue applied the PFC frames due by `now`.
                        let held = self.tm.pfc_paused(i, q, now);
                        tr.set(now, id, Value::Bits(held as u64));
                    }
                }
            }
        }
        for (pipe, sums) in self.pipes.iter().zip(&t.register_sums) {
            // Summed only when traced: a sum costs a pass over the array every sample.
            if sums.iter().all(Option::is_none) {
                continue;
            }
            if let Some(cells) = pipe.ingress_program.registers() {
                for (id, array) in sums.iter().zip(cells) {
                    if let Some(id) = *id {
                        tr.set(now, id, Value::Bits(array.iter().sum()));
                    }
                }
            }
        }
        for (pipe, sig) in self.pipes.iter().zip(&t.gresses) {
            if let Some(id) = sig[0].occupancy {
                tr.set(now, id, Value::Bits(pipe.ingress.occupancy() as u64));
            }
            if let Some(id) = sig[1].occupancy {
                tr.set(now, id, Value::Bits(pipe.egress.occupancy() as u64));
            }
        }
    }

    pub fn params(&self) -> &Tofino2Params {
        &self.params
    }

    pub fn counters(&self) -> &ChipCounters {
        &self.counters
    }

    pub fn tm(&self) -> &TrafficManager {
        &self.tm
    }

    /// Gives port `port` the queues `queues` (16..=128, within its channels' share of its
    /// port group's queues) in place of the default carving. The port must be empty.
    pub fn set_port_queues(
        &mut self,
        port: usize,
        queues: &[QueueConfig],
    ) -> Result<(), ConfigError> {
        self.tm
            .set_port_queues(port, queues)
            .map_err(|e| ConfigError {
                what: format!("chip {}: {}", self.name, e.what),
                problem: e.problem,
            })
    }

    /// The depth in cells of queue `queue` of port `port` as every ingress pipe has heard it
    /// from the TM's ghost feed by cycle `now`.
    pub fn ghost_qlength(&mut self, now: Cycle, port: usize, queue: usize) -> u32 {
        self.tm.ghost_qlength(now, port, queue)
    }

    /// With `on`, every packet and ghost update runs its stages one by one, each in its own
    /// cycle, instead of all at once where that changes no result (see
    /// `GressPipeline::tick_batching`): what leaves the chip is the same either way, but
    /// register cells read between cycles ([`Chip::ingress_registers`]) then change in the
    /// cycle of the stage that writes them. Tracing does the same by itself.
    pub fn run_stage_by_stage(&mut self, on: bool) {
        self.stage_by_stage = on;
    }

    /// The cells of pipe `pipe`'s register arrays (shared by its ingress and ghost threads),
    /// one per array of the program; `None` for the built-in forwarding. Unless the
    /// chip runs stage by stage ([`Chip::run_stage_by_stage`]), a packet's writes may show
    /// from the cycle it reaches stage 0.
    pub fn ingress_registers(&self, pipe: usize) -> Option<&[Cells]> {
        self.pipes.get(pipe)?.ingress_program.registers()
    }

    /// Cycles from a ghost update reaching the ingress pipes to it reaching each MAU stage
    /// with ghost units: (offset, stage). Empty without a ghost control.
    pub fn ghost_stage_points(&self) -> &[(Cycle, usize)] {
        self.pipes[0]
            .ghost
            .as_ref()
            .map_or(&[], GhostPipeline::stage_points)
    }

    /// A PFC frame for `class` with `quanta` received on port `port` in cycle `now`: the
    /// port's queues mapped to that class hold from the next cycle for that long.
    pub fn pfc_pause(
        &mut self,
        now: Cycle,
        port: usize,
        class: u8,
        quanta: u16,
    ) -> Result<(), ConfigError> {
        self.tm
            .pfc_pause(now, port, class, quanta)
            .map_err(|e| ConfigError {
                what: format!("chip {}: {}", self.name, e.what),
                problem: e.problem,
            })
    }

    /// Advanced flow control: pauses (or resumes) queue `qid` of port `port` from cycle
    /// `now + afc_latency_cycles` on, as an `adv_flow_ctl` from a deparser in cycle `now`
    /// would. Packets already dequeued still leave.
    pub fn afc(
        &mut self,
        now: Cycle,
        port: usize,
        qid: u8,
        pause: bool,
    ) -> Result<(), ConfigError> {
        self.tm.afc(now, port, qid, pause).map_err(|e| ConfigError {
            what: format!("chip {}: {}", self.name, e.what),
            problem: e.problem,
        })
    }

    /// Cycles through an ingress pipeline (parser, stages, deparser).
    pub fn ingress_latency(&self) -> Cycle {
        self.ingress_latency
    }

    /// Cycles through an egress pipeline.
    pub fn egress_latency(&self) -> Cycle {
        self.egress_latency
    }

    /// Sets (or with `None` clears) mirror session `id`.
    pub fn set_mirror_session(
        &mut self,
        id: u8,
        session: Option<MirrorSession>,
    ) -> Result<(), ConfigError> {
        self.check_mirror_session(id, &session)?;
        self.mirror.sessions[id as usize] = session;
        Ok(())
    }

    /// Whether mirror session `id` may be set to `session`: the problem if not.
    fn check_mirror_session(
        &self,
        id: u8,
        session: &Option<MirrorSession>,
    ) -> Result<(), ConfigError> {
        let bad = |problem: String| ConfigError {
            what: format!("chip {}: mirror session {id}", self.name),
            problem,
        };
        if let &Some(s) = session {
            if s.port >= self.ports.len() {
                return Err(bad(format!(
                    "port {} does not exist (the chip has {})",
                    s.port,
                    self.ports.len()
                )));
            }
            if s.truncate_bytes.is_some_and(|t| t < 60) {
                return Err(bad(format!(
                    "truncate_bytes {} is below the 60-byte minimum frame",
                    s.truncate_bytes.unwrap_or(0)
                )));
            }
        }
        Ok(())
    }

    /// Mirrors every packet that comes in on port `port` and leaves the ingress pipeline to
    /// session `session` (or stops, with `None`). A session not set makes no copies.
    pub fn mirror_ingress_port(
        &mut self,
        port: usize,
        session: Option<u8>,
    ) -> Result<(), ConfigError> {
        let name = &self.name;
        let p = self.ports.get_mut(port).ok_or_else(|| ConfigError {
            what: format!("chip {name}: mirroring port {port}"),
            problem: "no such port".into(),
        })?;
        p.mirror = session;
        Ok(())
    }

    /// The port index of pipe `pipe`'s recirculation port (`None` with a cap of 0).
    pub fn recirculation_port(&self, pipe: usize) -> Option<usize> {
        let i = self.front_ports + pipe;
        (i < self.ports.len()).then_some(i)
    }

    /// The device port of port `i`.
    pub fn dev_port(&self, i: usize) -> u16 {
        self.ports[i].dev_port
    }

    /// Packets that have entered pipe `p`'s ingress and egress parsers so far.
    pub fn pipe_entered(&self, p: usize) -> (u64, u64) {
        (self.pipes[p].ingress_entered, self.pipes[p].egress_entered)
    }

    /// Frames waiting in port `i`'s receive FIFO for an ingress slot.
    pub fn rx_fifo_frames(&self, i: usize) -> usize {
        self.ports[i].rx_fifo.len()
    }

    /// Frames received and sent by port `i`.
    pub fn port_frames(&self, i: usize) -> (u64, u64) {
        (self.ports[i].rx_frames, self.ports[i].tx_frames)
    }

    /// Bytes (FCS included) of the frames port `i` has sent.
    pub fn port_tx_bytes(&self, i: usize) -> u64 {
        self.ports[i].tx_bytes
    }

    /// Packets inside the chip, counted where they are (FIFOs, pipelines, wires, queues,
    /// MACs), not derived from the counters.
    pub fn packets_inside(&self) -> u64 {
        let ports: usize = self
            .ports
            .iter()
            .map(|p| p.rx_fifo.len() + p.mac.in_flight())
            .sum();
        let pipes: usize = self
            .pipes
            .iter()
            .map(|p| p.ingress.occupancy() + p.egress.occupancy() + p.to_egress.len())
            .sum();
        let resubmits: usize = self.resubmit_fifo.iter().map(Wire::len).sum();
        (ports
            + pipes
            + resubmits
            + self.to_tm.len()
            + self.tm.queued_packets()
            + self.to_mac.len()) as u64
    }

    fn drop(&mut self, cause: ChipDrop, pkt: PacketHandle, pool: &mut PacketPool) {
        *self.counters.drops.entry(cause).or_insert(0) += 1;
        self.mirror.types.remove(&pkt.index());
        self.mirror.bypass.remove(&pkt.index());
        if let Some(t) = self.trace.as_mut() {
            t.forget(pkt.index());
        }
        if self.mirror.copies.remove(&pkt.index()) {
            *self.counters.mirror_drops.entry(cause).or_insert(0) += 1;
        }
        pool.free(pkt);
    }

    /// Mirror copies inside the chip (made, neither delivered nor dropped yet).
    pub fn mirror_copies_inside(&self) -> u64 {
        self.mirror.copies.len() as u64
    }

    /// The port-to-port latency of a frame of `frame_bytes` that meets no other traffic,
    /// from its last bit arriving to its last bit leaving `egress_port`, per
    /// `docs/timing.md`. Fractional serialization rounds up.
    pub fn unloaded_latency(&self, frame_bytes: u64, egress_port: usize) -> Cycle {
        let ser = self.ports[egress_port]
            .mac
            .line()
            .serialization_cycles_ceil(frame_bytes);
        self.ingress_latency
            + 1
            + self.params.tm.queue_latency_cycles as Cycle
            + 1
            + self.egress_latency
            + 1
            + ser
    }
}

/// The traffic manager of a chip with `config`'s ports and, with a recirculation share above
/// 0, one recirculation port per pipe (whose line rate `recirc_bps` is appended to `lines`).
fn traffic_manager(
    name: &str,
    config: &ChipConfig,
    lines: &mut Vec<LineRate>,
    recirc_bps: u64,
    egress_latency: Cycle,
) -> Result<TrafficManager, ConfigError> {
    let params = config.params;
    let clock = params.clock();
    let recirc_pipes = if recirc_bps > 0 { params.pipes } else { 0 };
    let mut tm_ports: Vec<TmPort> = config
        .ports
        .iter()
        .zip(lines.iter())
        .map(|(s, &line)| {
            // Port group 0's ports share a group of their own per pipe, after the
            // front-panel MACs' and the recirculation ports'.
            let group = if s.mac == PORT_GROUP_0 {
                params.pipes * (params.macs_per_pipe + 1) + s.pipe
            } else {
                s.pipe * params.macs_per_pipe + s.mac
            };
            TmPort::new(
                s.pipe as usize,
                line,
                group as usize,
                s.channels().expect("port speeds were checked above"),
                params.channels_per_mac,
            )
            .at_channel(s.channel)
        })
        .collect();
    // A recirculation port has a whole 8-channel group (port group 0 of its pipe).
    for p in 0..recirc_pipes {
        let line = LineRate::new(clock, recirc_bps);
        lines.push(line);
        let group = (params.pipes * params.macs_per_pipe + p) as usize;
        let channels = params.channels_per_mac;
        tm_ports.push(TmPort::new(p as usize, line, group, channels, channels));
    }
    // Dequeue in cycle d: egress entry d+1, egress exit d+1+E, MAC d+2+E.
    TrafficManager::new(
        params.tm,
        clock,
        params.pipes as usize,
        &tm_ports,
        egress_latency + 2,
    )
    .map_err(|e| ConfigError {
        what: format!("chip {name}: {}", e.what),
        problem: e.problem,
    })
}

impl Node for Chip {
    fn name(&self) -> &str {
        &self.name
    }

    fn port_count(&self) -> usize {
        self.front_ports
    }

    fn port_bps(&self, port: usize) -> u64 {
        self.ports[port].bps
    }

    fn receive(&mut self, now: Cycle, port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        self.mac_receive(now, port, pkt, pool);
    }

    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        if let Some(t) = self.trace.as_mut() {
            if t.error.is_none() {
                if let Err(e) = t.tracer.flush_before(now) {
                    t.fail(e);
                }
            }
        }
        self.step(now, pool, out);
        self.sample(now);
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        self.next_event_at(now)
    }
}

impl Chip {
    /// Everything the chip does in cycle `now`, block by block in the order a packet meets
    /// them. Blocks talk only through registered wires (a cycle or more of latency), so the
    /// order here changes no result.
    fn step(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        self.control_plane(now);
        if self.ghost.events {
            self.ghost_deliver(now);
        }
        if self.pktgen.due_by(now) {
            self.packet_generators(now, pool);
        }
        if self.rx_waiting > 0 || self.resubmit_fifo.iter().any(|w| w.len() > 0) {
            self.ingress_arbiters(now, pool);
        }
        self.ingress_pipes(now, pool);
        self.tm_admission(now, pool);
        self.egress_pipes(now, pool);
        self.pfc_requests(now, pool);
        self.macs(now, pool, out);
    }

    fn next_event_at(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + 1;
        debug_assert_eq!(
            self.rx_waiting,
            self.ports.iter().map(|p| p.rx_fifo.len()).sum::<usize>()
        );
        if self.rx_waiting > 0 {
            return Some(soon);
        }
        // The earliest of the blocks' own next cycles, each `Cycle::MAX` for none, then
        // raised to the next cycle: a plain minimum, asked after every visit.
        let at = |t: Option<Cycle>| t.unwrap_or(Cycle::MAX);
        let mut next = self
            .mac_next_done
            .min(at(self.to_tm.next_arrival()))
            .min(at(self.to_mac.next_arrival()))
            .min(at(self.tm.next_event(now)))
            .min(at(self.pktgen.next))
            .min(at(self.control_next_event()));
        if self.ghost.events {
            next = next.min(at(self.tm.ghost_next_delivery()));
        }
        for pipe in &self.pipes {
            next = next
                .min(at(pipe.ingress.next_event(now)))
                .min(at(pipe.egress.next_event(now)))
                .min(at(pipe.to_egress.next_arrival()));
            if let Some(ghost) = &pipe.ghost {
                next = next.min(at(ghost.next_event()));
            }
        }
        if self.pfc_release_events {
            next = next.min(at(self.tm.next_pfc_release(now)));
        }
        for f in &self.resubmit_fifo {
            next = next.min(at(f.next_arrival()));
        }
        (next != Cycle::MAX).then(|| next.max(soon))
    }
}
