//! Topologies: chips and transport hosts joined by links in one [`Network`].
//!
//! Builders: one chip with N hosts, a dumbbell (two chips, one link between them), a
//! leaf-spine (BFC's testbed is 8 leaves x 8 spines, 16 hosts per leaf), a k-ary fat-tree
//! (k = 4: 20 switches, 16 hosts), and the shapes the schemes register ([`ShapeKind`]: PABO's
//! 7-switch tree). Every link runs at one speed.
//!
//! Routing is by static IPv4 host routes computed from shortest paths. Where several next
//! hops are equally short (leaf to spine, fat-tree uplinks), the switch gets a route through
//! each, in port order: an ECMP group, over which the built-in forwarding hashes each flow's
//! 5-tuple (`t2_pipeline::l3`), so a flow keeps one path. A program's exact route table
//! cannot hold such groups: building a multi-path shape with a program is an error.
//!
//! Host `i` has address 10.0.0.1 + i and MAC 02:00 followed by `i` in 4 bytes.

use crate::chip::params::Tofino2Params;
use crate::chip::{port_channels, Chip, ChipConfig, PortSpec};
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::headers::MacAddr;
use t2_pipeline::ir::Program;
use t2_testbench::metrics::Framing;
use t2_testbench::rdma::{RdmaConfig, RdmaHost};
use t2_testbench::transport::{Peer, TransportHost, SEGMENT_OVERHEAD};
use t2_testbench::workload::FlowSpec;
use t2_testbench::{FeatureSpec, Network, NodeId, Stepping, TransportConfig};

/// The shape of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    SingleChip {
        hosts: usize,
    },
    /// Two chips joined by one link, `hosts_per_side` hosts on each.
    Dumbbell {
        hosts_per_side: usize,
    },
    LeafSpine {
        leaves: usize,
        spines: usize,
        hosts_per_leaf: usize,
    },
    /// A k-ary fat-tree (k even): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
    /// core switches, k/2 hosts per edge switch.
    FatTree {
        k: usize,
    },
    /// A shape a scheme registers ([`ShapeKind`]), with the values of its keys.
    Custom(CustomShape),
}

/// The most keys a registered shape has.
pub const MAX_SHAPE_KEYS: usize = 4;

/// A registered shape with the values of its keys (in the order of [`ShapeKind::keys`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CustomShape {
    pub kind: &'static ShapeKind,
    pub values: [usize; MAX_SHAPE_KEYS],
}

impl CustomShape {
    /// The values of the kind's keys.
    pub fn values(&self) -> &[usize] {
        &self.values[..self.kind.keys.len()]
    }
}

/// A shape a scheme brings (PABO's tree), registered in `crate::schemes::SHAPES`: the name
/// scenario files give it (`topology.kind`), the `topology.` keys that size it, and its
/// arithmetic and graph. Two kinds are the same when their names are.
pub struct ShapeKind {
    pub kind: &'static str,
    /// The `[topology]` keys it takes, each a whole number (at most [`MAX_SHAPE_KEYS`]).
    pub keys: &'static [&'static str],
    /// Its switches, hosts and ports per switch, with checked arithmetic; errors for
    /// values that cannot make one, naming the key.
    pub size: fn(&[usize]) -> Result<ShapeSize, SpecError>,
    /// Its switches, links and where the hosts hang.
    pub plan: fn(&[usize]) -> Result<Plan, String>,
    /// Its core links ([`Shape::core_links`]), if it has a core.
    pub core_links: fn(&[usize]) -> Option<usize>,
}

impl PartialEq for ShapeKind {
    fn eq(&self, other: &ShapeKind) -> bool {
        self.kind == other.kind
    }
}

impl Eq for ShapeKind {}

impl std::fmt::Debug for ShapeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind)
    }
}

/// What to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySpec {
    pub shape: Shape,
    pub params: Tofino2Params,
    /// Speed of every port, NIC and link, b/s.
    pub link_bps: u64,
    /// Propagation delay of every link, ns.
    pub link_delay_ns: u64,
    pub transport: TransportConfig,
    /// The features every TCP host runs (`t2_testbench::host_feature`), in call order.
    pub host_features: Vec<FeatureSpec>,
    /// RDMA-style NICs in place of the TCP transport (a scheme's, `Hosts::rdma`); `None`:
    /// TCP hosts.
    pub rdma: Option<RdmaConfig>,
    pub stepping: Stepping,
    /// A program every switch runs instead of the built-in forwarding (its `ipv4_host` table
    /// gets the switch's host routes).
    pub program: Option<Program>,
}

/// A built network.
pub struct Topology {
    pub net: Network,
    pub hosts: Vec<NodeId>,
    pub chips: Vec<NodeId>,
    pub peers: Vec<Peer>,
    /// Switches between host pairs: `switch_hops[src][dst]`.
    switch_hops: Vec<Vec<u32>>,
    link_delay: Cycle,
    line: LineRate,
    mss: u64,
    /// Unloaded latency of a chip for a frame of n bytes (the same for every chip).
    chip_latency_base: Cycle,
    /// The same under the built-in forwarding (the plain program), whatever the switches
    /// run: the scheme-independent ideal ([`IdealFct::PlainForwarding`]).
    plain_latency_base: Cycle,
    /// The most switches on any host-to-host path.
    longest_path: u32,
    link_delay_ns: u64,
    link_bps: u64,
    clock: t2_clock::Clock,
}

/// Which ideal FCT a flow's slowdown divides by (docs/testbench.md, "Ideal FCT").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IdealFct {
    /// The flow alone on the idle network with every switch running the built-in forwarding:
    /// one ideal for every scheme, so a scheme whose program is deeper pays its extra
    /// pipeline latency in its slowdown, as a real deployment would.
    #[default]
    PlainForwarding,
    /// The same with each switch's own program: exactly a lone flow's FCT on this network
    /// (what `Topology::ideal_fct` gives), but different from scheme to scheme.
    SchemePipeline,
    /// A definition a scheme brings to reproduce its paper's tables ([`IdealRule`]).
    Rule(&'static IdealRule),
}

impl IdealFct {
    pub fn name(&self) -> &'static str {
        match self {
            IdealFct::PlainForwarding => "plain_forwarding",
            IdealFct::SchemePipeline => "scheme_pipeline",
            IdealFct::Rule(r) => r.name,
        }
    }
}

impl serde::Serialize for IdealFct {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// An ideal FCT a scheme defines (BFC's artifact's), registered in `crate::schemes::IDEALS`:
/// its name (as `output.ideal` and the results write it) and the ideal of a flow on a
/// built network. Two rules are the same when their names are.
pub struct IdealRule {
    pub name: &'static str,
    pub fct: fn(&Topology, &FlowSpec) -> Cycle,
}

impl PartialEq for IdealRule {
    fn eq(&self, other: &IdealRule) -> bool {
        self.name == other.name
    }
}

impl Eq for IdealRule {}

impl std::fmt::Debug for IdealRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The address of host `i`.
pub fn host_peer(i: usize) -> Peer {
    let n = i as u32;
    let b = n.to_be_bytes();
    Peer {
        ip: Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, 0, 1)) + n),
        mac: MacAddr([0x02, 0x00, b[0], b[1], b[2], b[3]]),
    }
}

/// The most switches a topology may have (a chip is a few MB of model state; this keeps a
/// build within a few GB and a run within reach).
pub const MAX_SWITCHES: usize = 1024;

/// The most hosts a topology may have.
pub const MAX_HOSTS: usize = 16_384;

/// The longest link propagation delay, ns (1 s; 200,000 km of fibre).
pub const MAX_LINK_DELAY_NS: u64 = 1_000_000_000;

/// A topology the chip or t2sim cannot have: the keys at fault (as a scenario file names
/// them, under `topology.`) and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub keys: &'static str,
    pub problem: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.problem)
    }
}

/// What a shape needs, computed before anything is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeSize {
    pub switches: usize,
    pub hosts: usize,
    /// The most ports any one switch has, and the keys that set it.
    pub max_ports: usize,
    pub ports_keys: &'static str,
}

impl Shape {
    /// The links of the core, counted once each (one direction), as BFC's artifact counts
    /// its 8 x 8 leaf-spine's 64 ToR-spine links to set the flow rate: the leaf-spine
    /// links; the fat-tree's aggregation-core links (k^3/4); the dumbbell's one link between
    /// its switches; a registered shape's, as it says. A single chip has none (its load is on
    /// host links).
    pub fn core_links(&self) -> Option<usize> {
        match *self {
            Shape::SingleChip { .. } => None,
            Shape::Custom(c) => (c.kind.core_links)(c.values()),
            Shape::Dumbbell { .. } => Some(1),
            Shape::LeafSpine { leaves, spines, .. } => leaves.checked_mul(spines),
            Shape::FatTree { k } => k.checked_mul(k)?.checked_mul(k).map(|n| n / 4),
        }
    }

    /// The shape's switches, hosts and ports per switch, with checked arithmetic; errors for
    /// shapes that cannot exist, name the keys.
    pub fn size(&self) -> Result<ShapeSize, SpecError> {
        let fail = |keys: &'static str, problem: String| Err(SpecError { keys, problem });
        let too_big = |keys: &'static str| SpecError {
            keys,
            problem: "is too large".into(),
        };
        match *self {
            Shape::SingleChip { hosts } => {
                if hosts < 2 {
                    return fail("hosts", "single_chip needs at least 2 hosts".into());
                }
                Ok(ShapeSize {
                    switches: 1,
                    hosts,
                    max_ports: hosts,
                    ports_keys: "hosts",
                })
            }
            Shape::Dumbbell { hosts_per_side: n } => {
                if n < 1 {
                    return fail(
                        "hosts_per_side",
                        "dumbbell needs at least 1 host per side".into(),
                    );
                }
                Ok(ShapeSize {
                    switches: 2,
                    hosts: n.checked_mul(2).ok_or(too_big("hosts_per_side"))?,
                    max_ports: n.checked_add(1).ok_or(too_big("hosts_per_side"))?,
                    ports_keys: "hosts_per_side",
                })
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                if leaves < 1 {
                    return fail("leaves", "leaf_spine needs leaves and spines".into());
                }
                if spines < 1 {
                    return fail("spines", "leaf_spine needs leaves and spines".into());
                }
                if hosts_per_leaf < 1 {
                    return fail(
                        "hosts_per_leaf",
                        "leaf_spine needs hosts on each leaf".into(),
                    );
                }
                let hosts = leaves
                    .checked_mul(hosts_per_leaf)
                    .ok_or(too_big("leaves, hosts_per_leaf"))?;
                if hosts < 2 {
                    return fail(
                        "leaves, hosts_per_leaf",
                        "leaf_spine needs at least 2 hosts".into(),
                    );
                }
                let leaf_ports = hosts_per_leaf
                    .checked_add(spines)
                    .ok_or(too_big("hosts_per_leaf, spines"))?;
                let (max_ports, ports_keys) = if leaf_ports >= leaves {
                    (leaf_ports, "hosts_per_leaf, spines")
                } else {
                    (leaves, "leaves")
                };
                Ok(ShapeSize {
                    switches: leaves
                        .checked_add(spines)
                        .ok_or(too_big("leaves, spines"))?,
                    hosts,
                    max_ports,
                    ports_keys,
                })
            }
            Shape::FatTree { k } => {
                if k < 2 || k % 2 != 0 {
                    return fail("k", "fat_tree needs an even k of at least 2".into());
                }
                let half = k / 2;
                let switches = half
                    .checked_mul(half)
                    .and_then(|h2| h2.checked_mul(5))
                    .ok_or(too_big("k"))?;
                let hosts = half
                    .checked_mul(half)
                    .and_then(|h2| h2.checked_mul(k))
                    .ok_or(too_big("k"))?;
                Ok(ShapeSize {
                    switches,
                    hosts,
                    max_ports: k,
                    ports_keys: "k",
                })
            }
            Shape::Custom(c) => (c.kind.size)(c.values()),
        }
    }
}

/// Ports of `bps` one chip has room for, or an error if `bps` is not a port speed.
pub fn chip_room(params: &Tofino2Params, bps: u64) -> Result<usize, String> {
    let channels = port_channels(bps)?;
    Ok((params.channels_per_mac / channels) as usize
        * params.macs_per_pipe as usize
        * params.pipes as usize)
}

/// The graph before it becomes nodes: switches with their neighbours.
pub struct Plan {
    pub switches: usize,
    /// (switch a, switch b) links.
    pub fabric: Vec<(usize, usize)>,
    /// The switch each host hangs off.
    pub host_switch: Vec<usize>,
}

impl Shape {
    fn plan(&self) -> Result<Plan, String> {
        let need = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
        Ok(match *self {
            Shape::SingleChip { hosts } => {
                need(hosts >= 2, "single_chip needs at least 2 hosts")?;
                Plan {
                    switches: 1,
                    fabric: vec![],
                    host_switch: vec![0; hosts],
                }
            }
            Shape::Dumbbell { hosts_per_side: n } => {
                need(n >= 1, "dumbbell needs at least 1 host per side")?;
                Plan {
                    switches: 2,
                    fabric: vec![(0, 1)],
                    host_switch: (0..2 * n).map(|h| h / n).collect(),
                }
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                need(
                    leaves >= 1 && spines >= 1,
                    "leaf_spine needs leaves and spines",
                )?;
                need(hosts_per_leaf >= 1, "leaf_spine needs hosts on each leaf")?;
                need(
                    leaves * hosts_per_leaf >= 2,
                    "leaf_spine needs at least 2 hosts",
                )?;
                Plan {
                    switches: leaves + spines,
                    fabric: (0..leaves)
                        .flat_map(|l| (0..spines).map(move |s| (l, leaves + s)))
                        .collect(),
                    host_switch: (0..leaves * hosts_per_leaf)
                        .map(|h| h / hosts_per_leaf)
                        .collect(),
                }
            }
            Shape::FatTree { k } => {
                need(
                    k >= 2 && k % 2 == 0,
                    "fat_tree needs an even k of at least 2",
                )?;
                let half = k / 2;
                // Switches: edge (pod p, i) = p*half + i; aggregation = k*half + p*half + i;
                // core (j, i) = 2*k*half + j*half + i.
                let edge = |p: usize, i: usize| p * half + i;
                let agg = |p: usize, i: usize| k * half + p * half + i;
                let core = |j: usize, i: usize| 2 * k * half + j * half + i;
                let mut fabric = Vec::new();
                for p in 0..k {
                    for e in 0..half {
                        for a in 0..half {
                            fabric.push((edge(p, e), agg(p, a)));
                        }
                    }
                    for a in 0..half {
                        for i in 0..half {
                            fabric.push((agg(p, a), core(a, i)));
                        }
                    }
                }
                Plan {
                    switches: 2 * k * half + half * half,
                    fabric,
                    host_switch: (0..k * half * half).map(|h| h / half).collect(),
                }
            }
            Shape::Custom(c) => (c.kind.plan)(c.values())?,
        })
    }
}

/// Places `n` ports of `bps` on a chip, spread over the pipes round-robin.
fn place_ports(params: &Tofino2Params, bps: u64, n: usize) -> Result<Vec<PortSpec>, String> {
    let channels = port_channels(bps)?;
    let per_mac = (params.channels_per_mac / channels) as usize;
    let per_pipe = per_mac * params.macs_per_pipe as usize;
    let room = per_pipe * params.pipes as usize;
    if n > room {
        return Err(format!(
            "a switch needs {n} ports of {bps} b/s but a chip has room for {room}"
        ));
    }
    Ok((0..n)
        .map(|i| {
            let pipe = i % params.pipes as usize;
            let slot = i / params.pipes as usize;
            PortSpec {
                pipe: pipe as u32,
                mac: (slot / per_mac) as u32,
                channel: ((slot % per_mac) as u32) * channels,
                bps,
            }
        })
        .collect())
}

impl TopologySpec {
    /// Checks every size against the chip and t2sim's bounds before anything is built:
    /// the link speed and delay, the shape, the ports of each switch against a chip's room,
    /// and the switches and hosts against `MAX_SWITCHES` and `MAX_HOSTS`.
    pub fn check(&self) -> Result<ShapeSize, SpecError> {
        let fail = |keys: &'static str, problem: String| Err(SpecError { keys, problem });
        self.params.validate().map_err(|e| SpecError {
            keys: "params",
            problem: e.to_string(),
        })?;
        let room = match chip_room(&self.params, self.link_bps) {
            Ok(r) => r,
            Err(e) => return fail("link_gbps", e),
        };
        if !(1..=MAX_LINK_DELAY_NS).contains(&self.link_delay_ns) {
            return fail(
                "link_delay_ns",
                format!(
                    "{} is outside 1..={MAX_LINK_DELAY_NS} (1 s)",
                    self.link_delay_ns
                ),
            );
        }
        let size = self.shape.size()?;
        if size.max_ports > room {
            return fail(
                size.ports_keys,
                format!(
                    "a switch needs {} ports of {} but a chip has room for {room}",
                    size.max_ports,
                    LineRate::new(self.params.clock(), self.link_bps)
                ),
            );
        }
        if size.switches > MAX_SWITCHES {
            return fail(
                size.ports_keys,
                format!(
                    "{} switches; t2sim builds at most {MAX_SWITCHES}",
                    size.switches
                ),
            );
        }
        if size.hosts > MAX_HOSTS {
            return fail(
                size.ports_keys,
                format!("{} hosts; t2sim builds at most {MAX_HOSTS}", size.hosts),
            );
        }
        Ok(size)
    }

    /// Builds the chips, hosts, links and routes.
    pub fn build(&self) -> Result<Topology, String> {
        self.check().map_err(|e| e.problem)?;
        let plan = self.shape.plan()?;
        let clock = self.params.clock();
        let delay = clock.propagation_cycles(self.link_delay_ns).max(1);
        let hosts = plan.host_switch.len();
        // Each switch's ports: its hosts first, then its fabric links in plan order.
        // port_to[s][p] = what is at the far end: Ok(host) or Err(switch).
        let mut port_to: Vec<Vec<Result<usize, usize>>> = vec![Vec::new(); plan.switches];
        for (h, &s) in plan.host_switch.iter().enumerate() {
            port_to[s].push(Ok(h));
        }
        for &(a, b) in &plan.fabric {
            port_to[a].push(Err(b));
            port_to[b].push(Err(a));
        }
        // Distances from every switch to every switch (BFS; the graph is small).
        let dist: Vec<Vec<u32>> = (0..plan.switches)
            .map(|s| {
                let mut d = vec![u32::MAX; plan.switches];
                d[s] = 0;
                let mut q = VecDeque::from([s]);
                while let Some(x) = q.pop_front() {
                    for t in port_to[x].iter().filter_map(|e| e.err()) {
                        if d[t] == u32::MAX {
                            d[t] = d[x] + 1;
                            q.push_back(t);
                        }
                    }
                }
                d
            })
            .collect();
        let peers: Vec<Peer> = (0..hosts).map(host_peer).collect();
        let mut net = Network::new(self.stepping);
        let mut chips = Vec::new();
        let mut latency_base = 0;
        for s in 0..plan.switches {
            let ports = place_ports(&self.params, self.link_bps, port_to[s].len())
                .map_err(|e| format!("switch {s}: {e}"))?;
            let mut routes = Vec::with_capacity(hosts);
            for (h, peer) in peers.iter().enumerate() {
                let target = plan.host_switch[h];
                if target == s {
                    let port = port_to[s]
                        .iter()
                        .position(|e| *e == Ok(h))
                        .expect("own host");
                    routes.push((peer.ip, port));
                } else {
                    let toward: Vec<usize> = (0..port_to[s].len())
                        .filter(|&p| {
                            port_to[s][p].is_err_and(|t| dist[t][target] + 1 == dist[s][target])
                        })
                        .collect();
                    if toward.is_empty() {
                        return Err(format!("switch {s} has no path to host {h}"));
                    }
                    routes.extend(toward.into_iter().map(|p| (peer.ip, p)));
                }
            }
            let config = ChipConfig {
                params: self.params,
                ports,
                routes,
                program: self.program.clone(),
            };
            let chip = Chip::new(&format!("switch{s}"), &config).map_err(|e| e.to_string())?;
            // The chip's latency without the egress serialization of the frame.
            latency_base = chip.unloaded_latency(64, 0)
                - LineRate::new(clock, self.link_bps).serialization_cycles_ceil(64);
            chips.push(net.add(chip));
        }
        // The scheme-independent ideal: the same switch under the built-in forwarding.
        let plain_latency_base = if self.program.is_none() {
            latency_base
        } else {
            let ports = place_ports(&self.params, self.link_bps, port_to[0].len())
                .map_err(|e| format!("switch 0: {e}"))?;
            let plain = ChipConfig {
                params: self.params,
                ports,
                routes: Vec::new(),
                program: None,
            };
            let chip = Chip::new("plain", &plain).map_err(|e| e.to_string())?;
            chip.unloaded_latency(64, 0)
                - LineRate::new(clock, self.link_bps).serialization_cycles_ceil(64)
        };
        let mut host_ids = Vec::with_capacity(hosts);
        for (h, peer) in peers.iter().enumerate() {
            let name = format!("host{h}");
            // A scheme with RDMA-style NICs has them instead of the TCP transport.
            let id = match &self.rdma {
                Some(rdma) => net.add(RdmaHost::new(
                    &name,
                    *peer,
                    clock,
                    self.link_bps,
                    rdma.clone(),
                    peers.clone(),
                )?),
                None => net.add(
                    TransportHost::new(
                        &name,
                        *peer,
                        clock,
                        self.link_bps,
                        self.transport,
                        peers.clone(),
                    )?
                    .with_features(&self.host_features)?,
                ),
            };
            host_ids.push(id);
        }
        for s in 0..plan.switches {
            for (p, far) in port_to[s].iter().enumerate() {
                match *far {
                    Ok(h) => net
                        .link(host_ids[h], 0, chips[s], p, delay)
                        .map_err(|e| e.to_string())?,
                    // Each fabric link is made once, from its lower-numbered switch.
                    Err(t) if t > s => {
                        let q = port_to[t]
                            .iter()
                            .enumerate()
                            .filter(|(_, e)| **e == Err(s))
                            .map(|(q, _)| q)
                            .find(|&q| net.peer(chips[t], q).is_none())
                            .expect("the far end lists this link");
                        net.link(chips[s], p, chips[t], q, delay)
                            .map_err(|e| e.to_string())?
                    }
                    Err(_) => {}
                }
            }
        }
        let switch_hops: Vec<Vec<u32>> = (0..hosts)
            .map(|a| {
                (0..hosts)
                    .map(|b| dist[plan.host_switch[a]][plan.host_switch[b]] + 1)
                    .collect()
            })
            .collect();
        Ok(Topology {
            net,
            hosts: host_ids,
            chips,
            peers,
            longest_path: switch_hops
                .iter()
                .flat_map(|row: &Vec<u32>| row.iter().copied())
                .max()
                .unwrap_or(1),
            switch_hops,
            link_delay: delay,
            link_delay_ns: self.link_delay_ns,
            link_bps: self.link_bps,
            plain_latency_base,
            clock,
            line: LineRate::new(clock, self.link_bps),
            mss: self.transport.mss,
            chip_latency_base: latency_base,
        })
    }
}

impl Topology {
    /// Gives each flow to its sending host.
    pub fn add_flows(&mut self, flows: &[FlowSpec]) -> Result<(), String> {
        for f in flows {
            if f.src >= self.hosts.len() || f.dst >= self.hosts.len() {
                return Err(format!(
                    "flow {} goes from host {} to host {}, but there are {} hosts",
                    f.id,
                    f.src,
                    f.dst,
                    self.hosts.len()
                ));
            }
            t2_testbench::endpoint_mut(&mut self.net, self.hosts[f.src]).add_flow(*f)?;
        }
        Ok(())
    }

    /// Switches on the path from host `a` to host `b`.
    pub fn switch_hops(&self, a: usize, b: usize) -> u32 {
        self.switch_hops[a][b]
    }

    /// Whether the path from host `a` to host `b` crosses the core ([`Shape::core_links`]):
    /// in a leaf-spine, a fat-tree and a dumbbell, the paths that cross it are exactly the
    /// longest ones (3, 5 and 2 switches).
    pub fn crosses_core(&self, a: usize, b: usize) -> bool {
        self.switch_hops(a, b) == self.longest_path && self.longest_path > 1
    }

    /// Propagation delay of every link, cycles.
    pub fn link_delay(&self) -> Cycle {
        self.link_delay
    }

    /// A chip's unloaded latency without the egress serialization of the frame, cycles.
    pub fn chip_latency_base(&self) -> Cycle {
        self.chip_latency_base
    }

    /// The line rate of every port, NIC and link.
    pub fn line(&self) -> LineRate {
        self.line
    }

    /// Propagation delay of every link, ns.
    pub fn link_delay_ns(&self) -> u64 {
        self.link_delay_ns
    }

    /// Speed of every port, NIC and link, b/s.
    pub fn link_bps(&self) -> u64 {
        self.link_bps
    }

    /// The clock cycles count.
    pub fn clock(&self) -> t2_clock::Clock {
        self.clock
    }

    /// The MSS of the hosts' transport.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// The ideal FCT of a flow (docs/testbench.md): its frames serialized once at line
    /// rate, plus, at each switch, the unloaded latency of its last frame; plus the ACK's
    /// serialization and its unloaded latency at each switch; plus propagation both ways.
    pub fn ideal_fct(&self, f: &FlowSpec) -> Cycle {
        self.ideal_with(f, self.chip_latency_base)
    }

    /// The ideal FCT of a flow under one definition ([`IdealFct`]).
    pub fn ideal_fct_as(&self, f: &FlowSpec, ideal: IdealFct) -> Cycle {
        match ideal {
            IdealFct::SchemePipeline => self.ideal_with(f, self.chip_latency_base),
            IdealFct::PlainForwarding => self.ideal_with(f, self.plain_latency_base),
            IdealFct::Rule(r) => (r.fct)(self, f),
        }
    }

    /// A chip's unloaded latency under the built-in forwarding, without the egress
    /// serialization of the frame, cycles.
    pub fn plain_latency_base(&self) -> Cycle {
        self.plain_latency_base
    }

    fn ideal_with(&self, f: &FlowSpec, chip_latency_base: Cycle) -> Cycle {
        let framing = Framing {
            mss: self.mss,
            overhead: SEGMENT_OVERHEAD,
        };
        let hops = self.switch_hops(f.src, f.dst) as Cycle;
        let frames = framing.frames(f.size_bytes);
        let last = f.size_bytes - (frames - 1) * self.mss + SEGMENT_OVERHEAD;
        let ack = 64;
        let chip = |bytes: u64| chip_latency_base + self.line.serialization_cycles_ceil(bytes);
        let rtt = 2 * (hops + 1) * self.link_delay
            + hops * (chip(last) + chip(ack))
            + self.line.serialization_cycles_ceil(ack);
        framing.ideal_fct(f.size_bytes, self.line, rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_links_count_each_fabric_link_once() {
        let ls = Shape::LeafSpine {
            leaves: 8,
            spines: 8,
            hosts_per_leaf: 16,
        };
        assert_eq!(ls.core_links(), Some(64), "BFC's artifact: 64 x 100 Gb/s");
        assert_eq!(Shape::FatTree { k: 4 }.core_links(), Some(16));
        assert_eq!(Shape::Dumbbell { hosts_per_side: 3 }.core_links(), Some(1));
        assert_eq!(Shape::SingleChip { hosts: 4 }.core_links(), None);
    }
}
