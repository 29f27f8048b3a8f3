//! A two-port wire tap for the transport tests of the schemes' host sides: it forwards each
//! frame in the cycle it arrives, and drops, marks, holds back or bounces the ones it is
//! told to, logging what passed (as the testbench's own transport tests do).

use std::net::Ipv4Addr;
use t2_clock::{Clock, Cycle};
use t2_pipeline::headers::{self, MacAddr, Tcp};
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::network::{Network, NodeId, Stepping};
use t2_testbench::transport::{Peer, TransportConfig, TransportHost};
use t2_testbench::workload::FlowSpec;
use t2_testbench::{FeatureSpec, Node, Sent};

/// ECN codepoints in the low two bits of the IPv4 TOS byte, and where that byte is.
pub const ECT0: u8 = 0b10;
pub const CE: u8 = 0b11;
pub const TOS_OFFSET: usize = 15;

pub const G100: u64 = 100_000_000_000;

/// A two-port wire tap between hosts: forwards each frame in the cycle it arrives,
/// dropping (and counting) every `drop_every`-th data frame and every
/// `drop_ack_every`-th ACK, and marking CE on data frames if `mark`.
pub struct Tap {
    pub drop_every: u64,
    pub drop_ack_every: u64,
    pub mark: bool,
    /// Send every `bounce_every`-th data frame back to its sender instead (0: never).
    pub bounce_every: u64,
    /// Hold the first data frame until the second has passed, and mark the second CE:
    /// the receiver then gets a CE-marked segment out of order.
    pub overtake_first: bool,
    pub held: Option<PacketHandle>,
    /// Drop the first copy of the data segments with these sequence numbers.
    pub drop_seqs: Vec<u32>,
    /// Every data frame seen: (cycle, sequence number).
    pub log: Vec<(Cycle, u32)>,
    /// The ECN bits of every data frame seen, as it arrived.
    pub ecn: Vec<u8>,
    /// Mark CE on the first copy of the data segments with these sequence numbers.
    pub mark_seqs: Vec<u32>,
    /// Every ACK seen going back: (cycle, acknowledgement number, ECE).
    pub acks: Vec<(Cycle, u32, bool)>,
    pub seen: [u64; 2],
    pub dropped: u64,
    pub queue: Vec<Sent>,
}

impl Node for Tap {
    fn name(&self) -> &str {
        "tap"
    }
    fn port_count(&self) -> usize {
        2
    }
    fn port_bps(&self, _port: usize) -> u64 {
        G100
    }
    fn receive(&mut self, now: Cycle, port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        self.seen[port] += 1;
        if port == 1 {
            let b = pool.bytes(pkt);
            let ack = u32::from_be_bytes(b[42..46].try_into().unwrap());
            self.acks.push((now, ack, u16::from(b[47]) & Tcp::ECE != 0));
        }
        if port == 0 {
            let b = pool.bytes(pkt);
            let seq = u32::from_be_bytes(b[38..42].try_into().unwrap());
            self.log.push((now, seq));
            self.ecn.push(b[TOS_OFFSET] & 0b11);
            if let Some(k) = self.mark_seqs.iter().position(|&s| s == seq) {
                self.mark_seqs.remove(k);
                let b = pool.bytes_mut(pkt);
                b[TOS_OFFSET] |= CE;
                let c = headers::ipv4_header_checksum(&b[14..34]);
                b[24..26].copy_from_slice(&c.to_be_bytes());
            }
            if let Some(k) = self.drop_seqs.iter().position(|&s| s == seq) {
                self.drop_seqs.remove(k);
                self.dropped += 1;
                pool.free(pkt);
                return;
            }
        }
        let every = if port == 0 {
            self.drop_every
        } else {
            self.drop_ack_every
        };
        if every > 0 && self.seen[port].is_multiple_of(every) {
            self.dropped += 1;
            pool.free(pkt);
            return;
        }
        if port == 0 && self.bounce_every > 0 && self.seen[0].is_multiple_of(self.bounce_every) {
            self.queue.push(Sent { port: 0, pkt });
            return;
        }
        if port == 0 && self.overtake_first && self.seen[0] <= 2 {
            if self.seen[0] == 1 {
                self.held = Some(pkt);
                return;
            }
            let b = pool.bytes_mut(pkt);
            b[TOS_OFFSET] |= CE;
            let c = headers::ipv4_header_checksum(&b[14..34]);
            b[24..26].copy_from_slice(&c.to_be_bytes());
            self.queue.push(Sent { port: 1, pkt });
            let first = self.held.take().expect("the first frame is held");
            self.queue.push(Sent {
                port: 1,
                pkt: first,
            });
            return;
        }
        if port == 0 && self.mark {
            let b = pool.bytes_mut(pkt);
            b[TOS_OFFSET] |= CE;
            let c = headers::ipv4_header_checksum(&b[14..34]);
            b[24..26].copy_from_slice(&c.to_be_bytes());
        }
        self.queue.push(Sent {
            port: 1 - port,
            pkt,
        });
    }
    fn tick(&mut self, _now: Cycle, _pool: &mut PacketPool, out: &mut Vec<Sent>) {
        out.append(&mut self.queue);
    }
    fn next_event(&self, _now: Cycle) -> Option<Cycle> {
        None
    }
}

pub fn peer(i: u8) -> Peer {
    Peer {
        ip: Ipv4Addr::new(10, 0, 0, i + 1),
        mac: MacAddr([2, 0, 0, 0, 0, i + 1]),
    }
}

pub fn flow(id: u32, start: Cycle, size: u64) -> FlowSpec {
    FlowSpec {
        start,
        id,
        src: 0,
        dst: 1,
        size_bytes: size,
    }
}

/// Sender - tap - receiver, each link `delay` cycles.
pub fn net(
    stepping: Stepping,
    config: TransportConfig,
    tap: Tap,
    flows: &[FlowSpec],
) -> (Network, NodeId, NodeId, NodeId) {
    net_with(stepping, config, &[], tap, flows)
}

/// [`net`] with both hosts running `features`.
pub fn net_with(
    stepping: Stepping,
    config: TransportConfig,
    features: &[FeatureSpec],
    tap: Tap,
    flows: &[FlowSpec],
) -> (Network, NodeId, NodeId, NodeId) {
    let clock = Clock::tofino2();
    let peers = vec![peer(0), peer(1)];
    let host = |name, me, peers| {
        TransportHost::new(name, me, clock, G100, config, peers)
            .and_then(|h| h.with_features(features))
            .unwrap()
    };
    let mut a = host("a", peer(0), peers.clone());
    for f in flows {
        a.add_flow(*f).unwrap();
    }
    let b = host("b", peer(1), peers);
    let mut net = Network::new(stepping);
    let (a, t, b) = (net.add(a), net.add(tap), net.add(b));
    net.link(a, 0, t, 0, 150).unwrap();
    net.link(t, 1, b, 0, 150).unwrap();
    (net, a, t, b)
}

pub fn clean_tap() -> Tap {
    Tap {
        drop_every: 0,
        drop_ack_every: 0,
        mark: false,
        bounce_every: 0,
        overtake_first: false,
        held: None,
        drop_seqs: Vec::new(),
        log: Vec::new(),
        ecn: Vec::new(),
        mark_seqs: Vec::new(),
        acks: Vec::new(),
        seen: [0; 2],
        dropped: 0,
        queue: Vec::new(),
    }
}
