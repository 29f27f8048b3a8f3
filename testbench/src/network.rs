//! Nodes joined by links, and the kernel that advances them together.
//!
//! Each cycle has two phases: frames whose last bit reaches a node in this cycle are handed
//! to it (`Node::receive`), then nodes act (`Node::tick`). Everything a node sends in a cycle
//! arrives at the far end of its link at least one cycle later, so the order in which nodes
//! are visited within a cycle never matters. In [`Stepping::Jump`] mode the kernel visits only
//! the cycles in which a node has something to do or a frame arrives; in
//! [`Stepping::EveryCycle`] mode it visits every cycle. Both give identical results.

use crate::node::{Node, Sent};
use crate::tap::{Direction, Tap, TapFrame};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};

/// A node's place in a [`Network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub usize);

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

/// A frame on a wire. Ordered by arrival, then by the order it was sent, so that frames
/// arriving in the same cycle are delivered in a fixed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct OnWire {
    arrives: Cycle,
    seq: u64,
    node: usize,
    port: usize,
    pkt: u32,
}

/// Nodes, links, the packet pool, and the time.
pub struct Network {
    nodes: Vec<Box<dyn Node>>,
    /// `links[node][port]`: where a frame sent from that port goes.
    links: Vec<Vec<Option<LinkEnd>>>,
    /// Frames on the wires, earliest arrival first.
    wires: BinaryHeap<Reverse<OnWire>>,
    wire_seq: u64,
    /// Cached `next_event` of each node.
    next: Vec<Option<Cycle>>,
    /// The nodes' next events, earliest first, so a visit finds the nodes due without
    /// looking at the others. An entry stands only while it equals the node's `next`
    /// (later changes push a new one; stale ones are skipped when they surface).
    agenda: BinaryHeap<Reverse<(Cycle, usize)>>,
    /// Nodes due in the cycle being visited (reused).
    due: Vec<usize>,
    pool: PacketPool,
    now: Cycle,
    stepping: Stepping,
    /// Frames sent out of a port with no link; they are freed and counted here.
    unlinked_drops: u64,
    sent_buf: Vec<Sent>,
    visited_cycles: u64,
    /// `tx[node][port]`: frames and bytes (FCS included) sent onto the port's link.
    tx: Vec<Vec<LinkCount>>,
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

impl Network {
    pub fn new(stepping: Stepping) -> Network {
        Network {
            nodes: Vec::new(),
            links: Vec::new(),
            wires: BinaryHeap::new(),
            wire_seq: 0,
            next: Vec::new(),
            agenda: BinaryHeap::new(),
            due: Vec::new(),
            pool: PacketPool::new(),
            now: 0,
            stepping,
            unlinked_drops: 0,
            sent_buf: Vec::new(),
            visited_cycles: 0,
            tx: Vec::new(),
            tap: None,
        }
    }

    pub fn add<N: Node>(&mut self, node: N) -> NodeId {
        let ports = node.port_count();
        self.nodes.push(Box::new(node));
        self.links.push(vec![None; ports]);
        self.tx.push(vec![LinkCount::default(); ports]);
        self.next.push(Some(0));
        self.agenda.push(Reverse((0, self.nodes.len() - 1)));
        NodeId(self.nodes.len() - 1)
    }

    fn check_port(&self, n: NodeId, port: usize) -> Result<(), LinkError> {
        let node = &self.nodes[n.0];
        if port >= node.port_count() {
            return Err(LinkError::NoSuchPort {
                node: node.name().to_string(),
                port,
            });
        }
        if self.links[n.0][port].is_some() {
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
        let (ra, rb) = (self.nodes[a.0].port_bps(pa), self.nodes[b.0].port_bps(pb));
        if ra != rb {
            return Err(LinkError::RateMismatch {
                a: format!("{} port {pa}", self.nodes[a.0].name()),
                b: format!("{} port {pb}", self.nodes[b.0].name()),
                a_bps: ra,
                b_bps: rb,
            });
        }
        self.links[a.0][pa] = Some(LinkEnd {
            node: b.0,
            port: pb,
            delay,
        });
        self.links[b.0][pb] = Some(LinkEnd {
            node: a.0,
            port: pa,
            delay,
        });
        Ok(())
    }

    pub fn now(&self) -> Cycle {
        self.now
    }

    pub fn pool(&self) -> &PacketPool {
        &self.pool
    }

    /// The node `id` as its concrete type. Panics if it is not a `T`: a test bug.
    pub fn node<T: Node>(&self, id: NodeId) -> &T {
        let any: &dyn Any = self.nodes[id.0].as_ref();
        any.downcast_ref::<T>()
            .unwrap_or_else(|| panic!("node {} is not a {}", id.0, std::any::type_name::<T>()))
    }

    /// The node `id` as its concrete type, mutably.
    pub fn node_mut<T: Node>(&mut self, id: NodeId) -> &mut T {
        let any: &mut dyn Any = self.nodes[id.0].as_mut();
        any.downcast_mut::<T>().expect("node has another type")
    }

    /// Frames currently on links.
    pub fn frames_on_links(&self) -> usize {
        self.wires.len()
    }

    /// What `node` sent out of `port` onto its link so far.
    pub fn link_tx(&self, node: NodeId, port: usize) -> LinkCount {
        self.tx[node.0][port]
    }

    /// The node `id` as a [`Node`] (its name, ports and their speeds).
    pub fn node_dyn(&self, id: NodeId) -> &dyn Node {
        self.nodes[id.0].as_ref()
    }

    /// How many nodes the network holds.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Where `node`'s `port` is linked: the far node and port.
    pub fn peer(&self, node: NodeId, port: usize) -> Option<(NodeId, usize)> {
        self.links[node.0][port].map(|e| (NodeId(e.node), e.port))
    }

    /// Frames sent out of ports that have no link (freed and counted).
    pub fn unlinked_drops(&self) -> u64 {
        self.unlinked_drops
    }

    /// Cycles the kernel has visited so far (equals elapsed cycles when stepping).
    pub fn visited_cycles(&self) -> u64 {
        self.visited_cycles
    }

    /// The next cycle after `now` in which something happens, if anything ever will.
    pub fn next_event(&self) -> Option<Cycle> {
        let wire = self.wires.peek().map(|Reverse(w)| w.arrives);
        // After every visit the agenda's top stands (see `settle_agenda`).
        let node = self.agenda.peek().map(|Reverse((t, _))| *t);
        debug_assert_eq!(node, self.next.iter().flatten().copied().min());
        node.into_iter()
            .chain(wire)
            .map(|t| t.max(self.now + 1))
            .min()
    }

    /// Sets node `n`'s next event.
    fn set_next(&mut self, n: usize, next: Option<Cycle>) {
        if next != self.next[n] {
            self.next[n] = next;
            if let Some(t) = next {
                self.agenda.push(Reverse((t, n)));
            }
        }
    }

    /// Drops the agenda's stale entries from its top, so that its top is the earliest next
    /// event of any node.
    fn settle_agenda(&mut self) {
        while let Some(&Reverse((t, n))) = self.agenda.peek() {
            if self.next[n] == Some(t) {
                break;
            }
            self.agenda.pop();
        }
    }

    /// Runs cycle `t` (> now): delivers arriving frames, then ticks the nodes due.
    fn visit(&mut self, t: Cycle) {
        debug_assert!(t > self.now || (t == 0 && self.visited_cycles == 0));
        self.now = t;
        self.visited_cycles += 1;
        while let Some(&Reverse(w)) = self.wires.peek() {
            if w.arrives > t {
                break;
            }
            debug_assert_eq!(w.arrives, t, "a frame arrival was skipped");
            self.wires.pop();
            let pkt = PacketHandle::from_index(w.pkt);
            if let Some(tap) = self.tap.as_mut() {
                tap_frame(
                    tap.as_mut(),
                    t,
                    w.node,
                    w.port,
                    Direction::Rx,
                    &self.pool,
                    pkt,
                );
            }
            self.nodes[w.node].receive(t, w.port, pkt, &mut self.pool);
            self.set_next(w.node, Some(t));
        }
        // The nodes due, in index order (every node when stepping every cycle).
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        match self.stepping {
            Stepping::EveryCycle => due.extend(0..self.nodes.len()),
            Stepping::Jump => {
                while let Some(&Reverse((e, n))) = self.agenda.peek() {
                    if e > t {
                        break;
                    }
                    self.agenda.pop();
                    if self.next[n] == Some(e) {
                        // Its entry is used up: the tick below sets (and pushes) a new one.
                        self.next[n] = None;
                        due.push(n);
                    }
                }
                due.sort_unstable();
            }
        }
        for &n in &due {
            let mut sent = std::mem::take(&mut self.sent_buf);
            self.nodes[n].tick(t, &mut self.pool, &mut sent);
            for s in sent.drain(..) {
                match self.links[n][s.port] {
                    Some(end) => {
                        if let Some(tap) = self.tap.as_mut() {
                            tap_frame(tap.as_mut(), t, n, s.port, Direction::Tx, &self.pool, s.pkt);
                        }
                        let count = &mut self.tx[n][s.port];
                        count.frames += 1;
                        count.bytes += self.pool.bytes(s.pkt).len() as u64 + t2_clock::FCS_BYTES;
                        self.wire_seq += 1;
                        self.wires.push(Reverse(OnWire {
                            arrives: t + end.delay,
                            seq: self.wire_seq,
                            node: end.node,
                            port: end.port,
                            pkt: s.pkt.index(),
                        }));
                    }
                    None => {
                        self.unlinked_drops += 1;
                        self.pool.free(s.pkt);
                    }
                }
            }
            self.sent_buf = sent;
            let next = self.nodes[n].next_event(t);
            self.set_next(n, next);
        }
        self.due = due;
        self.settle_agenda();
    }

    /// The cycle the kernel visits next: cycle 0 first, then the next cycle (stepping every
    /// cycle) or the next cycle in which something happens (jumping; `None` if nothing ever
    /// will). The harness (`crate::harness`) uses it to let drivers act before that cycle.
    pub fn next_visit(&self) -> Option<Cycle> {
        if self.visited_cycles == 0 {
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
        let first = self.visited_cycles == 0;
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
        let n = self
            .nodes
            .get(node.0)
            .ok_or_else(|| format!("no node {}", node.0))?;
        if port >= n.port_count() {
            return Err(format!("{} has no port {port}", n.name()));
        }
        if self.visited_cycles > 0 && at <= self.now {
            return Err(format!(
                "a frame for {} port {port} cannot arrive in cycle {at}, which has passed (now {})",
                n.name(),
                self.now
            ));
        }
        let pkt = self.pool.alloc_from(bytes);
        self.wire_seq += 1;
        self.wires.push(Reverse(OnWire {
            arrives: at,
            seq: self.wire_seq,
            node: node.0,
            port,
            pkt: pkt.index(),
        }));
        Ok(())
    }

    /// Makes every node due in cycle `t`: after something outside the kernel changed a node
    /// (through `node_mut`), so that jumping cannot skip what the change started. A node
    /// ticked when it has nothing to do changes nothing (the `Node` contract).
    pub fn wake_all(&mut self, t: Cycle) {
        for n in 0..self.next.len() {
            let due = self.next[n].map_or(t, |e| e.min(t));
            self.set_next(n, Some(due));
        }
        self.settle_agenda();
    }

    /// Runs every cycle up to and including `end`; afterwards `now() == end`.
    pub fn run_until(&mut self, end: Cycle) {
        if self.visited_cycles == 0 {
            self.visit(0);
        }
        loop {
            let t = match self.stepping {
                Stepping::EveryCycle => self.now + 1,
                Stepping::Jump => match self.next_event() {
                    Some(t) => t,
                    None => break,
                },
            };
            if t > end {
                break;
            }
            self.visit(t);
        }
        self.now = self.now.max(end);
    }

    /// Runs until `done(self)` holds after a visited cycle, or through cycle `limit`.
    /// Returns whether `done` held. Nothing changes between visited cycles, so checking
    /// after each one is exact in both stepping modes.
    pub fn run_until_true(&mut self, limit: Cycle, mut done: impl FnMut(&Network) -> bool) -> bool {
        if self.visited_cycles == 0 {
            self.visit(0);
        }
        loop {
            if done(self) {
                return true;
            }
            let t = match self.stepping {
                Stepping::EveryCycle => self.now + 1,
                Stepping::Jump => match self.next_event() {
                    Some(t) => t,
                    None => break,
                },
            };
            if t > limit {
                break;
            }
            self.visit(t);
        }
        self.now = self.now.max(limit);
        done(self)
    }

    /// Runs `n` more cycles.
    pub fn run_cycles(&mut self, n: Cycle) {
        let end = if self.visited_cycles == 0 {
            n.saturating_sub(1)
        } else {
            self.now + n
        };
        self.run_until(end);
    }

    /// Sets the tap that watches every frame on the links from now on (`None` removes it);
    /// returns the one it replaces.
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
        let t = if self.visited_cycles == 0 {
            0
        } else {
            self.now + 1
        };
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
