//! t2-tm: the Tofino2 traffic manager, from enqueue to the MAC.
//!
//! The TM moves descriptors, never PHVs: a descriptor names the packet (an opaque handle
//! from the chip), its length, its ports and the queue ingress chose.
//!
//! - **Queues.** Each egress port has 16 to 128 queues ([`QueueConfig`]), carved from its
//!   8-channel port group's 128 in proportion to the channels it uses (a 400G port up to 128,
//!   a 100G port up to 32, 16 by default). A descriptor's `qid` picks queue `qid % n`, the
//!   driver's default mapping. Each queue is a FIFO with a depth in cells and a pause bit.
//! - **Admission.** A frame takes `ceil(bytes / 176)` cells of the shared buffer. The buffer
//!   is carved into a guaranteed minimum per (ingress port, class) priority group
//!   (`ppg_min_cells`) and 4 application pools (`app_pool_cells`); each queue charges its
//!   cells to one pool ([`QueueConfig::app_pool`], pool 0 by default). In order: a frame is
//!   dropped when the buffer has too few free cells (`BufferFull`) or its queue would pass
//!   its static limit (`QueueLimit`); admitted, charged to its group's minimum, while that
//!   minimum has room; otherwise charged to its queue's pool and dropped when the pool has
//!   too few free cells (`PoolFull`) or its queue is already at its dynamic threshold,
//!   `alpha x` the free cells of its pool (`DynamicThreshold`). Lossless classes skip the
//!   queue and pool checks (PFC bounds them: `PfcHeadroom`) but their cells beyond the
//!   minimum still count in the pool.
//!   Every drop is counted with its reason ([`TmDrop`]); pools report their occupancy
//!   ([`PoolStats`]).
//! - **Scheduling.** Each pipe's scheduler sends at most one descriptor per cycle into that
//!   pipe's egress, round-robin over its ports, and only when the port's MAC will be free by
//!   the time the packet reaches it, so the egress never piles up behind a slow port. Inside
//!   a port, `sched` picks the queue: min-rate guarantees, 8 strict priorities, DWRR, and
//!   max-rate shapers ([`shaper`]), all in exact integer arithmetic.
//! - **AFC.** [`TrafficManager::afc`] pauses or resumes a queue `afc_latency_cycles` after the
//!   request; what was dequeued before still leaves.
//! - **PFC.** Cells are also counted per ingress port and class (priority group). For the
//!   lossless classes, crossing `pfc_xoff_cells` emits an XOFF event for that port and
//!   class, falling back to `pfc_xon_cells` an XON; such packets are dropped only when the
//!   group's headroom is spent, never by the egress thresholds. A PFC frame received on a
//!   port ([`TrafficManager::pfc_pause`]) holds the queues mapped to its class for its quanta.
//!   With `pfc_dynamic_per_mille` the thresholds are the HPCC ns-3 artifact's dynamic ones
//!   instead: a fraction of the free cells of the group's pool, with the headroom counted
//!   apart (`TmParams::pfc_dynamic_per_mille` has the rule).
//! - **Ghost feed.** Queues whose depth changed are reported to the ingress pipes,
//!   round-robin, `ghost_updates_per_cycle` per TM pipe per cycle, `ghost_latency_cycles`
//!   later ([`ghost`]).
//! - **Egress metadata.** A dequeue returns the exact queue depths and times the egress
//!   pipeline may read, and the 2-bit congestion levels of the queue at enqueue and dequeue
//!   (`queue_congest_cells`) and of every pool at dequeue (`app_pool_congest_percent`)
//!   ([`Dequeued`]).
//!
//! Every change of state happens in a call (`enqueue`, `dequeue`, `afc`, `pfc_pause`,
//! `note_mac_frame`), and `next_event` names the first cycle at which a dequeue can happen or
//! a pause request takes effect, so jumping over quiet cycles gives the same results as
//! stepping through them. [`mac::MacTx`] serializes frames at the port's rate.

pub mod ghost;
pub mod mac;
pub mod params;
pub mod queue;
mod sched;
pub mod shaper;

pub use mac::MacTx;
pub use params::{TmParams, APP_POOLS, CLASSES};
pub use queue::{QueueConfig, QueueStats, MAX_WEIGHT, PRIORITIES};

use ghost::{Ghost, GhostUpdate};
use queue::{Queue, Queued};
use sched::{bit, PortScheduler};
use std::cell::Cell;
use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use t2_clock::{Clock, Cycle, LineRate, PREAMBLE_AND_IFG_BYTES};

/// A packet as the TM sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// The chip's packet handle; opaque here.
    pub pkt: u32,
    /// Frame length, FCS included.
    pub frame_bytes: u32,
    /// Chip port index the packet came in on.
    pub ingress_port: u16,
    /// Chip port index it goes out of.
    pub egress_port: u16,
    /// Queue within the egress port, as ingress chose it (taken modulo the port's queues).
    pub qid: u8,
    /// Class of service for ingress accounting and PFC (`ingress_cos`, 0..=7, taken mod 8).
    pub ingress_cos: u8,
}

impl Descriptor {
    /// Bytes the frame takes on the wire, preamble and inter-frame gap included: what the
    /// DWRR credit and the rate buckets count.
    pub fn wire_bytes(&self) -> u64 {
        self.frame_bytes as u64 + PREAMBLE_AND_IFG_BYTES
    }
}

/// A descriptor leaving its queue, with the queue metadata the egress pipeline can read
/// (Tofino2's `enq_qdepth`, `deq_qdepth`, `enq_tstamp`, `deq_timedelta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub desc: Descriptor,
    /// The queue within the egress port it left (`qid % queues of the port`).
    pub queue: u8,
    /// Cells in the queue just before the packet joined it.
    pub enq_qdepth: u32,
    /// Cells left in the queue just after the packet left it.
    pub deq_qdepth: u32,
    /// Cycle the packet was admitted. (Tofino2 gives nanoseconds; the chip converts.)
    pub enq_tstamp: Cycle,
    /// Cycles from admission to this dequeue.
    pub deq_timedelta: Cycle,
    /// `enq_congest_stat`: how many of `queue_congest_cells` `enq_qdepth` reached (0..=3).
    pub enq_congest_stat: u8,
    /// `deq_congest_stat`: the same for `deq_qdepth`.
    pub deq_congest_stat: u8,
    /// `app_pool_congest_stat`: 2 bits per pool (pool `p` in bits `2p..2p+2`), each how
    /// many of `app_pool_congest_percent` the pool's occupancy reached just after this
    /// dequeue.
    pub app_pool_congest_stat: u8,
}

/// Why the TM dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TmDrop {
    /// The shared buffer had too few free cells.
    BufferFull,
    /// The queue would have passed its static cell limit.
    QueueLimit,
    /// The queue was at its dynamic threshold, `alpha x` the free cells.
    DynamicThreshold,
    /// A lossless class's priority group had used its XOFF threshold and all its headroom.
    PfcHeadroom,
    /// The queue's application pool had too few free cells.
    PoolFull,
}

impl TmDrop {
    pub const ALL: [TmDrop; 5] = [
        TmDrop::BufferFull,
        TmDrop::QueueLimit,
        TmDrop::DynamicThreshold,
        TmDrop::PfcHeadroom,
        TmDrop::PoolFull,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TmDrop::BufferFull => "tm_buffer_full",
            TmDrop::QueueLimit => "tm_queue_limit",
            TmDrop::DynamicThreshold => "tm_dynamic_threshold",
            TmDrop::PfcHeadroom => "tm_pfc_headroom",
            TmDrop::PoolFull => "tm_pool_full",
        }
    }
}

/// A TM set-up or request that cannot be honoured, naming what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmError {
    pub what: String,
    pub problem: String,
}

impl fmt::Display for TmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.problem)
    }
}

impl std::error::Error for TmError {}

/// How the TM is wired to one egress port.
#[derive(Clone, Debug)]
pub struct TmPort {
    /// The pipe whose egress serves the port.
    pub pipe: usize,
    /// The port's line rate.
    pub line: LineRate,
    /// The 8-channel port group (MAC) the port belongs to, numbered across the chip.
    pub group: usize,
    /// Channels of the group the port uses, and channels in the group.
    pub channels: u32,
    pub group_channels: u32,
    /// The first channel of the group the port uses: its queues sit in the group's 128 from
    /// `channel x queues_per_port_group / group_channels` on (see [`TrafficManager::afc_queue`]).
    pub channel: u32,
    /// The port's queues; `None` gives `default_queues_per_port` queues of the default
    /// configuration.
    pub queues: Option<Vec<QueueConfig>>,
}

impl TmPort {
    /// A port with the default queues.
    pub fn new(
        pipe: usize,
        line: LineRate,
        group: usize,
        channels: u32,
        group_channels: u32,
    ) -> TmPort {
        TmPort {
            pipe,
            line,
            group,
            channels,
            group_channels,
            channel: 0,
            queues: None,
        }
    }

    /// The port starting at channel `channel` of its group (0 unless set).
    pub fn at_channel(mut self, channel: u32) -> TmPort {
        self.channel = channel;
        self
    }

    /// Index in its group's queues of the port's first queue.
    pub fn first_group_queue(&self, params: &TmParams) -> u32 {
        self.channel * params.queues_per_port_group / self.group_channels.max(1)
    }

    /// Most queues the port may have: its channels' share of the group's queues.
    pub fn max_queues(&self, params: &TmParams) -> u32 {
        params.queues_per_port_group * self.channels / self.group_channels.max(1)
    }
}

#[derive(Clone, Debug)]
struct PortState {
    pipe: usize,
    /// Index of the port among its pipe's ports.
    pipe_slot: usize,
    line: LineRate,
    group: usize,
    channels: u32,
    group_channels: u32,
    channel: u32,
    queues: Vec<Queue>,
    sched: PortScheduler,
    depth_cells: u32,
    peak_cells: u32,
    /// Line time at which the MAC will have sent everything dequeued so far.
    tx_free_ticks: u64,
    enqueued: u64,
    dequeued: u64,
    /// The first cycle this port may send (`Some(None)`: not until something changes), or
    /// `None` when it must be worked out again. Kept per port so that a change to one port
    /// (a dequeue, a new head, a pause) costs its pipe one port's work, not every port's.
    ready_at: Cell<Option<Option<Cycle>>>,
}

#[derive(Clone, Debug, Default)]
struct PipeScheduler {
    ports: Vec<usize>,
    next: usize,
    /// How many of `ports` hold a packet: an idle pipe is passed over at once.
    backlogged_ports: usize,
    /// The first cycle at which one of `ports` may send (`Some(None)`: none can until
    /// something changes), or `None` when it must be worked out again. A port's readiness
    /// changes only when its queues, its MAC or its pauses do, and each of those marks its
    /// pipe's value stale ([`TrafficManager::touch`]), so a pipe polled on every chip visit
    /// costs one comparison until then.
    ready_at: Cell<Option<Option<Cycle>>>,
}

/// A pause or resume waiting for its latency to pass.
#[derive(Clone, Copy, Debug)]
struct PauseRequest {
    apply_at: Cycle,
    port: usize,
    what: PauseKind,
}

#[derive(Clone, Copy, Debug)]
enum PauseKind {
    /// AFC: set or clear one queue's pause bit.
    Afc { queue: usize, pause: bool },
    /// PFC received: hold the queues of `class` until cycle `until` (exclusive).
    Pfc { class: u8, until: Cycle },
}

/// An XOFF or XON the TM asks to be sent out of an ingress port for one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEvent {
    /// Cycle of the enqueue or dequeue that crossed the threshold.
    pub at: Cycle,
    pub ingress_port: u16,
    pub class: u8,
    /// `true` for XOFF (pause), `false` for XON (resume).
    pub xoff: bool,
}

/// Cells held per ingress port and class (Tofino2's port priority groups).
#[derive(Clone, Debug)]
struct PriorityGroups {
    cells: Vec<u32>,
    /// Of `cells`, those charged to the group's guaranteed minimum (`ppg_min_cells`).
    min_cells: Vec<u32>,
    /// Under the dynamic threshold, of `cells`, those the group holds in its headroom: a
    /// count, as the artifact keeps it, that admissions past the threshold raise and every
    /// dequeue of the group drains first (the cells themselves are charged to the pool).
    /// The group's shared cells are the rest beyond its minimum.
    headroom_cells: Vec<u32>,
    xoff: Vec<bool>,
    /// For each group in XOFF, the cycle its next refreshing XOFF is due
    /// (`pfc_refresh_percent`), also kept as (cycle, group) in `refresh_queue`, earliest first.
    refresh_at: Vec<Option<Cycle>>,
    refresh_queue: BTreeSet<(Cycle, usize)>,
    events: VecDeque<PfcEvent>,
}

/// One application pool's size and occupancy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Cells the pool may hold.
    pub size_cells: u32,
    /// Cells charged to it now, and at most so far. Lossless traffic may take it past its
    /// size (PFC, not the pool, bounds it).
    pub used_cells: u32,
    pub peak_cells: u32,
}

/// Per-port counters and depths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortStats {
    pub depth_cells: u32,
    pub peak_cells: u32,
    pub queued_packets: usize,
    pub enqueued: u64,
    pub dequeued: u64,
}

/// The traffic manager of one chip.
#[derive(Clone, Debug)]
pub struct TrafficManager {
    params: TmParams,
    clock: Clock,
    /// Cycles from a dequeue to the packet reaching its MAC (the egress pipeline between).
    mac_lead: Cycle,
    ports: Vec<PortState>,
    pipes: Vec<PipeScheduler>,
    free_cells: u32,
    pools: [PoolStats; APP_POOLS],
    drops: [u64; TmDrop::ALL.len()],
    /// AFC requests in the order they take effect.
    afc_pending: VecDeque<PauseRequest>,
    /// The cycles at which a PFC hold ends, kept only while a tracer watches the holds
    /// ([`TrafficManager::keep_pfc_releases`]) so that a jumping kernel visits each end.
    /// A hold that a later frame extends or ends leaves its old cycle here: visiting a
    /// cycle in which nothing changes is harmless.
    pfc_releases: Option<BTreeSet<Cycle>>,
    groups: PriorityGroups,
    ghost: Ghost,
}

impl TrafficManager {
    /// A TM for `ports` (indexed as the chip indexes them) in a chip of `pipes` pipes, on
    /// `clock`. `mac_lead` is the number of cycles between a dequeue and the packet reaching
    /// the MAC. A port on a pipe beyond `pipes`, or queues that cannot be carved from the
    /// ports' groups, are errors naming the port.
    pub fn new(
        params: TmParams,
        clock: Clock,
        pipes: usize,
        ports: &[TmPort],
        mac_lead: Cycle,
    ) -> Result<TrafficManager, TmError> {
        params
            .validate()
            .map_err(|(what, problem)| TmError { what, problem })?;
        let pool_sizes = params
            .pool_sizes(ports.len())
            .map_err(|(what, problem)| TmError { what, problem })?;
        let pools = pool_sizes.map(|size_cells| PoolStats {
            size_cells,
            ..PoolStats::default()
        });
        let mut scheds = vec![PipeScheduler::default(); pipes];
        let mut states = Vec::with_capacity(ports.len());
        for (i, p) in ports.iter().enumerate() {
            if p.pipe >= pipes {
                return Err(TmError {
                    what: format!("port {i}"),
                    problem: format!("is on pipe {} but the chip has pipes 0..{pipes}", p.pipe),
                });
            }
            let pipe_slot = scheds[p.pipe].ports.len();
            scheds[p.pipe].ports.push(i);
            let configs = p.queues.clone().unwrap_or_else(|| {
                vec![QueueConfig::default(); params.default_queues_per_port as usize]
            });
            check_queues(&params, &pools, i, p, &configs)?;
            let queues = build_queues(&params, clock, &configs);
            states.push(PortState {
                pipe: p.pipe,
                pipe_slot,
                line: p.line,
                group: p.group,
                channels: p.channels,
                group_channels: p.group_channels,
                channel: p.channel,
                sched: PortScheduler::new(&queues, params.dwrr_quantum_bytes),
                queues,
                depth_cells: 0,
                peak_cells: 0,
                tx_free_ticks: 0,
                enqueued: 0,
                dequeued: 0,
                ready_at: Cell::new(None),
            });
        }
        let ghost = Ghost::new(
            params.ghost_updates_per_cycle,
            params.ghost_latency_cycles,
            &scheds.iter().map(|s| s.ports.len()).collect::<Vec<_>>(),
            &states.iter().map(|s| s.queues.len()).collect::<Vec<_>>(),
        );
        let tm = TrafficManager {
            params,
            clock,
            mac_lead,
            ports: states,
            pipes: scheds,
            free_cells: params.buffer_cells,
            pools,
            drops: [0; TmDrop::ALL.len()],
            afc_pending: VecDeque::new(),
            pfc_releases: None,
            groups: PriorityGroups {
                cells: vec![0; ports.len() * PRIORITIES],
                min_cells: vec![0; ports.len() * PRIORITIES],
                headroom_cells: vec![0; ports.len() * PRIORITIES],
                xoff: vec![false; ports.len() * PRIORITIES],
                refresh_at: vec![None; ports.len() * PRIORITIES],
                refresh_queue: BTreeSet::new(),
                events: VecDeque::new(),
            },
            ghost,
        };
        tm.check_groups()?;
        Ok(tm)
    }

    /// Replaces port `port`'s queues. The port must hold no packet; the new carving must fit
    /// the port's share of its group, and the group's 128 queues.
    pub fn set_port_queues(&mut self, port: usize, configs: &[QueueConfig]) -> Result<(), TmError> {
        let what = format!("port {port}");
        let state = self.ports.get(port).ok_or_else(|| TmError {
            what: what.clone(),
            problem: format!("does not exist (the TM has {} ports)", self.ports.len()),
        })?;
        if state.depth_cells > 0 || self.afc_pending.iter().any(|r| r.port == port) {
            return Err(TmError {
                what,
                problem: "cannot change its queues while packets or AFC requests are pending"
                    .into(),
            });
        }
        let spec = TmPort {
            pipe: state.pipe,
            line: state.line,
            group: state.group,
            channels: state.channels,
            group_channels: state.group_channels,
            channel: state.channel,
            queues: None,
        };
        check_queues(&self.params, &self.pools, port, &spec, configs)?;
        let old = std::mem::replace(
            &mut self.ports[port].queues,
            build_queues(&self.params, self.clock, configs),
        );
        if let Err(e) = self.check_groups() {
            self.ports[port].queues = old;
            return Err(e);
        }
        let state = &mut self.ports[port];
        state.sched = PortScheduler::new(&state.queues, self.params.dwrr_quantum_bytes);
        self.ghost.resize_port(port, configs.len());
        self.touch(port);
        Ok(())
    }

    /// Every port group's ports together have at most `queues_per_port_group` queues.
    fn check_groups(&self) -> Result<(), TmError> {
        let mut used: Vec<(usize, u32)> = Vec::new();
        for p in &self.ports {
            match used.iter_mut().find(|(g, _)| *g == p.group) {
                Some((_, n)) => *n += p.queues.len() as u32,
                None => used.push((p.group, p.queues.len() as u32)),
            }
        }
        match used
            .iter()
            .find(|(_, n)| *n > self.params.queues_per_port_group)
        {
            Some((g, n)) => Err(TmError {
                what: format!("port group {g}"),
                problem: format!(
                    "its ports have {n} queues in all, more than its {}",
                    self.params.queues_per_port_group
                ),
            }),
            None => Ok(()),
        }
    }

    pub fn params(&self) -> &TmParams {
        &self.params
    }

    /// Admits a descriptor at `now`, or drops it with the reason (and counts the drop).
    /// Its egress and ingress ports must be ports of this TM (the chip makes them so).
    pub fn enqueue(&mut self, now: Cycle, desc: Descriptor) -> Result<(), TmDrop> {
        self.ghost_catch_up(now);
        let cells = self.params.cells_for(desc.frame_bytes as u64);
        let free = self.free_cells;
        let alpha = self.params.dynamic_threshold_alpha_percent;
        let class = desc.ingress_cos as usize % PRIORITIES;
        let group = desc.ingress_port as usize * PRIORITIES + class;
        let lossless = self.params.pfc_lossless_classes & (1 << class) != 0;
        let group_cells = self.groups.cells[group];
        let min_room = self.groups.min_cells[group] + cells <= self.params.ppg_min_cells[class];
        let port = &mut self.ports[desc.egress_port as usize];
        let qi = desc.qid as usize % port.queues.len();
        let queue = &mut port.queues[qi];
        let pool_index = queue.config.app_pool;
        let pool = &mut self.pools[pool_index as usize];
        let pool_free = pool.size_cells.saturating_sub(pool.used_cells);
        let mut into_headroom = false;
        // Where the cells are charged: the group's guaranteed minimum while it lasts, else
        // the queue's pool. The queue's static limit is a hard cap for lossy traffic, the
        // minimum included.
        let verdict = if cells > free {
            Err(TmDrop::BufferFull)
        } else if lossless {
            // Lossless traffic is held back by PFC, not by the pool or egress thresholds.
            let room = self.params.pfc_xoff_cells + self.params.pfc_headroom_cells;
            if min_room {
                Ok(None)
            } else if let Some(a) = self.params.pfc_dynamic_per_mille {
                let headroom = self.groups.headroom_cells[group];
                let shared = group_cells - self.groups.min_cells[group] - headroom;
                if shared + cells <= dynamic_threshold(a, pool_free) {
                    Ok(Some(pool_index))
                } else if headroom + cells <= self.params.pfc_headroom_cells {
                    into_headroom = true;
                    Ok(Some(pool_index))
                } else {
                    Err(TmDrop::PfcHeadroom)
                }
            } else if group_cells + cells > room {
                Err(TmDrop::PfcHeadroom)
            } else {
                Ok(Some(pool_index))
            }
        } else if queue
            .limit_cells
            .is_some_and(|limit| queue.depth_cells + cells > limit)
        {
            Err(TmDrop::QueueLimit)
        } else if min_room {
            Ok(None)
        } else if cells > pool_free {
            Err(TmDrop::PoolFull)
        } else if alpha
            .is_some_and(|a| queue.depth_cells as u64 * 100 >= a as u64 * pool_free as u64)
        {
            Err(TmDrop::DynamicThreshold)
        } else {
            Ok(Some(pool_index))
        };
        let charge = match verdict {
            Ok(charge) => charge,
            Err(reason) => {
                self.drops[reason as usize] += 1;
                return Err(reason);
            }
        };
        match charge {
            Some(_) => {
                pool.used_cells += cells;
                pool.peak_cells = pool.peak_cells.max(pool.used_cells);
            }
            None => self.groups.min_cells[group] += cells,
        }
        self.free_cells -= cells;
        queue.fifo.push_back(Queued {
            desc,
            cells,
            enq_at: now,
            enq_qdepth: queue.depth_cells,
            enq_congest_stat: congest_level(queue.depth_cells, &self.params.queue_congest_cells),
            pool: charge,
            ready_at: now + self.params.queue_latency_cycles as Cycle,
        });
        queue.depth_cells += cells;
        queue.peak_cells = queue.peak_cells.max(queue.depth_cells);
        queue.enqueued += 1;
        if port.sched.backlogged == 0 {
            self.pipes[port.pipe].backlogged_ports += 1;
        }
        if port.sched.backlogged & bit(qi) == 0 {
            // A new head; a longer queue with the same head is no readier.
            self.pipes[port.pipe].ready_at.set(None);
            port.ready_at.set(None);
        }
        port.sched.backlogged |= bit(qi);
        self.ghost.mark(port.pipe, port.pipe_slot, qi);
        port.depth_cells += cells;
        port.peak_cells = port.peak_cells.max(port.depth_cells);
        port.enqueued += 1;
        self.groups.cells[group] += cells;
        if into_headroom {
            self.groups.headroom_cells[group] += cells;
        }
        let ask_xoff = match self.params.pfc_dynamic_per_mille {
            None => group_cells + cells > self.params.pfc_xoff_cells,
            Some(a) => {
                let pool = &self.pools[pool_index as usize];
                let threshold =
                    dynamic_threshold(a, pool.size_cells.saturating_sub(pool.used_cells));
                let headroom = self.groups.headroom_cells[group];
                headroom > 0 || self.shared_cells(group) >= threshold
            }
        };
        if lossless && !self.groups.xoff[group] && ask_xoff {
            self.groups.xoff[group] = true;
            self.groups.events.push_back(PfcEvent {
                at: now,
                ingress_port: desc.ingress_port,
                class: class as u8,
                xoff: true,
            });
            self.schedule_pfc_refresh(group, now);
        }
        Ok(())
    }

    /// Asks for queue `qid % n` of port `port` to be paused (`pause`) or resumed, as the
    /// deparser's `adv_flow_ctl` does. The change takes effect in cycle
    /// `now + afc_latency_cycles`: dequeues before then still happen, and packets already
    /// dequeued always leave.
    pub fn afc(&mut self, now: Cycle, port: usize, qid: u8, pause: bool) -> Result<(), TmError> {
        let state = self.ports.get(port).ok_or_else(|| TmError {
            what: format!("AFC for port {port}"),
            problem: format!("no such port (the TM has {})", self.ports.len()),
        })?;
        let request = PauseRequest {
            apply_at: now + self.params.afc_latency_cycles as Cycle,
            port,
            what: PauseKind::Afc {
                queue: qid as usize % state.queues.len(),
                pause,
            },
        };
        self.request_pause(request);
        Ok(())
    }

    /// The port and queue that queue `group_queue` of port group `group` (its index among the
    /// group's `queues_per_port_group`, as an AFC message's `qid` names it) is, or `None` if
    /// no port's queues sit there. A port's queues sit in order from
    /// [`TmPort::first_group_queue`]: the queues of its first channel and on.
    pub fn afc_queue(&self, group: usize, group_queue: u32) -> Option<(usize, u8)> {
        self.ports.iter().enumerate().find_map(|(i, p)| {
            let first = p.channel * self.params.queues_per_port_group / p.group_channels.max(1);
            (p.group == group && (first..first + p.queues.len() as u32).contains(&group_queue))
                .then(|| (i, (group_queue - first) as u8))
        })
    }

    /// Where queue `queue` of port `port` sits: its port group and its index among the
    /// group's queues (the inverse of [`TrafficManager::afc_queue`]).
    pub fn group_queue(&self, port: usize, queue: usize) -> Option<(usize, u32)> {
        let p = self.ports.get(port)?;
        (queue < p.queues.len()).then(|| {
            let first = p.channel * self.params.queues_per_port_group / p.group_channels.max(1);
            (p.group, first + queue as u32)
        })
    }

    fn request_pause(&mut self, request: PauseRequest) {
        // Requests keep their order; one made later never overtakes one made earlier.
        let at = self
            .afc_pending
            .partition_point(|r| r.apply_at <= request.apply_at);
        self.afc_pending.insert(at, request);
    }

    /// A PFC frame for `class` with `quanta` (units of 512 bit times at the port's speed)
    /// received on port `port` in cycle `now`: from cycle `now + 1` the port's queues whose
    /// `pfc_priority` is `class` do not send for that long; 0 quanta resumes them.
    pub fn pfc_pause(
        &mut self,
        now: Cycle,
        port: usize,
        class: u8,
        quanta: u16,
    ) -> Result<(), TmError> {
        self.ports.get(port).ok_or_else(|| TmError {
            what: format!("PFC for port {port}"),
            problem: format!("no such port (the TM has {})", self.ports.len()),
        })?;
        if class as usize >= PRIORITIES {
            return Err(TmError {
                what: format!("PFC for port {port}"),
                problem: format!("class {class} is outside 0..={}", PRIORITIES - 1),
            });
        }
        let hold = self.pause_cycles(port, quanta);
        let apply_at = now + 1;
        self.request_pause(PauseRequest {
            apply_at,
            port,
            what: PauseKind::Pfc {
                class,
                until: apply_at + hold,
            },
        });
        Ok(())
    }

    /// Tells the scheduler that a frame it did not dequeue (a PFC frame) reaches port
    /// `port`'s MAC in cycle `at`, so that it keeps counting the MAC's time exactly.
    pub fn note_mac_frame(&mut self, port: usize, at: Cycle, frame_bytes: u64) {
        let state = &mut self.ports[port];
        let arrive = state.line.cycle_to_ticks(at);
        state.tx_free_ticks =
            state.tx_free_ticks.max(arrive) + state.line.serialization_ticks(frame_bytes);
        self.touch(port);
    }

    /// Marks port `port`'s pipe's readiness as to be worked out again.
    fn touch(&self, port: usize) {
        self.ports[port].ready_at.set(None);
        self.pipes[self.ports[port].pipe].ready_at.set(None);
    }

    /// The next XOFF/XON the TM wants sent by cycle `now`, oldest first: those the
    /// thresholds asked for, then the refreshing XOFFs due by `now` of groups still over
    /// their threshold (a visit at every cycle of [`TrafficManager::next_event`] gets each
    /// in its cycle).
    pub fn pop_pfc_event(&mut self, now: Cycle) -> Option<PfcEvent> {
        if let Some(event) = self.groups.events.pop_front() {
            return Some(event);
        }
        let &(due, group) = self.groups.refresh_queue.first()?;
        if due > now {
            return None;
        }
        self.groups.refresh_queue.pop_first();
        self.schedule_pfc_refresh(group, due);
        Some(PfcEvent {
            at: due,
            ingress_port: (group / PRIORITIES) as u16,
            class: (group % PRIORITIES) as u8,
            xoff: true,
        })
    }

    /// Cycles an XOFF frame of `pfc_pause_quanta` holds the sender on port `port` for.
    fn pause_cycles(&self, port: usize, quanta: u16) -> Cycle {
        let line = self.ports[port].line;
        (quanta as u64 * 512 * line.ticks_per_bit()).div_ceil(line.ticks_per_cycle())
    }

    /// Schedules the XOFF that keeps group `group` paused, sent `pfc_refresh_percent` of the
    /// pause time after the one sent in cycle `sent` (none when the percentage is 0).
    fn schedule_pfc_refresh(&mut self, group: usize, sent: Cycle) {
        let percent = self.params.pfc_refresh_percent as u64;
        if percent == 0 {
            return;
        }
        let hold = self.pause_cycles(group / PRIORITIES, self.params.pfc_pause_quanta);
        let due = sent + (hold * percent / 100).max(1);
        self.groups.refresh_at[group] = Some(due);
        self.groups.refresh_queue.insert((due, group));
    }

    /// Of a group's cells, those beyond its minimum and outside its headroom: what the
    /// dynamic PFC threshold is compared with.
    fn shared_cells(&self, group: usize) -> u32 {
        self.groups.cells[group] - self.groups.min_cells[group] - self.groups.headroom_cells[group]
    }

    /// Under the dynamic PFC threshold, the cells a group holds in its headroom.
    pub fn priority_group_headroom_cells(&self, ingress_port: usize, class: usize) -> u32 {
        self.groups.headroom_cells[ingress_port * PRIORITIES + class]
    }

    /// The dynamic PFC threshold a lossless group of a queue in pool `pool` sees now
    /// (`None` under the static thresholds), in cells.
    pub fn pfc_dynamic_threshold(&self, pool: usize) -> Option<u32> {
        let p = &self.pools[pool];
        self.params
            .pfc_dynamic_per_mille
            .map(|a| dynamic_threshold(a, p.size_cells.saturating_sub(p.used_cells)))
    }

    /// Cells held for packets that came in on `ingress_port` with class `class`.
    pub fn priority_group_cells(&self, ingress_port: usize, class: usize) -> u32 {
        self.groups.cells[ingress_port * PRIORITIES + class]
    }

    /// Applies the AFC requests due by `now`. `dequeue` does this first; it is public so that
    /// the pause bits can be read up to date without dequeuing.
    #[inline]
    pub fn apply_due_afc(&mut self, now: Cycle) {
        // Asked on every chip visit by every pipe: the common case (nothing due, no PFC hold
        // kept) is tested here, inlined, and the work is a call of its own.
        if self.afc_pending.front().is_none_or(|r| r.apply_at > now) && self.pfc_releases.is_none()
        {
            return;
        }
        self.apply_due_afc_work(now);
    }

    #[inline(never)]
    fn apply_due_afc_work(&mut self, now: Cycle) {
        while let Some(r) = self.afc_pending.front().copied() {
            if r.apply_at > now {
                break;
            }
            self.afc_pending.pop_front();
            self.touch(r.port);
            let queues = &mut self.ports[r.port].queues;
            match r.what {
                PauseKind::Afc { queue, pause } => queues[queue].paused = pause,
                PauseKind::Pfc { class, until } => {
                    for q in queues.iter_mut() {
                        if q.config.pfc_priority == Some(class) {
                            q.pfc_paused_until = until;
                        }
                    }
                    if let Some(releases) = self.pfc_releases.as_mut() {
                        releases.insert(until);
                    }
                }
            }
        }
        if let Some(releases) = self.pfc_releases.as_mut() {
            while releases.first().is_some_and(|&t| t <= now) {
                releases.pop_first();
            }
        }
    }

    /// Keeps the cycles at which PFC holds end (for [`TrafficManager::next_pfc_release`]),
    /// or stops keeping them. A tracer of the hold bits turns this on; nothing else needs
    /// it, so a run without that tracer pays nothing for it.
    pub fn keep_pfc_releases(&mut self, keep: bool) {
        self.pfc_releases = match keep {
            true => Some(
                self.ports
                    .iter()
                    .flat_map(|p| &p.queues)
                    .map(|q| q.pfc_paused_until)
                    .collect(),
            ),
            false => None,
        };
    }

    /// The first cycle after `now` at which a PFC hold applied so far ends (while kept, see
    /// [`TrafficManager::keep_pfc_releases`]). Holds that are not yet applied are in
    /// [`TrafficManager::next_event`] already.
    pub fn next_pfc_release(&self, now: Cycle) -> Option<Cycle> {
        self.pfc_releases.as_ref()?.range(now + 1..).next().copied()
    }

    /// Whether a received PFC frame holds queue `q` of port `p` in cycle `now`: from the
    /// cycle the frame takes effect up to, not including, the cycle its quanta run out or
    /// an XON for the class takes effect. Requests due by `now` must have been applied
    /// (`apply_due_afc`; `dequeue` does it).
    pub fn pfc_paused(&self, p: usize, q: usize, now: Cycle) -> bool {
        self.ports[p].queues[q].pfc_paused_until > now
    }

    /// The first cycle at which port `p` may send, or `None` if no queue can until
    /// something changes.
    fn port_ready_at(&self, p: usize) -> Option<Cycle> {
        let port = &self.ports[p];
        let queue_ready = port.sched.eligible_from(&port.queues)?;
        Some(queue_ready.max(self.mac_ready_at(p)))
    }

    /// The first cycle at which port `p`'s MAC can take a dequeued packet: it must finish
    /// what it has by the end of the cycle the packet reaches it, so dequeue at d is allowed
    /// when tx_free < (d + mac_lead + 1) * ticks_per_cycle.
    fn mac_ready_at(&self, p: usize) -> Cycle {
        let port = &self.ports[p];
        (port.tx_free_ticks / port.line.ticks_per_cycle()).saturating_sub(self.mac_lead)
    }

    /// The first cycle at which some port of pipe `pipe` may send; see
    /// [`PipeScheduler::ready_at`].
    #[inline]
    fn pipe_ready_at(&self, pipe: usize) -> Option<Cycle> {
        // Asked for every pipe on every chip visit, twice: the kept value is read inline,
        // working it out again is a call of its own.
        let state = &self.pipes[pipe];
        if let Some(cached) = state.ready_at.get() {
            debug_assert_eq!(
                cached,
                self.pipe_ready_now(pipe),
                "stale readiness of pipe {pipe}"
            );
            return cached;
        }
        self.pipe_ready_work(pipe)
    }

    #[inline(never)]
    fn pipe_ready_work(&self, pipe: usize) -> Option<Cycle> {
        let state = &self.pipes[pipe];
        let ready = self.pipe_ready_now(pipe);
        state.ready_at.set(Some(ready));
        ready
    }

    /// The pipe's readiness from its ports' kept values.
    fn pipe_ready_now(&self, pipe: usize) -> Option<Cycle> {
        let state = &self.pipes[pipe];
        if state.backlogged_ports == 0 {
            return None;
        }
        state
            .ports
            .iter()
            .filter_map(|&p| self.port_ready_kept(p))
            .min()
    }

    /// [`TrafficManager::port_ready_at`], kept until the port changes (`touch`).
    fn port_ready_kept(&self, p: usize) -> Option<Cycle> {
        let port = &self.ports[p];
        if let Some(kept) = port.ready_at.get() {
            debug_assert_eq!(kept, self.port_ready_at(p), "stale readiness of port {p}");
            return kept;
        }
        let ready = self.port_ready_at(p);
        port.ready_at.set(Some(ready));
        ready
    }

    /// Whether port `p` may send at `now`.
    fn port_ready_by(&self, p: usize, now: Cycle) -> bool {
        self.port_ready_kept(p).is_some_and(|t| t <= now)
    }

    /// Picks the packet that pipe `pipe`'s egress takes at `now`, if any.
    ///
    /// Every pipe asks on every chip visit and most find nothing ready: that test is inlined
    /// into the caller and a dequeue is a call of its own.
    #[inline]
    pub fn dequeue(&mut self, pipe: usize, now: Cycle) -> Option<Dequeued> {
        self.apply_due_afc(now);
        if self.pipe_ready_at(pipe).is_none_or(|t| t > now) {
            return None;
        }
        self.dequeue_ready(pipe, now)
    }

    #[inline(never)]
    fn dequeue_ready(&mut self, pipe: usize, now: Cycle) -> Option<Dequeued> {
        debug_assert_eq!(
            self.pipes[pipe].backlogged_ports,
            self.pipes[pipe]
                .ports
                .iter()
                .filter(|&&p| self.ports[p].sched.backlogged != 0)
                .count()
        );
        self.ghost_catch_up(now);
        let n = self.pipes[pipe].ports.len();
        let start = self.pipes[pipe].next;
        let chosen = (0..n)
            .map(|i| (start + i) % n)
            .find(|&i| self.port_ready_by(self.pipes[pipe].ports[i], now))?;
        self.pipes[pipe].next = (chosen + 1) % n;
        let p = self.pipes[pipe].ports[chosen];
        self.touch(p);
        let port = &mut self.ports[p];
        debug_assert_eq!(port.pipe, pipe);
        let qi = port
            .sched
            .choose(&mut port.queues, now)
            .expect("a ready port has a queue that may send");
        let queue = &mut port.queues[qi];
        debug_assert!(!queue.paused);
        let head = queue.fifo.pop_front().expect("a chosen queue has a head");
        queue.depth_cells -= head.cells;
        queue.dequeued += 1;
        if queue.fifo.is_empty() {
            port.sched.backlogged &= !bit(qi);
            if port.sched.backlogged == 0 {
                self.pipes[pipe].backlogged_ports -= 1;
            }
            // DWRR: an emptied queue keeps no credit.
            queue.deficit = 0;
        }
        let frame = head.desc.frame_bytes as u64;
        if let Some(b) = queue.min_rate.as_mut() {
            b.charge(now, frame);
        }
        if let Some(b) = queue.max_rate.as_mut() {
            b.charge(now, frame);
        }
        let deq_qdepth = queue.depth_cells;
        self.ghost.mark(pipe, port.pipe_slot, qi);
        let class = head.desc.ingress_cos as usize % PRIORITIES;
        let group = head.desc.ingress_port as usize * PRIORITIES + class;
        self.groups.cells[group] -= head.cells;
        match head.pool {
            Some(p) => self.pools[p as usize].used_cells -= head.cells,
            None => self.groups.min_cells[group] -= head.cells,
        }
        let app_pool = queue.config.app_pool as usize;
        let headroom = &mut self.groups.headroom_cells[group];
        *headroom -= (*headroom).min(head.cells);
        let ask_xon = match self.params.pfc_dynamic_per_mille {
            None => self.groups.cells[group] <= self.params.pfc_xon_cells,
            Some(a) => {
                let pool = &self.pools[app_pool];
                let threshold =
                    dynamic_threshold(a, pool.size_cells.saturating_sub(pool.used_cells));
                let g = &self.groups;
                let shared = g.cells[group] - g.min_cells[group] - g.headroom_cells[group];
                self.groups.headroom_cells[group] == 0
                    && (shared == 0 || shared + self.params.pfc_resume_offset_cells <= threshold)
            }
        };
        if self.groups.xoff[group] && ask_xon {
            self.groups.xoff[group] = false;
            if let Some(due) = self.groups.refresh_at[group].take() {
                self.groups.refresh_queue.remove(&(due, group));
            }
            self.groups.events.push_back(PfcEvent {
                at: now,
                ingress_port: head.desc.ingress_port,
                class: class as u8,
                xoff: false,
            });
        }
        port.depth_cells -= head.cells;
        port.dequeued += 1;
        self.free_cells += head.cells;
        let arrive = port.line.cycle_to_ticks(now + self.mac_lead);
        port.tx_free_ticks = port.tx_free_ticks.max(arrive) + port.line.serialization_ticks(frame);
        Some(Dequeued {
            desc: head.desc,
            queue: qi as u8,
            enq_qdepth: head.enq_qdepth,
            deq_qdepth,
            enq_tstamp: head.enq_at,
            deq_timedelta: now - head.enq_at,
            enq_congest_stat: head.enq_congest_stat,
            deq_congest_stat: congest_level(deq_qdepth, &self.params.queue_congest_cells),
            app_pool_congest_stat: self.app_pool_congest_stat(),
        })
    }

    /// Tofino2's `app_pool_congest_stat` now: 2 bits per pool, pool `p` in bits `2p..2p+2`,
    /// each the number of `app_pool_congest_percent` thresholds its occupancy has reached.
    pub fn app_pool_congest_stat(&self) -> u8 {
        let pct = &self.params.app_pool_congest_percent;
        self.pools.iter().enumerate().fold(0, |acc, (p, pool)| {
            // used / size >= t / 100, without division; an empty pool is never congested.
            let level = pct
                .iter()
                .filter(|&&t| {
                    pool.size_cells > 0
                        && pool.used_cells as u64 * 100 >= t as u64 * pool.size_cells as u64
                })
                .count() as u8;
            acc | level << (2 * p)
        })
    }

    /// Size and occupancy of application pool `pool` (0..=3).
    pub fn pool_stats(&self, pool: usize) -> PoolStats {
        self.pools[pool]
    }

    /// Of the cells held for (`ingress_port`, `class`), those charged to its guaranteed
    /// minimum rather than to a pool.
    pub fn priority_group_min_cells(&self, ingress_port: usize, class: usize) -> u32 {
        self.groups.min_cells[ingress_port * PRIORITIES + class]
    }

    /// The first cycle after `now` at which some pipe can dequeue or an AFC request takes
    /// effect.
    pub fn next_event(&self, now: Cycle) -> Option<Cycle> {
        // A plain minimum (`Cycle::MAX`: none), raised to the next cycle at the end: the
        // chip asks after every visit.
        let mut next = self.afc_pending.front().map_or(Cycle::MAX, |r| r.apply_at);
        if let Some(&(due, _)) = self.groups.refresh_queue.first() {
            next = next.min(due);
        }
        for pipe in 0..self.pipes.len() {
            next = next.min(self.pipe_ready_at(pipe).unwrap_or(Cycle::MAX));
        }
        (next != Cycle::MAX).then(|| next.max(now + 1))
    }

    /// Brings the ghost feed up to cycle `now`: sends the updates of the cycles before it and
    /// delivers those due by `now`. `enqueue` and `dequeue` do this first.
    pub fn ghost_catch_up(&mut self, now: Cycle) {
        let pipes = &self.pipes;
        let ports = &self.ports;
        self.ghost.catch_up(
            now,
            |pipe, local| pipes[pipe].ports[local],
            |port, queue| ports[port].queues.get(queue).map(|q| q.depth_cells),
        );
    }

    /// The depth in cells of queue `queue` of port `port` as the ingress pipes have heard it
    /// from the ghost feed by cycle `now` (0 before any update).
    pub fn ghost_qlength(&mut self, now: Cycle, port: usize, queue: usize) -> u32 {
        self.ghost_catch_up(now);
        self.ghost.seen(port, queue)
    }

    /// Keeps the ghost updates delivered from now on for [`TrafficManager::take_ghost_delivered`]
    /// (the chip runs them as ghost PHVs or traces them), or stops keeping them.
    pub fn keep_ghost_delivered(&mut self, keep: bool) {
        self.ghost.keep_delivered(keep);
    }

    /// Brings the ghost feed up to `now` and moves the updates delivered since the last call
    /// (delivery cycle, update), in delivery order, into `out`. Only kept updates are
    /// returned ([`TrafficManager::keep_ghost_delivered`]); a caller that visits every
    /// cycle of [`TrafficManager::ghost_next_delivery`] gets each in its delivery cycle.
    pub fn take_ghost_delivered(&mut self, now: Cycle, out: &mut Vec<(Cycle, GhostUpdate)>) {
        self.ghost_catch_up(now);
        self.ghost.take_delivered(out);
    }

    /// The next cycle at which a ghost update reaches the ingress pipes, as far as the
    /// depths so far tell.
    pub fn ghost_next_delivery(&self) -> Option<Cycle> {
        self.ghost.next_delivery()
    }

    /// Ghost updates sent so far.
    pub fn ghost_updates_sent(&self) -> u64 {
        self.ghost.sent()
    }

    /// Pipes that have at least one port with a packet queued.
    pub fn pipe_has_work(&self, pipe: usize) -> bool {
        self.pipes[pipe]
            .ports
            .iter()
            .any(|&p| self.ports[p].depth_cells > 0)
    }

    pub fn free_cells(&self) -> u32 {
        self.free_cells
    }

    /// Descriptors held in all queues.
    pub fn queued_packets(&self) -> usize {
        self.ports
            .iter()
            .flat_map(|p| &p.queues)
            .map(|q| q.fifo.len())
            .sum()
    }

    pub fn port_stats(&self, p: usize) -> PortStats {
        let s = &self.ports[p];
        PortStats {
            depth_cells: s.depth_cells,
            peak_cells: s.peak_cells,
            queued_packets: s.queues.iter().map(|q| q.fifo.len()).sum(),
            enqueued: s.enqueued,
            dequeued: s.dequeued,
        }
    }

    /// Cells queued for port `p`, all its queues (cheap: kept as the port's total).
    pub fn port_depth_cells(&self, p: usize) -> u32 {
        self.ports[p].depth_cells
    }

    /// Queues of port `p`.
    pub fn queue_count(&self, p: usize) -> usize {
        self.ports[p].queues.len()
    }

    /// How queue `q` of port `p` is scheduled and limited.
    pub fn queue_config(&self, p: usize, q: usize) -> &QueueConfig {
        &self.ports[p].queues[q].config
    }

    /// Counters and state of queue `q` of port `p`.
    pub fn queue_stats(&self, p: usize, q: usize) -> QueueStats {
        self.ports[p].queues[q].stats()
    }

    /// Whether queue `q` of port `p` may send in cycle `now` as far as the queue itself is
    /// concerned (backlogged, not paused or held, head old enough, shaper conforming), and
    /// whether it is below its min-rate guarantee. Pause requests due by `now` must have
    /// been applied (`apply_due_afc`). For tests and monitors.
    pub fn queue_may_send(&self, p: usize, q: usize, now: Cycle) -> (bool, bool) {
        let queue = &self.ports[p].queues[q];
        let may = queue.eligible(now);
        (may, may && queue.below_guarantee(now))
    }

    /// Packets dropped for `reason` so far.
    pub fn drops(&self, reason: TmDrop) -> u64 {
        self.drops[reason as usize]
    }
}

/// How many of the ascending `thresholds` `depth` has reached: a 2-bit congestion status.
fn congest_level(depth: u32, thresholds: &[u32; 3]) -> u8 {
    thresholds.iter().filter(|&&t| depth >= t).count() as u8
}

/// Checks that `configs` can be port `i`'s queues.
fn check_queues(
    params: &TmParams,
    pools: &[PoolStats; APP_POOLS],
    i: usize,
    port: &TmPort,
    configs: &[QueueConfig],
) -> Result<(), TmError> {
    if port.channels == 0 || port.channel + port.channels > port.group_channels {
        return Err(TmError {
            what: format!("port {i}"),
            problem: format!(
                "uses {} channels of a group of {} from channel {}",
                port.channels, port.group_channels, port.channel
            ),
        });
    }
    let n = configs.len() as u32;
    let min = params.default_queues_per_port;
    let max = port.max_queues(params);
    if !(min..=max).contains(&n) {
        return Err(TmError {
            what: format!("port {i}"),
            problem: format!(
                "{n} queues is outside {min}..={max}: a port using {} of its group's {} channels gets at most that share of the group's {} queues, and at least default_queues_per_port",
                port.channels, port.group_channels, params.queues_per_port_group
            ),
        });
    }
    for (q, c) in configs.iter().enumerate() {
        let what = format!("port {i} queue {q}");
        c.validate().map_err(|problem| TmError {
            what: what.clone(),
            problem,
        })?;
        if pools[c.app_pool as usize].size_cells == 0 {
            // Every lossy packet of the queue would be dropped: a set-up error, not traffic.
            return Err(TmError {
                what,
                problem: format!("app_pool {} has no cells (tm.app_pool_cells)", c.app_pool),
            });
        }
    }
    Ok(())
}

/// `per_mille / 1000` of `free_cells`, rounded down: the dynamic PFC threshold (the
/// artifact's `free >> pfc_a_shift`, with the fraction not limited to powers of two).
fn dynamic_threshold(per_mille: u32, free_cells: u32) -> u32 {
    (free_cells as u64 * per_mille as u64 / 1000) as u32
}

fn build_queues(params: &TmParams, clock: Clock, configs: &[QueueConfig]) -> Vec<Queue> {
    configs
        .iter()
        .map(|&c| Queue::new(c, params.queue_limit_cells, clock))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_clock::Clock;

    fn tm(params: TmParams) -> TrafficManager {
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        let ports = [
            TmPort::new(0, line, 0, 2, 8),
            TmPort::new(0, line, 0, 2, 8),
            TmPort::new(1, line, 1, 2, 8),
        ];
        TrafficManager::new(params, Clock::tofino2(), 2, &ports, 10).unwrap()
    }

    fn desc(pkt: u32, egress: u16, bytes: u32) -> Descriptor {
        Descriptor {
            pkt,
            frame_bytes: bytes,
            ingress_port: 2,
            egress_port: egress,
            qid: 0,
            ingress_cos: 0,
        }
    }

    #[test]
    fn holds_packets_for_the_queue_latency_then_paces_to_the_line() {
        let mut t = tm(TmParams::default());
        t.enqueue(0, desc(1, 0, 1480)).unwrap();
        t.enqueue(0, desc(2, 0, 1480)).unwrap();
        assert_eq!(t.port_stats(0).depth_cells, 18);
        assert_eq!(t.next_event(0), Some(300));
        assert_eq!(t.dequeue(0, 299), None);
        assert_eq!(t.dequeue(0, 300).map(|d| d.desc.pkt), Some(1));
        // The MAC gets packet 1 at 310 and is busy until 490; packet 2 may reach it at 490.
        assert_eq!(t.next_event(300), Some(480));
        assert_eq!(t.dequeue(0, 479), None);
        assert_eq!(t.dequeue(0, 480).map(|d| d.desc.pkt), Some(2));
        assert_eq!(t.free_cells(), 393_216);
        assert_eq!(t.next_event(480), None);
    }

    #[test]
    fn one_dequeue_per_pipe_per_cycle_round_robin() {
        let mut t = tm(TmParams::default());
        for k in 0..2 {
            t.enqueue(0, desc(10 + k, 0, 64)).unwrap();
            t.enqueue(0, desc(20 + k, 1, 64)).unwrap();
            t.enqueue(0, desc(30 + k, 2, 64)).unwrap();
        }
        assert!(t.pipe_has_work(0) && t.pipe_has_work(1));
        let got: Vec<_> = (300..304)
            .map(|c| {
                (
                    t.dequeue(0, c).map(|d| d.desc.pkt),
                    t.dequeue(1, c).map(|d| d.desc.pkt),
                )
            })
            .collect();
        // Pipe 0 alternates its two ports; port 2 (pipe 1) must wait for its MAC.
        assert_eq!(got[0], (Some(10), Some(30)));
        assert_eq!(got[1], (Some(20), None));
        assert_eq!(got[2], (None, None));
    }

    #[test]
    fn afc_addresses_name_queues_through_the_carving() {
        let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
        // Group 3: a 100G port on channels 2-3 with 32 queues, one on channels 4-5 with 16.
        let ports = [
            TmPort::new(0, line, 3, 2, 8).at_channel(2),
            TmPort::new(0, line, 3, 2, 8).at_channel(4),
        ];
        let mut t =
            TrafficManager::new(TmParams::default(), Clock::tofino2(), 1, &ports, 10).unwrap();
        t.set_port_queues(0, &[QueueConfig::default(); 32]).unwrap();
        assert_eq!(t.afc_queue(3, 32), Some((0, 0)));
        assert_eq!(t.afc_queue(3, 63), Some((0, 31)));
        assert_eq!(t.afc_queue(3, 64), Some((1, 0)));
        assert_eq!(t.afc_queue(3, 79), Some((1, 15)));
        assert_eq!(t.afc_queue(3, 80), None, "past port 1's 16 queues");
        assert_eq!(t.afc_queue(3, 0), None, "channels 0-1 have no port");
        assert_eq!(t.afc_queue(2, 32), None, "no such group");
        assert_eq!(t.group_queue(0, 31), Some((3, 63)));
        assert_eq!(t.group_queue(1, 16), None);
        let bad = [TmPort::new(0, line, 3, 2, 8).at_channel(7)];
        let e = TrafficManager::new(TmParams::default(), Clock::tofino2(), 1, &bad, 10);
        assert!(e.unwrap_err().problem.contains("from channel 7"));
    }

    #[test]
    fn drops_are_counted_by_reason() {
        let mut t = tm(TmParams {
            buffer_cells: 20,
            queue_limit_cells: Some(10),
            ..TmParams::default()
        });
        assert!(t.enqueue(0, desc(1, 0, 1480)).is_ok()); // 9 cells
        assert_eq!(t.enqueue(0, desc(2, 0, 1480)), Err(TmDrop::QueueLimit));
        assert!(t.enqueue(0, desc(3, 1, 1480)).is_ok());
        assert_eq!(t.enqueue(0, desc(4, 2, 1480)), Err(TmDrop::BufferFull));
        assert_eq!(t.drops(TmDrop::QueueLimit), 1);
        assert_eq!(t.drops(TmDrop::BufferFull), 1);
        assert_eq!(t.queued_packets(), 2);
        assert_eq!(t.free_cells(), 2);
    }
}
