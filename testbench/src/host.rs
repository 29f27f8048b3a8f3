//! A host with one NIC port: an optional paced UDP sender and a sink that records every
//! frame it receives.
//!
//! Each UDP frame the host sends carries a 16-byte stamp at the start of its payload: flow id
//! (u32), sequence number (u32) and the cycle its last bit left the host (u64), big-endian.
//! The sink reads the stamp back, so latency is measured from real packet bytes.

use crate::metrics::CycleHistogram;
use crate::node::{Node, Sent};
use std::fmt;
use std::net::Ipv4Addr;
use t2_clock::{Clock, Cycle, LineRate, PacedSchedule, FCS_BYTES};
use t2_pipeline::headers::{self, Endpoints, MacAddr, UDP_HEADERS_LEN};
use t2_pipeline::{PacketHandle, PacketPool};

/// Bytes of the stamp at the start of every testbench UDP payload.
pub const STAMP_LEN: usize = 16;
/// Smallest frame (FCS included) Ethernet allows.
pub const MIN_FRAME_BYTES: u32 = 64;
/// Largest frame (FCS included) the model accepts: a 9216-byte jumbo frame.
pub const MAX_FRAME_BYTES: u32 = 9216;

/// A stream of equal-size UDP frames sent at a fixed average rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdpFlow {
    pub flow_id: u32,
    pub dst_ip: Ipv4Addr,
    pub dst_mac: MacAddr,
    pub src_port: u16,
    pub dst_port: u16,
    /// Frame length with FCS, 64..=9216.
    pub frame_bytes: u32,
    /// Average rate in b/s counting preamble and inter-frame gap; at most the NIC's rate.
    pub rate_bps: u64,
    /// Cycle the first frame's first bit leaves.
    pub start: Cycle,
    /// Send no frame whose last bit would leave after this cycle.
    pub end: Option<Cycle>,
    /// Send at most this many frames.
    pub packets: Option<u64>,
}

/// A flow that cannot be sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowError {
    FrameSize {
        host: String,
        bytes: u32,
    },
    Rate {
        host: String,
        rate_bps: u64,
        line_bps: u64,
    },
    Unbounded {
        host: String,
    },
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowError::FrameSize { host, bytes } => write!(
                f,
                "{host}: frame size {bytes} B is outside {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES}"
            ),
            FlowError::Rate {
                host,
                rate_bps,
                line_bps,
            } => write!(
                f,
                "{host}: send rate {rate_bps} b/s must be above 0 and at most the NIC's {line_bps} b/s"
            ),
            FlowError::Unbounded { host } => {
                write!(f, "{host}: a flow needs an end cycle or a packet count")
            }
        }
    }
}

impl std::error::Error for FlowError {}

/// One frame the sink received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reception {
    pub flow_id: u32,
    pub seq: u32,
    /// Cycle the last bit left the sending host (from the stamp).
    pub sent_at: Cycle,
    /// Cycle the last bit reached this host.
    pub received_at: Cycle,
    /// Frame length with FCS.
    pub frame_bytes: u32,
}

struct Sender {
    flow: UdpFlow,
    schedule: PacedSchedule,
    next_seq: u64,
    next_at: Option<Cycle>,
}

/// A host.
pub struct Host {
    name: String,
    mac: MacAddr,
    ip: Ipv4Addr,
    line: LineRate,
    sender: Option<Sender>,
    sent: u64,
    /// Every reception, while `keep_receptions` (the default); a long run turns it off and
    /// keeps only `latencies`, whose memory is bounded.
    received: Vec<Reception>,
    keep_receptions: bool,
    /// Reception cycle minus the stamped send cycle of every stamped frame.
    latencies: CycleHistogram,
    /// Frames that were not testbench UDP frames (counted, then freed).
    foreign: u64,
    payload: Vec<u8>,
}

impl Host {
    pub fn new(name: &str, mac: MacAddr, ip: Ipv4Addr, clock: Clock, nic_bps: u64) -> Host {
        Host {
            name: name.to_string(),
            mac,
            ip,
            line: LineRate::new(clock, nic_bps),
            sender: None,
            sent: 0,
            received: Vec::new(),
            keep_receptions: true,
            latencies: CycleHistogram::default(),
            foreign: 0,
            payload: Vec::new(),
        }
    }

    pub fn ip(&self) -> Ipv4Addr {
        self.ip
    }

    pub fn mac(&self) -> MacAddr {
        self.mac
    }

    /// Makes the host send `flow` (replacing any earlier one).
    pub fn send(&mut self, clock: Clock, flow: UdpFlow) -> Result<(), FlowError> {
        if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&flow.frame_bytes) {
            return Err(FlowError::FrameSize {
                host: self.name.clone(),
                bytes: flow.frame_bytes,
            });
        }
        let line_bps = self.line.bits_per_second();
        if flow.rate_bps == 0 || flow.rate_bps > line_bps {
            return Err(FlowError::Rate {
                host: self.name.clone(),
                rate_bps: flow.rate_bps,
                line_bps,
            });
        }
        if flow.end.is_none() && flow.packets.is_none() {
            return Err(FlowError::Unbounded {
                host: self.name.clone(),
            });
        }
        let schedule = PacedSchedule::new(clock, flow.frame_bytes as u64, flow.rate_bps, line_bps);
        let mut sender = Sender {
            flow,
            schedule,
            next_seq: 0,
            next_at: None,
        };
        sender.next_at = Self::emission(&sender, 0);
        self.sender = Some(sender);
        Ok(())
    }

    fn emission(s: &Sender, k: u64) -> Option<Cycle> {
        if s.flow.packets.is_some_and(|n| k >= n) {
            return None;
        }
        let at = s.flow.start + s.schedule.last_bit_offset(k);
        match s.flow.end {
            Some(end) if at > end => None,
            _ => Some(at),
        }
    }

    /// Frames sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Every reception so far (empty once `keep_receptions(false)`).
    pub fn received(&self) -> &[Reception] {
        &self.received
    }

    /// Whether to keep a record of every reception (default true). Off, the host keeps only
    /// counts and the latency histogram: its memory stays flat however long the run.
    pub fn keep_receptions(&mut self, keep: bool) {
        self.keep_receptions = keep;
        if !keep {
            self.received = Vec::new();
        }
    }

    /// Stamped frames received and their latencies (reception cycle minus send cycle).
    pub fn latencies(&self) -> &CycleHistogram {
        &self.latencies
    }

    pub fn foreign(&self) -> u64 {
        self.foreign
    }
}

impl Node for Host {
    fn name(&self) -> &str {
        &self.name
    }

    fn port_count(&self) -> usize {
        1
    }

    fn port_bps(&self, _port: usize) -> u64 {
        self.line.bits_per_second()
    }

    fn receive(&mut self, now: Cycle, _port: usize, pkt: PacketHandle, pool: &mut PacketPool) {
        let bytes = pool.bytes(pkt);
        let stamp = headers::parse_frame(bytes).ok().and_then(|p| {
            p.udp?;
            bytes.get(p.payload_offset..p.payload_offset + STAMP_LEN)
        });
        match stamp {
            Some(s) => {
                let r = Reception {
                    flow_id: u32::from_be_bytes(s[0..4].try_into().expect("4 bytes")),
                    seq: u32::from_be_bytes(s[4..8].try_into().expect("4 bytes")),
                    sent_at: u64::from_be_bytes(s[8..16].try_into().expect("8 bytes")),
                    received_at: now,
                    frame_bytes: (bytes.len() as u64 + FCS_BYTES) as u32,
                };
                self.latencies.add(now.saturating_sub(r.sent_at));
                if self.keep_receptions {
                    self.received.push(r);
                }
            }
            None => self.foreign += 1,
        }
        pool.free(pkt);
    }

    fn tick(&mut self, now: Cycle, pool: &mut PacketPool, out: &mut Vec<Sent>) {
        let Some(s) = self.sender.as_mut() else {
            return;
        };
        if s.next_at != Some(now) {
            return;
        }
        let f = &s.flow;
        let buffer_len = f.frame_bytes as usize - FCS_BYTES as usize;
        let payload_len = buffer_len.saturating_sub(UDP_HEADERS_LEN).max(STAMP_LEN);
        self.payload.clear();
        self.payload.extend_from_slice(&f.flow_id.to_be_bytes());
        self.payload
            .extend_from_slice(&(s.next_seq as u32).to_be_bytes());
        self.payload.extend_from_slice(&now.to_be_bytes());
        self.payload.resize(payload_len, 0);
        let ep = Endpoints {
            src_mac: self.mac,
            dst_mac: f.dst_mac,
            src_ip: self.ip,
            dst_ip: f.dst_ip,
            src_port: f.src_port,
            dst_port: f.dst_port,
        };
        let pkt = pool.alloc();
        headers::build_udp_frame(
            pool.bytes_mut(pkt),
            &ep,
            64,
            s.next_seq as u16,
            &self.payload,
            false,
            buffer_len,
        );
        out.push(Sent { port: 0, pkt });
        self.sent += 1;
        s.next_seq += 1;
        s.next_at = Self::emission(s, s.next_seq);
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        self.sender
            .as_ref()
            .and_then(|s| s.next_at)
            .filter(|&t| t > now)
    }
}
