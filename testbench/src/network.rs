//! Nodes joined by links, and the kernel that advances them together.
//!
//! Each cycle has two phases: frames whose last bit reaches a node in this cycle are handed
//! to it (`Node::receive`), then nodes act (`Node::tick`). Everything a node sends in a cycle
//! arrives at the far end of its link at least one cycle later, so the order in which nodes
//! are visited within a cycle never matters. In [`Stepping::Jump`] mode the kernel visits only
//! the cycles in which a node has something to do or a frame arrives; in
//! [`Stepping::EveryCycle`] mode it visits every cycle. Both give identical results.
//!
//! A network can be split into partitions ([`Network::set_threads`]), each with its own nodes,
//! packet pool, wires and agenda. [`Network::run_until`] then runs the partitions on threads
//! in windows no longer than the shortest link between two of them (the lookahead): nothing
//! sent in a window can arrive in it, so each partition runs its window alone, and the frames
//! that crossed are handed over between windows. Frames arriving at a node in the same cycle
//! are delivered in the order they were sent (cycle, sending node, place in its tick), which
//! does not depend on how the network is split, so every split gives identical results.

use crate::agenda::Agenda;
use crate::node::{Node, Sent};
use crate::tap::{Direction, Tap, TapFrame};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::ops::DerefMut;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};

pub use crate::node::NodeId;

/// How the kernel advances time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stepping {
    /// Visit only cycles in which something can change.
    Jump,
    /// Visit every cycle (slow; used to check that jumping is exact).
    EveryCycle,
}

/// A wiring mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    NoSuchPort {
        node: String,
        port: usize,
    },
    AlreadyConnected {
        node: String,
        port: usize,
    },
    RateMismatch {
        a: String,
        b: String,
        a_bps: u64,
        b_bps: u64,
    },
    ZeroDelay,
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::NoSuchPort { node, port } => write!(f, "{node} has no port {port}"),
            LinkError::AlreadyConnected { node, port } => {
                write!(f, "{node} port {port} is already linked")
            }
            LinkError::RateMismatch { a, b, a_bps, b_bps } => write!(
                f,
                "a link joins ports of different speeds: {a} at {a_bps} b/s and {b} at {b_bps} b/s"
            ),
            LinkError::ZeroDelay => {
                write!(f, "a link needs a propagation delay of at least one cycle")
            }
        }
    }
}

impl std::error::Error for LinkError {}

#[derive(Clone, Copy, Debug)]
struct LinkEnd {
    node: usize,
    port: usize,
    delay: Cycle,
}

/// A frame on a wire. Ordered by arrival, then by when and by whom it was put on the wire,
/// so that frames arriving at a node in the same cycle are delivered in a fixed order that
/// does not depend on how the network is partitioned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct OnWire {
    arrives: Cycle,
    /// `2t + 1` for a frame sent in cycle `t`; `2t + 2` for a frame injected after cycle `t`
    /// was visited, 0 before the first visit.
    put: Cycle,
    /// The sending node (its index in the network), or the injection's number.
    from: usize,
    /// The frame's place among those its sender sent in that cycle.
    nth: usize,
    /// The receiving node: its index in the network while the frame crosses between
    /// partitions, its index in its partition once on that partition's wires.
    node: usize,
    port: usize,
    pkt: u32,
}

/// Where a node lives: its partition and its index there.
#[derive(Clone, Copy, Debug)]
struct Place {
    part: usize,
    local: usize,
}

/// The links and the placement of nodes: read by every partition, changed by none while
/// the network runs.
struct Wiring {
    /// `links[node][port]`: where a frame sent from that port goes (network indices).
    links: Vec<Vec<Option<LinkEnd>>>,
    place: Vec<Place>,
}

/// Some of the network's nodes with everything that changes as they run: a packet pool, the
/// frames on the wires into them, and their agenda. A packet lives in the pool of the
/// partition its node belongs to; a frame that crosses to another partition is copied
/// into that partition's pool when it is handed over.
struct Part {
    /// Network indices of the nodes, ascending.
    ids: Vec<usize>,
    nodes: Vec<Box<dyn Node>>,
    /// Frames on the wires into this partition's nodes, earliest arrival first.
    wires: BinaryHeap<Reverse<OnWire>>,
    /// Each node's cached `next_event`, earliest first, so a visit finds the nodes due
    /// without looking at the others.
    agenda: Agenda,
    /// Nodes due in the cycle being visited (reused).
    due: Vec<usize>,
    pool: PacketPool,
    /// The last cycle this partition has run.
    now: Cycle,
    visited: u64,
    /// Frames sent out of a port with no link; they are freed and counted here.
    unlinked_drops: u64,
    sent_buf: Vec<Sent>,
    /// `tx[node][port]`: frames and bytes (FCS included) sent onto the port's link.
    tx: Vec<Vec<LinkCount>>,
    /// Frames sent to other partitions' nodes in this window, handed over at its end.
    outbox: Vec<OnWire>,
}

/// A node with what its partition keeps of it: its next event and what it sent.
struct Seat {
    node: Box<dyn Node>,
    next: Option<Cycle>,
    tx: Vec<LinkCount>,
}

/// Nodes, links, the packet pools, and the time.
pub struct Network {
    /// One partition until [`Network::set_threads`] splits the network.
    parts: Vec<Part>,
    wiring: Wiring,
    now: Cycle,
    started: bool,
    stepping: Stepping,
    /// Frames injected so far (their order among frames arriving in the same cycle).
    injected: usize,
    /// The shortest link between two partitions (`None`: no link joins two).
    lookahead: Option<Cycle>,
    /// Watches the frames on the links (packet captures), if set.
    tap: Option<Box<dyn Tap>>,
}

/// What went out of a port onto its link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCount {
    pub frames: u64,
    /// Frame bytes with FCS (no preamble or gap).
    pub bytes: u64,
}

impl Part {
    fn new() -> Part {
        Part {
            ids: Vec::new(),
            nodes: Vec::new(),
            wires: BinaryHeap::new(),
            agenda: Agenda::default(),
            due: Vec::new(),
            pool: PacketPool::new(),
            now: 0,
            visited: 0,
            unlinked_drops: 0,
            sent_buf: Vec::new(),
            tx: Vec::new(),
            outbox: Vec::new(),
        }
    }

    /// Takes in node `id` with its next event and transmit counts.
    fn push_node(&mut self, id: usize, Seat { node, next, tx }: Seat) {
        let local = self.nodes.len();
        self.ids.push(id);
        self.nodes.push(node);
        self.agenda.push_node(next);
        debug_assert_eq!(self.agenda.next().len(), local + 1);
        self.tx.push(tx);
    }

    /// The earliest cycle in which a node is due or a frame arrives (not yet raised past
    /// `now`).
    fn earliest(&self) -> Option<Cycle> {
        let wire = self.wires.peek().map(|Reverse(w)| w.arrives);
        let node = self.agenda.earliest();
        node.into_iter().chain(wire).min()
    }

    /// Runs cycle `t` (> now): delivers arriving frames, then ticks the nodes due. A frame
    /// for another partition goes to the outbox.
    fn visit(
        &mut self,
        t: Cycle,
        me: usize,
        stepping: Stepping,
        wiring: &Wiring,
        mut tap: Option<&mut (dyn Tap + 'static)>,
    ) {
        debug_assert!(t > self.now || (t == 0 && self.visited == 0));
        self.now = t;
        self.visited += 1;
        while let Some(&Reverse(w)) = self.wires.peek() {
            if w.arrives > t {
                break;
            }
            debug_assert_eq!(w.arrives, t, "a frame arrival was skipped");
            self.wires.pop();
            let pkt = PacketHandle::from_index(w.pkt);
            if let Some(tap) = tap.as_deref_mut() {
                tap_frame(
                    tap,
                    t,
                    self.ids[w.node],
                    w.port,
                    Direction::Rx,
                    &self.pool,
                    pkt,
                );
            }
            self.nodes[w.node].receive(t, w.port, pkt, &mut self.pool);
            self.agenda.set(w.node, Some(t));
        }
        // The nodes due, in index order (every node when stepping every cycle).
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        match stepping {
            Stepping::EveryCycle => due.extend(0..self.nodes.len()),
            Stepping::Jump => {
                // Their entries stay where they are: the ticks below set new ones.
                self.agenda.find_due(t, &mut due);
                due.sort_unstable();
            }
        }
        for &n in &due {
            let id = self.ids[n];
            let mut sent = std::mem::take(&mut self.sent_buf);
            self.nodes[n].tick(t, &mut self.pool, &mut sent);
            for (nth, s) in sent.drain(..).enumerate() {
                match wiring.links[id][s.port] {
                    Some(end) => {
                        if let Some(tap) = tap.as_deref_mut() {
                            tap_frame(tap, t, id, s.port, Direction::Tx, &self.pool, s.pkt);
                        }
                        let count = &mut self.tx[n][s.port];
                        count.frames += 1;
                        count.bytes += self.pool.bytes(s.pkt).len() as u64 + t2_clock::FCS_BYTES;
                        let place = wiring.place[end.node];
                        let wire = OnWire {
                            arrives: t + end.delay,
                            put: 2 * t + 1,
                            from: id,
                            nth,
                            node: end.node,
                            port: end.port,
                            pkt: s.pkt.index(),
                        };
                        if place.part == me {
                            self.wires.push(Reverse(OnWire {
                                node: place.local,
                                ..wire
                            }));
                        } else {
                            self.outbox.push(wire);
                        }
                    }
                    None => {
                        self.unlinked_drops += 1;
                        self.pool.free(s.pkt);
                    }
                }
            }
            self.sent_buf = sent;
            let next = self.nodes[n].next_event(t);
            self.agenda.set(n, next);
        }
        self.due = due;
    }

    /// Visits every cycle of this partition up to and including `end` in which something
    /// happens (every cycle, stepping every cycle).
    fn run_until(&mut self, end: Cycle, me: usize, stepping: Stepping, wiring: &Wiring) {
        loop {
            let t = match stepping {
                Stepping::EveryCycle => self.now + 1,
                Stepping::Jump => match self.earliest() {
                    Some(t) => t.max(self.now + 1),
                    None => break,
                },
            };
            if t > end {
                break;
            }
            self.visit(t, me, stepping, wiring, None);
        }
    }
}

/// Hands the frames in the partitions' outboxes to the partitions of their receivers,
/// copying each into the receiver's pool.
fn hand_over<P: DerefMut<Target = Part>>(parts: &mut [P], wiring: &Wiring) {
    for from in 0..parts.len() {
        let outbox = std::mem::take(&mut parts[from].outbox);
        for w in &outbox {
            let place = wiring.place[w.node];
            let (src, dst) = two_mut(parts, from, place.part);
            let old = PacketHandle::from_index(w.pkt);
            let pkt = dst.pool.alloc_from(src.pool.bytes(old));
            src.pool.free(old);
            dst.wires.push(Reverse(OnWire {
                node: place.local,
                pkt: pkt.index(),
                ..*w
            }));
        }
        parts[from].outbox = outbox;
        parts[from].outbox.clear();
    }
}

/// Two different elements of `v`, both mutable.
fn two_mut<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b);
    if a < b {
        let (x, y) = v.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = v.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}

/// A barrier for the few threads of a parallel run, which meet twice a window. A thread that
/// arrives early spins briefly (a short window is a few microseconds of work), then sleeps,
/// so that it does not take a core from the threads still working.
struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

/// Checks of the barrier before a waiting thread sleeps.
const BARRIER_SPINS: u32 = 4_000;

impl SpinBarrier {
    fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            // Under the lock, so that a thread about to sleep sees the change or is woken.
            let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.generation.fetch_add(1, Ordering::Release);
            self.wake.notify_all();
            return;
        }
        for _ in 0..BARRIER_SPINS {
            if self.generation.load(Ordering::Acquire) != generation {
                return;
            }
            std::hint::spin_loop();
        }
        let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.generation.load(Ordering::Acquire) == generation {
            held = self.wake.wait(held).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Locks a partition for its thread. A partition whose thread panicked is only read after
/// the panic has been passed on, so a poisoned lock is taken as it is.
fn lock(part: &Mutex<Part>) -> MutexGuard<'_, Part> {
    part.lock().unwrap_or_else(|e| e.into_inner())
}

impl Network {
    pub fn new(stepping: Stepping) -> Network {
        Network {
            parts: vec![Part::new()],
            wiring: Wiring {
                links: Vec::new(),
                place: Vec::new(),
            },
            now: 0,
            started: false,
            stepping,
            injected: 0,
            lookahead: None,
            tap: None,
        }
    }

    pub fn add<N: Node>(&mut self, node: N) -> NodeId {
        let ports = node.port_count();
        let id = self.wiring.place.len();
        let part = &mut self.parts[0];
        self.wiring.place.push(Place {
            part: 0,
            local: part.nodes.len(),
        });
        self.wiring.links.push(vec![None; ports]);
        part.push_node(
            id,
            Seat {
                node: Box::new(node),
                next: Some(0),
                tx: vec![LinkCount::default(); ports],
            },
        );
        NodeId(id)
    }

    fn dyn_node(&self, n: usize) -> &dyn Node {
        let p = self.wiring.place[n];
        self.parts[p.part].nodes[p.local].as_ref()
    }

    fn check_port(&self, n: NodeId, port: usize) -> Result<(), LinkError> {
        let node = self.dyn_node(n.0);
        if port >= node.port_count() {
            return Err(LinkError::NoSuchPort {
                node: node.name().to_string(),
                port,
            });
        }
        if self.wiring.links[n.0][port].is_some() {
            return Err(LinkError::AlreadyConnected {
                node: node.name().to_string(),
                port,
            });
        }
        Ok(())
    }

    /// Joins `a`'s port `pa` and `b`'s port `pb` with a full-duplex link whose propagation
    /// delay is `delay` cycles each way.
    pub fn link(
        &mut self,
        a: NodeId,
        pa: usize,
        b: NodeId,
        pb: usize,
        delay: Cycle,
    ) -> Result<(), LinkError> {
        if delay == 0 {
            return Err(LinkError::ZeroDelay);
        }
        self.check_port(a, pa)?;
        self.check_port(b, pb)?;
        let (na, nb) = (self.dyn_node(a.0), self.dyn_node(b.0));
        let (ra, rb) = (na.port_bps(pa), nb.port_bps(pb));
        if ra != rb {
            return Err(LinkError::RateMismatch {
                a: format!("{} port {pa}", na.name()),
                b: format!("{} port {pb}", nb.name()),
                a_bps: ra,
                b_bps: rb,
            });
        }
        self.wiring.links[a.0][pa] = Some(LinkEnd {
            node: b.0,
            port: pb,
            delay,
        });
        self.wiring.links[b.0][pb] = Some(LinkEnd {
            node: a.0,
            port: pa,
            delay,
        });
        if self.wiring.place[a.0].part != self.wiring.place[b.0].part {
            self.lookahead = Some(self.lookahead.map_or(delay, |l| l.min(delay)));
        }
        Ok(())
    }

    pub fn now(&self) -> Cycle {
        self.now
    }

    /// Packets allocated and not yet freed, in all the partitions' pools: every frame in a
    /// node or on a link.
    pub fn live_packets(&self) -> usize {
        self.parts.iter().map(|p| p.pool.live()).sum()
    }

    /// The node `id` as its concrete type. Panics if it is not a `T`: a test bug.
    pub fn node<T: Node>(&self, id: NodeId) -> &T {
        let any: &dyn Any = self.dyn_node(id.0);
        any.downcast_ref::<T>()
            .unwrap_or_else(|| panic!("node {} is not a {}", id.0, std::any::type_name::<T>()))
    }

    /// The node `id` as its concrete type, mutably.
    pub fn node_mut<T: Node>(&mut self, id: NodeId) -> &mut T {
        let p = self.wiring.place[id.0];
        let any: &mut dyn Any = self.parts[p.part].nodes[p.local].as_mut();
        any.downcast_mut::<T>().expect("node has another type")
    }

    /// Frames currently on links.
    pub fn frames_on_links(&self) -> usize {
        self.parts
            .iter()
            .map(|p| p.wires.len() + p.outbox.len())
            .sum()
    }

    /// What `node` sent out of `port` onto its link so far.
    pub fn link_tx(&self, node: NodeId, port: usize) -> LinkCount {
        let p = self.wiring.place[node.0];
        self.parts[p.part].tx[p.local][port]
    }

    /// The node `id` as its concrete type, if it is a `T`.
    pub fn try_node<T: Node>(&self, id: NodeId) -> Option<&T> {
        let any: &dyn Any = self.dyn_node(id.0);
        any.downcast_ref::<T>()
    }

    /// The node `id` as its concrete type, mutably, if it is a `T`.
    pub fn try_node_mut<T: Node>(&mut self, id: NodeId) -> Option<&mut T> {
        let p = self.wiring.place[id.0];
        let any: &mut dyn Any = self.parts[p.part].nodes[p.local].as_mut();
        any.downcast_mut::<T>()
    }

    /// The node `id` as a [`Node`] (its name, ports and their speeds).
    pub fn node_dyn(&self, id: NodeId) -> &dyn Node {
        self.dyn_node(id.0)
    }

    /// How many nodes the network holds.
    pub fn node_count(&self) -> usize {
        self.wiring.place.len()
    }

    /// Where `node`'s `port` is linked: the far node and port.
    pub fn peer(&self, node: NodeId, port: usize) -> Option<(NodeId, usize)> {
        self.wiring.links[node.0][port].map(|e| (NodeId(e.node), e.port))
    }

    /// Frames sent out of ports that have no link (freed and counted).
    pub fn unlinked_drops(&self) -> u64 {
        self.parts.iter().map(|p| p.unlinked_drops).sum()
    }

    /// Cycles the kernel has visited so far (equals elapsed cycles when stepping). In a
    /// partitioned network, the most any partition visited.
    pub fn visited_cycles(&self) -> u64 {
        self.parts.iter().map(|p| p.visited).max().unwrap_or(0)
    }

    /// How many partitions the network is split into ([`Network::set_threads`]).
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// The next cycle after `now` in which something happens, if anything ever will.
    pub fn next_event(&self) -> Option<Cycle> {
        self.parts
            .iter()
            .filter_map(Part::earliest)
            .min()
            .map(|t| t.max(self.now + 1))
    }

    /// Runs cycle `t` (> now) in every partition, then hands over the frames that crossed.
    fn visit(&mut self, t: Cycle) {
        debug_assert!(t > self.now || (t == 0 && !self.started));
        self.started = true;
        self.now = t;
        for (me, part) in self.parts.iter_mut().enumerate() {
            part.visit(t, me, self.stepping, &self.wiring, self.tap.as_deref_mut());
        }
        if self.parts.len() > 1 {
            let mut parts: Vec<&mut Part> = self.parts.iter_mut().collect();
            hand_over(&mut parts, &self.wiring);
        }
    }

    /// The cycle the kernel visits next: cycle 0 first, then the next cycle (stepping every
    /// cycle) or the next cycle in which something happens (jumping; `None` if nothing ever
    /// will). The harness (`crate::harness`) uses it to let drivers act before that cycle.
    pub fn next_visit(&self) -> Option<Cycle> {
        if !self.started {
            return Some(0);
        }
        match self.stepping {
            Stepping::EveryCycle => Some(self.now + 1),
            Stepping::Jump => self.next_event(),
        }
    }

    /// Visits cycle `t`, which must be after `now()` (or 0 to start): delivers the frames
    /// arriving in it, then ticks the nodes due. Returns false (and does nothing) for a
    /// cycle that is not ahead.
    pub fn visit_cycle(&mut self, t: Cycle) -> bool {
        let first = !self.started;
        if !first && t <= self.now {
            return false;
        }
        if first && t > 0 {
            self.visit(0);
        }
        self.visit(t);
        true
    }

    /// Puts a frame on the wire into `node`'s `port`, arriving (last bit) in cycle `at`; it
    /// is delivered before the node's tick in that cycle, as if a link carried it (but no
    /// link's transmit counter sees it). Errors name the node and port, or the cycle.
    pub fn inject(
        &mut self,
        node: NodeId,
        port: usize,
        bytes: &[u8],
        at: Cycle,
    ) -> Result<(), String> {
        if node.0 >= self.node_count() {
            return Err(format!("no node {}", node.0));
        }
        let n = self.dyn_node(node.0);
        if port >= n.port_count() {
            return Err(format!("{} has no port {port}", n.name()));
        }
        if self.started && at <= self.now {
            return Err(format!(
                "a frame for {} port {port} cannot arrive in cycle {at}, which has passed (now {})",
                n.name(),
                self.now
            ));
        }
        let place = self.wiring.place[node.0];
        let part = &mut self.parts[place.part];
        let pkt = part.pool.alloc_from(bytes);
        self.injected += 1;
        part.wires.push(Reverse(OnWire {
            arrives: at,
            put: if self.started { 2 * self.now + 2 } else { 0 },
            from: self.injected,
            nth: 0,
            node: place.local,
            port,
            pkt: pkt.index(),
        }));
        Ok(())
    }

    /// Makes every node due in cycle `t`: after something outside the kernel changed a node
    /// (through `node_mut`), so that jumping cannot skip what the change started. A node
    /// ticked when it has nothing to do changes nothing (the `Node` contract).
    pub fn wake_all(&mut self, t: Cycle) {
        for part in &mut self.parts {
            for n in 0..part.nodes.len() {
                let due = part.agenda.next()[n].map_or(t, |e| e.min(t));
                part.agenda.set(n, Some(due));
            }
        }
    }

    /// Runs every cycle up to and including `end`; afterwards `now() == end`. A partitioned
    /// network runs its partitions on threads (unless a tap is set: it sees every frame in
    /// one order, so a tapped network runs on one thread).
    pub fn run_until(&mut self, end: Cycle) {
        if !self.started {
            self.visit(0);
        }
        if self.parts.len() > 1 && self.tap.is_none() {
            self.run_parallel(end);
        } else {
            while let Some(t) = self.next_visit().filter(|&t| t <= end) {
                self.visit(t);
            }
        }
        self.now = self.now.max(end);
        for part in &mut self.parts {
            part.now = self.now;
        }
    }

    /// Runs the partitions up to and including `end`, one thread each, in windows of at most
    /// the lookahead: each window starts at the earliest event of any partition, every
    /// partition runs it alone, and the frames that crossed are handed over after it.
    fn run_parallel(&mut self, end: Cycle) {
        let stepping = self.stepping;
        let lookahead = self.lookahead.unwrap_or(Cycle::MAX);
        let wiring = &self.wiring;
        let parts: Vec<Mutex<Part>> = std::mem::take(&mut self.parts)
            .into_iter()
            .map(Mutex::new)
            .collect();
        let barrier = SpinBarrier::new(parts.len());
        let window_end = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let failure: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
        // Runs partition `me` to the window's end, keeping the first panic to pass on.
        let run = |me: usize| {
            let end = window_end.load(Ordering::Acquire);
            let ran = panic::catch_unwind(AssertUnwindSafe(|| {
                lock(&parts[me]).run_until(end, me, stepping, wiring)
            }));
            if let Err(payload) = ran {
                failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(payload);
            }
        };
        let mut now = self.now;
        std::thread::scope(|s| {
            for me in 1..parts.len() {
                let (barrier, stop, run) = (&barrier, &stop, &run);
                s.spawn(move || loop {
                    barrier.wait();
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    run(me);
                    barrier.wait();
                });
            }
            loop {
                let start = match stepping {
                    Stepping::EveryCycle => Some(now + 1),
                    Stepping::Jump => parts
                        .iter()
                        .filter_map(|p| lock(p).earliest())
                        .min()
                        .map(|t| t.max(now + 1)),
                };
                let Some(start) = start.filter(|&t| t <= end) else {
                    break;
                };
                let window_last = start.saturating_add(lookahead - 1).min(end);
                window_end.store(window_last, Ordering::Release);
                barrier.wait();
                run(0);
                barrier.wait();
                if failure.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                    break;
                }
                let mut guards: Vec<MutexGuard<'_, Part>> = parts.iter().map(lock).collect();
                hand_over(&mut guards, wiring);
                for part in &mut guards {
                    part.now = window_last;
                }
                now = window_last;
            }
            stop.store(true, Ordering::Release);
            barrier.wait();
        });
        self.parts = parts
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        if let Some(payload) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
            panic::resume_unwind(payload);
        }
        self.now = now;
    }

    /// Splits the network into at most `threads` partitions, which [`Network::run_until`]
    /// runs on as many threads; 1 joins it back into one. Returns how many partitions it
    /// made. Results do not depend on the split.
    ///
    /// A node whose links all go to one other node (a host) goes with that node; the groups
    /// so formed are dealt out largest first (by linked ports) to the partition with the
    /// fewest ports so far. It must be called before the network runs and before frames are
    /// injected, and not while a tap is set.
    pub fn set_threads(&mut self, threads: usize) -> Result<usize, String> {
        if threads == 0 {
            return Err("threads: 0; a run needs at least 1".into());
        }
        if self.started || self.live_packets() > 0 {
            return Err("threads are set before the network runs or takes frames".into());
        }
        if threads > 1 && self.tap.is_some() {
            return Err(
                "a tapped network sees its frames in one order and runs on one thread".into(),
            );
        }
        let assign = self.split(threads);
        let count = assign.iter().max().map_or(1, |&p| p + 1);
        let mut seats: Vec<Option<Seat>> = (0..self.node_count()).map(|_| None).collect();
        for part in self.parts.drain(..) {
            let nodes = part
                .ids
                .into_iter()
                .zip(part.nodes)
                .zip(part.agenda.next().to_vec())
                .zip(part.tx);
            for (((id, node), next), tx) in nodes {
                seats[id] = Some(Seat { node, next, tx });
            }
        }
        let mut parts: Vec<Part> = (0..count).map(|_| Part::new()).collect();
        for (id, seat) in seats.into_iter().enumerate() {
            let seat = seat.expect("every node is in one partition");
            let part = assign[id];
            self.wiring.place[id] = Place {
                part,
                local: parts[part].nodes.len(),
            };
            parts[part].push_node(id, seat);
        }
        self.parts = parts;
        let place = &self.wiring.place;
        self.lookahead = self
            .wiring
            .links
            .iter()
            .enumerate()
            .flat_map(|(a, ports)| ports.iter().flatten().map(move |e| (a, e)))
            .filter(|(a, e)| place[*a].part != place[e.node].part)
            .map(|(_, e)| e.delay)
            .min();
        Ok(count)
    }

    /// The partition of each node for `threads` threads (see [`Network::set_threads`]),
    /// numbered in the order of their first nodes.
    fn split(&self, threads: usize) -> Vec<usize> {
        let n = self.node_count();
        let mut root: Vec<usize> = (0..n).collect();
        fn find(root: &mut [usize], mut x: usize) -> usize {
            while root[x] != x {
                root[x] = root[root[x]];
                x = root[x];
            }
            x
        }
        for (a, ports) in self.wiring.links.iter().enumerate() {
            let mut far = ports.iter().flatten().map(|e| e.node);
            if let Some(b) = far.next() {
                if far.all(|c| c == b) {
                    let (ra, rb) = (find(&mut root, a), find(&mut root, b));
                    root[ra.max(rb)] = ra.min(rb);
                }
            }
        }
        // Groups by their first node, with their linked ports (at least 1 a node).
        let mut groups: Vec<(usize, u64)> = Vec::new();
        let mut group_of = vec![usize::MAX; n];
        for a in 0..n {
            let r = find(&mut root, a);
            if group_of[r] == usize::MAX {
                group_of[r] = groups.len();
                groups.push((a, 0));
            }
            let ports = self.wiring.links[a].iter().flatten().count() as u64;
            groups[group_of[r]].1 += ports.max(1);
        }
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by_key(|&g| (Reverse(groups[g].1), groups[g].0));
        let bins = threads.min(groups.len()).max(1);
        let mut load = vec![0u64; bins];
        let mut bin_of_group = vec![0; groups.len()];
        for g in order {
            let bin = (0..bins).min_by_key(|&b| (load[b], b)).expect("a bin");
            load[bin] += groups[g].1;
            bin_of_group[g] = bin;
        }
        // Number the partitions by their first nodes.
        let mut number = vec![usize::MAX; bins];
        let mut next = 0;
        (0..n)
            .map(|a| {
                let bin = bin_of_group[group_of[find(&mut root, a)]];
                if number[bin] == usize::MAX {
                    number[bin] = next;
                    next += 1;
                }
                number[bin]
            })
            .collect()
    }

    /// Runs until `done(self)` holds after a visited cycle, or through cycle `limit`.
    /// Returns whether `done` held. Nothing changes between visited cycles, so checking
    /// after each one is exact in both stepping modes.
    pub fn run_until_true(&mut self, limit: Cycle, mut done: impl FnMut(&Network) -> bool) -> bool {
        if !self.started {
            self.visit(0);
        }
        loop {
            if done(self) {
                return true;
            }
            match self.next_visit().filter(|&t| t <= limit) {
                Some(t) => self.visit(t),
                None => break,
            }
        }
        self.now = self.now.max(limit);
        done(self)
    }

    /// Runs `n` more cycles.
    pub fn run_cycles(&mut self, n: Cycle) {
        let end = if !self.started {
            n.saturating_sub(1)
        } else {
            self.now + n
        };
        self.run_until(end);
    }

    /// Sets the tap that watches every frame on the links from now on (`None` removes it);
    /// returns the one it replaces. A tapped network runs on one thread; if it is
    /// partitioned, the tap sees a cycle's frames one partition after another.
    pub fn set_tap(&mut self, tap: Option<Box<dyn Tap>>) -> Option<Box<dyn Tap>> {
        std::mem::replace(&mut self.tap, tap)
    }

    /// Visits the next cycle the kernel would visit ([`Network::next_visit`]) if it is no
    /// later than `end`: the next cycle when stepping every cycle, the next in which
    /// something happens when jumping. Returns whether it visited one. A test that compares
    /// the two modes drives the network with this (unlike [`Network::step`], which always
    /// runs exactly one cycle and so never jumps).
    pub fn advance_until(&mut self, end: Cycle) -> bool {
        match self.next_visit() {
            Some(t) if t <= end => {
                self.visit(t);
                true
            }
            _ => false,
        }
    }

    /// [`Network::advance_until`] with no end.
    pub fn advance(&mut self) -> bool {
        self.advance_until(Cycle::MAX)
    }

    /// Runs exactly the next cycle (cycle 0 first), ticking every node, whatever the mode.
    pub fn step(&mut self) {
        let t = if !self.started { 0 } else { self.now + 1 };
        let saved = self.stepping;
        self.stepping = Stepping::EveryCycle;
        self.visit(t);
        self.stepping = saved;
    }
}

fn tap_frame(
    tap: &mut dyn Tap,
    cycle: Cycle,
    node: usize,
    port: usize,
    direction: Direction,
    pool: &PacketPool,
    pkt: PacketHandle,
) {
    tap.frame(&TapFrame {
        cycle,
        node: NodeId(node),
        port,
        direction,
        bytes: pool.bytes(pkt),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{Host, UdpFlow};
    use std::collections::{BTreeMap, VecDeque};
    use std::net::Ipv4Addr;
    use t2_clock::Clock;
    use t2_pipeline::headers::MacAddr;

    const G100: u64 = 100_000_000_000;

    /// Two ports; a frame received on one leaves by the other `hold` cycles later, one per
    /// port per cycle. Panics on its `panic_at`-th frame, if set.
    struct Relay {
        name: String,
        hold: Cycle,
        waiting: VecDeque<(Cycle, usize, PacketHandle)>,
        received: u64,
        panic_at: Option<u64>,
    }

    impl Relay {
        fn new(name: &str, hold: Cycle) -> Relay {
            Relay {
                name: name.into(),
                hold,
                waiting: VecDeque::new(),
                received: 0,
                panic_at: None,
            }
        }
    }

    impl Node for Relay {
        fn name(&self) -> &str {
            &self.name
        }
        fn port_count(&self) -> usize {
            2
        }
        fn port_bps(&self, _: usize) -> u64 {
            G100
        }
        fn receive(&mut self, now: Cycle, port: usize, pkt: PacketHandle, _: &mut PacketPool) {
            self.received += 1;
            if self.panic_at == Some(self.received) {
                panic!("{} got frame {}", self.name, self.received);
            }
            self.waiting.push_back((now + self.hold, 1 - port, pkt));
        }
        fn tick(&mut self, now: Cycle, _: &mut PacketPool, out: &mut Vec<Sent>) {
            while let Some(&(due, port, pkt)) = self.waiting.front() {
                if due > now {
                    break;
                }
                self.waiting.pop_front();
                out.push(Sent { port, pkt });
            }
        }
        fn next_event(&self, now: Cycle) -> Option<Cycle> {
            self.waiting.front().map(|&(due, _, _)| due.max(now + 1))
        }
    }

    fn host(name: &str, last: u8, flow_to: u8, start: Cycle) -> Host {
        let clock = Clock::tofino2();
        let mut h = Host::new(
            name,
            MacAddr([2, 0, 0, 0, 0, last]),
            Ipv4Addr::new(10, 0, 0, last),
            clock,
            G100,
        );
        h.send(
            clock,
            UdpFlow {
                flow_id: last as u32,
                dst_ip: Ipv4Addr::new(10, 0, 0, flow_to),
                dst_mac: MacAddr([2, 0, 0, 0, 0, flow_to]),
                src_port: 1,
                dst_port: 2,
                frame_bytes: 200 + 100 * last as u32,
                rate_bps: G100 / 3,
                start,
                end: None,
                packets: Some(40),
            },
        )
        .unwrap();
        h
    }

    /// a - r1 = r2 - b: hosts a and b send to each other through the relays; the link
    /// between the relays takes 70 cycles.
    fn chain(stepping: Stepping) -> (Network, [NodeId; 4]) {
        let mut net = Network::new(stepping);
        let r1 = net.add(Relay::new("r1", 3));
        let r2 = net.add(Relay::new("r2", 5));
        let a = net.add(host("a", 1, 2, 10));
        let b = net.add(host("b", 2, 1, 17));
        net.link(a, 0, r1, 0, 40).unwrap();
        net.link(r1, 1, r2, 0, 70).unwrap();
        net.link(r2, 1, b, 0, 40).unwrap();
        (net, [a, b, r1, r2])
    }

    fn outcome(net: &Network, ids: [NodeId; 4]) -> String {
        let [a, b, r1, r2] = ids;
        format!(
            "{:?}\n{:?}\n{:?} {:?} {:?} {:?} {}",
            net.node::<Host>(a).received(),
            net.node::<Host>(b).received(),
            net.link_tx(a, 0),
            net.link_tx(r1, 1),
            net.link_tx(r2, 0),
            net.link_tx(b, 0),
            net.now()
        )
    }

    #[test]
    fn a_split_network_runs_as_one_does() {
        for stepping in [Stepping::Jump, Stepping::EveryCycle] {
            let (mut one, ids) = chain(stepping);
            one.run_until(20_000);
            let want = outcome(&one, ids);
            assert_eq!(one.node::<Host>(ids[1]).received().len(), 40);
            for threads in [2, 3, 8] {
                let (mut net, ids) = chain(stepping);
                assert_eq!(
                    net.set_threads(threads),
                    Ok(2),
                    "two groups: a with r1, b with r2"
                );
                assert_eq!(net.partitions(), 2);
                assert_eq!(net.lookahead, Some(70));
                // In pieces that end mid-window, and with frames crossing at each stop.
                for end in [0, 1, 69, 70, 71, 500, 3_333, 20_000] {
                    net.run_until(end);
                    assert_eq!(net.now(), end);
                }
                assert_eq!(outcome(&net, ids), want, "{stepping:?}, {threads} threads");
                assert_eq!(net.live_packets(), 0);
                assert_eq!(net.frames_on_links(), 0);
            }
        }
    }

    #[test]
    fn a_split_network_visited_cycle_by_cycle_runs_as_one_does() {
        let (mut one, ids) = chain(Stepping::Jump);
        one.run_until(20_000);
        let (mut net, ids2) = chain(Stepping::Jump);
        net.set_threads(2).unwrap();
        let mut visits = 0;
        while net.advance_until(20_000) {
            visits += 1;
        }
        net.run_until(20_000);
        assert_eq!(outcome(&net, ids2), outcome(&one, ids));
        // Visited one cycle at a time, the partitions visit the same cycles as one network.
        assert_eq!(visits, one.visited_cycles());
        assert_eq!(net.visited_cycles(), one.visited_cycles());
    }

    #[test]
    fn threads_are_set_before_the_run_and_never_to_zero() {
        let (mut net, [a, ..]) = chain(Stepping::Jump);
        assert!(net.set_threads(0).unwrap_err().contains("at least 1"));
        net.inject(a, 0, &[0u8; 60], 5).unwrap();
        assert!(net.set_threads(2).unwrap_err().contains("before"));
        let (mut net, _) = chain(Stepping::Jump);
        net.run_until(10);
        assert!(net.set_threads(2).unwrap_err().contains("before"));
        let (mut net, _) = chain(Stepping::Jump);
        assert_eq!(net.set_threads(2), Ok(2));
        assert_eq!(net.set_threads(1), Ok(1), "joined back");
        assert_eq!(net.lookahead, None);
    }

    /// Frames seen at each (node, port), in the order seen there.
    type AtPorts = BTreeMap<(usize, usize), Vec<String>>;

    /// Every frame a tap sees.
    #[derive(Default)]
    struct Seen(std::sync::Arc<Mutex<AtPorts>>);

    impl Tap for Seen {
        fn frame(&mut self, f: &TapFrame<'_>) {
            let line = format!("{} {:?} {}", f.cycle, f.direction, f.bytes.len());
            let mut seen = self.0.lock().unwrap();
            seen.entry((f.node.0, f.port)).or_default().push(line);
        }
    }

    #[test]
    fn a_tapped_split_network_runs_on_one_thread_and_the_tap_sees_every_frame() {
        let watch = |threads: usize| {
            let (mut net, ids) = chain(Stepping::Jump);
            net.set_threads(threads).unwrap();
            let seen = Seen::default();
            let frames = seen.0.clone();
            net.set_tap(Some(Box::new(seen)));
            net.run_until(20_000);
            let frames = frames.lock().unwrap().clone();
            (outcome(&net, ids), frames)
        };
        let (one, at_ports) = watch(1);
        // 80 frames, each over 3 links, each seen leaving and arriving.
        assert_eq!(at_ports.values().map(Vec::len).sum::<usize>(), 80 * 3 * 2);
        // Split, each port's frames are seen in the same order (a cycle's frames reach the
        // tap one partition after another, so only the order across ports may differ).
        assert_eq!(watch(2), (one, at_ports));
        // A network with a tap is not split.
        let (mut net, _) = chain(Stepping::Jump);
        net.set_tap(Some(Box::new(Seen::default())));
        assert!(net.set_threads(2).unwrap_err().contains("one thread"));
    }

    #[test]
    #[should_panic(expected = "r2 got frame 7")]
    fn a_panic_in_a_partition_reaches_the_caller() {
        let (mut net, [.., r2]) = chain(Stepping::Jump);
        net.node_mut::<Relay>(r2).panic_at = Some(7);
        net.set_threads(2).unwrap();
        net.run_until(20_000);
    }
}
