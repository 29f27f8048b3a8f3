//! Packet captures: frames on the network's links written as pcapng files that Wireshark and
//! tshark open, and pcap/pcapng files replayed into a node's port.
//!
//! # Capturing
//!
//! A capture point ([`CaptureSpec`]) is written `NODE`, `NODE:PORT` or `link:NODE[:PORT]`
//! (port 0 when left out; a chip's ports are numbered in the order of its configuration, a
//! host's NIC is port 0):
//! - `NODE[:PORT]` captures the frames the port sends and receives, one interface, each frame
//!   marked inbound or outbound (`epb_flags`) and stamped when its last bit crosses the port;
//! - `link:NODE[:PORT]` captures the link at that port: what each end sends, stamped when the
//!   last bit leaves the sender, as interface 0 (that end) and 1 (the far end).
//!
//! Time stamps are the simulated time from cycle 0 (shown by Wireshark as 1970-01-01 plus the
//! simulated time) in nanoseconds (`if_tsresol` 9): `round(cycle x 1e9 / clock_hz)`, rounded
//! to nearest with ties up ([`cycle_to_ns_round`]). Frames are written without their FCS.
//! Files are byte-identical across runs of the same scenario.
//!
//! # Replaying
//!
//! [`read_capture`] reads a pcap (micro- or nanosecond) or pcapng file of Ethernet frames;
//! [`replay_schedule`] gives each frame the cycle its last bit arrives: at its recorded time
//! (relative to the first frame) or paced back to back at a given rate, never faster than the
//! port's line rate; [`replay`] puts them on the wire into a node's port.

//!
//! `write.rs` holds the capture points' tap and the pcapng writer, `read.rs` the pcap and
//! pcapng reader, `replay.rs` the schedule and injection of replayed frames.

mod read;
mod replay;
mod write;

pub use read::{read_capture, CapturedFrame, MAX_FRAME_BYTES, MIN_FRAME_BYTES};
pub use replay::{replay_schedule, ReplayRequest, ReplayTiming};
pub use write::{CaptureFile, Capturing, PcapRequest};

use std::fmt;
use t2_clock::Cycle;
use t2_testbench::{Network, NodeId};

/// Nanoseconds at the start of `cycle` under a `clock_hz` clock, rounded to nearest (ties up).
pub fn cycle_to_ns_round(cycle: Cycle, clock_hz: u64) -> u64 {
    ((cycle as u128 * 1_000_000_000 + clock_hz as u128 / 2) / clock_hz as u128) as u64
}

/// A port of a node: by index (a chip's ports in the order of its configuration, a host's
/// NIC 0), or for a chip by device port (`d8`, as the waveforms name ports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortRef {
    Index(usize),
    Device(u16),
}

impl fmt::Display for PortRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortRef::Index(i) => write!(f, "{i}"),
            PortRef::Device(d) => write!(f, "d{d}"),
        }
    }
}

impl PortRef {
    /// The port's index on node `node`; errors say what is wrong with `what`.
    pub fn resolve(self, net: &Network, node: NodeId, what: &str) -> Result<usize, String> {
        let n = net.node_dyn(node);
        let ports = n.port_count();
        match self {
            PortRef::Index(i) if i < ports => Ok(i),
            PortRef::Index(_) => Err(format!(
                "{what}: {} has ports 0..{}",
                n.name(),
                ports.saturating_sub(1)
            )),
            PortRef::Device(d) => {
                let any: &dyn std::any::Any = n;
                let chip = any.downcast_ref::<crate::Chip>().ok_or_else(|| {
                    format!("{what}: {} is not a chip: it has no device ports", n.name())
                })?;
                (0..ports).find(|&i| chip.dev_port(i) == d).ok_or_else(|| {
                    let all: Vec<String> = (0..ports)
                        .map(|i| format!("d{}", chip.dev_port(i)))
                        .collect();
                    format!(
                        "{what}: {} has no device port {d} (it has {})",
                        n.name(),
                        all.join(", ")
                    )
                })
            }
        }
    }
}

/// Where to capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSpec {
    pub node: String,
    pub port: PortRef,
    /// The whole link at the port (both senders) rather than the port itself.
    pub link: bool,
}

impl CaptureSpec {
    /// Parses `NODE`, `NODE:PORT`, `link:NODE` or `link:NODE:PORT`; `PORT` is an index or, for
    /// a chip, `d` and a device port.
    pub fn parse(s: &str) -> Result<CaptureSpec, String> {
        let (link, rest) = match s.strip_prefix("link:") {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (node, port) = match rest.split_once(':') {
            Some((n, p)) => {
                let port = match p.strip_prefix('d') {
                    Some(d) => d.parse::<u16>().ok().map(PortRef::Device),
                    None => p.parse::<usize>().ok().map(PortRef::Index),
                }
                .ok_or_else(|| {
                    format!(
                        "capture point `{s}`: port `{p}` is not a port number (3) or device port (d8)"
                    )
                })?;
                (n, port)
            }
            None => (rest, PortRef::Index(0)),
        };
        let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if node.is_empty() || !node.chars().all(valid) {
            return Err(format!(
                "capture point `{s}`: expected NODE, NODE:PORT, link:NODE or link:NODE:PORT"
            ));
        }
        Ok(CaptureSpec {
            node: node.to_string(),
            port,
            link,
        })
    }

    /// Parses a comma-separated list of capture points.
    pub fn parse_list(s: &str) -> Result<Vec<CaptureSpec>, String> {
        let specs = s
            .split(',')
            .map(|p| CaptureSpec::parse(p.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, a) in specs.iter().enumerate() {
            if specs[..i].contains(a) {
                return Err(format!("capture point `{a}` is given twice"));
            }
        }
        Ok(specs)
    }

    /// The capture's file name: `NODE-PORT.pcapng` or `link-NODE-PORT.pcapng`.
    pub fn file_name(&self) -> String {
        let link = if self.link { "link-" } else { "" };
        format!("{link}{}-{}.pcapng", self.node, self.port)
    }
}

impl fmt::Display for CaptureSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let link = if self.link { "link:" } else { "" };
        write!(f, "{link}{}:{}", self.node, self.port)
    }
}
