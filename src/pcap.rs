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

use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::{Block, PcapNgReader, PcapNgWriter};
use pcap_file::{DataLink, PcapError};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;
use t2_clock::{Clock, Cycle, LineRate, FCS_BYTES};
use t2_testbench::{Direction, Network, NodeId, Tap, TapFrame};

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

/// Captures to write, into one folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapRequest {
    pub specs: Vec<CaptureSpec>,
    pub dir: PathBuf,
}

/// A capture file written: where, and how many frames it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureFile {
    pub path: PathBuf,
    pub frames: u64,
}

struct Capture {
    path: PathBuf,
    /// Interface 0 watches `(node, port)`; a link capture's interface 1 watches the far end.
    ends: Vec<(NodeId, usize)>,
    link: bool,
    writer: Option<PcapNgWriter<BufWriter<File>>>,
    frames: u64,
    error: Option<String>,
}

struct Captures {
    clock_hz: u64,
    list: Vec<Capture>,
}

/// The network's tap for a set of captures (shared with the [`Capturing`] that finishes them).
struct CaptureTap(Rc<RefCell<Captures>>);

impl Tap for CaptureTap {
    fn frame(&mut self, f: &TapFrame<'_>) {
        let mut caps = self.0.borrow_mut();
        let clock_hz = caps.clock_hz;
        for c in caps.list.iter_mut() {
            let interface = match (c.link, f.direction) {
                (false, _) if c.ends[0] == (f.node, f.port) => 0,
                (true, Direction::Tx) => match c.ends.iter().position(|&e| e == (f.node, f.port)) {
                    Some(i) => i as u32,
                    None => continue,
                },
                _ => continue,
            };
            let flags = match (c.link, f.direction) {
                (true, _) => vec![],
                // epb_flags bits 0-1: 01 inbound, 10 outbound.
                (false, Direction::Rx) => vec![EnhancedPacketOption::Flags(1)],
                (false, Direction::Tx) => vec![EnhancedPacketOption::Flags(2)],
            };
            let Some(w) = c.writer.as_mut() else {
                continue;
            };
            let block = EnhancedPacketBlock {
                interface_id: interface,
                timestamp: Duration::from_nanos(cycle_to_ns_round(f.cycle, clock_hz)),
                original_len: f.bytes.len() as u32,
                data: Cow::Borrowed(f.bytes),
                options: flags,
            };
            if let Err(e) = w.write_pcapng_block(block) {
                c.error = Some(format!("{}: {e}", c.path.display()));
                c.writer = None;
            } else {
                c.frames += 1;
            }
        }
    }
}

/// Captures in progress on a network.
pub struct Capturing(Rc<RefCell<Captures>>);

impl PcapRequest {
    /// Creates the folder and the files, and sets the network's tap. Errors name the capture
    /// point or the file.
    pub fn start(&self, net: &mut Network, clock: Clock) -> Result<Capturing, String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("{}: cannot create the folder: {e}", self.dir.display()))?;
        let find = |name: &str| {
            (0..net.node_count())
                .map(NodeId)
                .find(|&id| net.node_dyn(id).name() == name)
        };
        let mut list = Vec::new();
        for spec in &self.specs {
            let node = find(&spec.node).ok_or_else(|| {
                let names: Vec<&str> = (0..net.node_count())
                    .map(|i| net.node_dyn(NodeId(i)).name())
                    .collect();
                format!(
                    "capture point `{spec}`: no node `{}` (the network has {})",
                    spec.node,
                    names.join(", ")
                )
            })?;
            let port = spec
                .port
                .resolve(net, node, &format!("capture point `{spec}`"))?;
            let mut ends = vec![(node, port)];
            if spec.link {
                let peer = net
                    .peer(node, port)
                    .ok_or_else(|| format!("capture point `{spec}`: the port has no link"))?;
                ends.push(peer);
            }
            let path = self.dir.join(spec.file_name());
            let file = File::create(&path)
                .map_err(|e| format!("{}: cannot create the capture: {e}", path.display()))?;
            let section = SectionHeaderBlock {
                options: vec![SectionHeaderOption::UserApplication(Cow::Owned(format!(
                    "t2sim {}",
                    env!("CARGO_PKG_VERSION")
                )))],
                ..SectionHeaderBlock::default()
            };
            let io_err = |e: PcapError| format!("{}: {e}", path.display());
            let mut w =
                PcapNgWriter::with_section_header(BufWriter::new(file), section).map_err(io_err)?;
            for &(n, p) in &ends {
                let name = net.node_dyn(n).name();
                let any: &dyn std::any::Any = net.node_dyn(n);
                let description = match any.downcast_ref::<crate::Chip>() {
                    Some(chip) => format!("{name} port {p}, device port {}", chip.dev_port(p)),
                    None => format!("{name} port {p}"),
                };
                let idb = InterfaceDescriptionBlock {
                    linktype: DataLink::ETHERNET,
                    snaplen: 0,
                    options: vec![
                        InterfaceDescriptionOption::IfName(Cow::Owned(format!("{name}:{p}"))),
                        InterfaceDescriptionOption::IfDescription(Cow::Owned(description)),
                        InterfaceDescriptionOption::IfSpeed(net.node_dyn(n).port_bps(p)),
                        InterfaceDescriptionOption::IfTsResol(9),
                    ],
                };
                w.write_pcapng_block(idb).map_err(io_err)?;
            }
            list.push(Capture {
                path,
                ends,
                link: spec.link,
                writer: Some(w),
                frames: 0,
                error: None,
            });
        }
        let shared = Rc::new(RefCell::new(Captures {
            clock_hz: clock.hz,
            list,
        }));
        net.set_tap(Some(Box::new(CaptureTap(shared.clone()))));
        Ok(Capturing(shared))
    }
}

impl Capturing {
    /// Removes the tap, flushes the files and lists them; reports the first write error.
    pub fn finish(self, net: &mut Network) -> Result<Vec<CaptureFile>, String> {
        net.set_tap(None);
        let mut caps = self.0.borrow_mut();
        let mut out = Vec::new();
        for c in caps.list.iter_mut() {
            if let Some(e) = c.error.take() {
                return Err(e);
            }
            if let Some(w) = c.writer.take() {
                w.into_inner()
                    .flush()
                    .map_err(|e| format!("{}: {e}", c.path.display()))?;
            }
            out.push(CaptureFile {
                path: c.path.clone(),
                frames: c.frames,
            });
        }
        Ok(out)
    }
}

/// A frame read from a capture: its time stamp as an exact fraction of a second
/// (`units / units_per_second`) and its bytes (FCS excluded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedFrame {
    pub units: u128,
    pub units_per_second: u128,
    pub bytes: Vec<u8>,
}

/// The largest frame t2sim carries, FCS excluded (9216 B with FCS).
pub const MAX_FRAME_BYTES: usize = 9216 - FCS_BYTES as usize;
/// The smallest: an Ethernet header.
pub const MIN_FRAME_BYTES: usize = 14;

/// Reads every Ethernet frame of a pcap or pcapng file. Errors name the file and the packet
/// (numbered from 1, as Wireshark does): not a capture, a link type other than Ethernet, a
/// truncated file or packet, a frame too short or too long, no packets at all.
pub fn read_capture(path: &Path) -> Result<Vec<CapturedFrame>, String> {
    let shown = path.display();
    let mut file = BufReader::new(File::open(path).map_err(|e| format!("{shown}: {e}"))?);
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic)
        .map_err(|_| format!("{shown}: not a pcap or pcapng file (shorter than 4 bytes)"))?;
    let file = BufReader::new(File::open(path).map_err(|e| format!("{shown}: {e}"))?);
    let frames = match u32::from_le_bytes(magic) {
        0x0a0d_0d0a => read_pcapng(file, path)?,
        0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 => read_pcap(file, path)?,
        m => {
            return Err(format!(
                "{shown}: not a pcap or pcapng file (starts with {m:#010x})"
            ))
        }
    };
    if frames.is_empty() {
        return Err(format!("{shown}: holds no packets"));
    }
    Ok(frames)
}

fn packet_error(path: &Path, k: usize, e: PcapError) -> String {
    match e {
        PcapError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => format!(
            "{}: the file ends inside packet {k} (truncated capture)",
            path.display()
        ),
        PcapError::IncompleteBuffer => format!(
            "{}: the file ends inside packet {k} (truncated capture)",
            path.display()
        ),
        e => format!("{}: packet {k}: {e}", path.display()),
    }
}

fn check_frame(path: &Path, k: usize, captured: usize, original: u32) -> Result<(), String> {
    let shown = path.display();
    if captured < original as usize {
        return Err(format!(
            "{shown}: packet {k} was cut to {captured} of its {original} bytes when captured \
             (snap length); t2sim needs whole frames"
        ));
    }
    if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&captured) {
        return Err(format!(
            "{shown}: packet {k} is {captured} bytes; frames must be {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES} bytes without FCS"
        ));
    }
    Ok(())
}

fn read_pcap(file: impl Read, path: &Path) -> Result<Vec<CapturedFrame>, String> {
    let shown = path.display();
    let mut r = pcap_file::pcap::PcapReader::new(file).map_err(|e| format!("{shown}: {e}"))?;
    if r.header().datalink != DataLink::ETHERNET {
        return Err(format!(
            "{shown}: link type {:?}; t2sim replays Ethernet captures only",
            r.header().datalink
        ));
    }
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let k = out.len() + 1;
        let p = p.map_err(|e| packet_error(path, k, e))?;
        check_frame(path, k, p.data.len(), p.orig_len)?;
        out.push(CapturedFrame {
            units: p.timestamp.as_nanos(),
            units_per_second: 1_000_000_000,
            bytes: p.data.into_owned(),
        });
    }
    Ok(out)
}

fn read_pcapng(file: impl Read, path: &Path) -> Result<Vec<CapturedFrame>, String> {
    let shown = path.display();
    let mut r = PcapNgReader::new(file).map_err(|e| format!("{shown}: {e}"))?;
    let mut out = Vec::new();
    // Each interface of the current section: link type and time stamp units per second.
    let mut interfaces: Vec<(DataLink, Option<u128>, u8)> = Vec::new();
    while let Some(block) = r.next_block() {
        let k = out.len() + 1;
        let block = block.map_err(|e| packet_error(path, k, e))?;
        match block {
            Block::SectionHeader(_) => interfaces.clear(),
            Block::InterfaceDescription(idb) => {
                // The unit of the interface's time stamps (default 10^-6 s).
                let resol = idb
                    .options
                    .iter()
                    .find_map(|o| match o {
                        InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                        _ => None,
                    })
                    .unwrap_or(6);
                let units = if resol & 0x80 == 0 {
                    10u128.checked_pow(resol as u32)
                } else {
                    2u128.checked_pow((resol & 0x7f) as u32)
                };
                interfaces.push((idb.linktype, units, resol));
            }
            Block::EnhancedPacket(p) => {
                let &(linktype, units, resol) =
                    interfaces.get(p.interface_id as usize).ok_or_else(|| {
                        format!(
                            "{shown}: packet {k} names interface {}, which is not described",
                            p.interface_id
                        )
                    })?;
                if linktype != DataLink::ETHERNET {
                    return Err(format!(
                        "{shown}: packet {k} is on an interface of link type {linktype:?}; \
                         t2sim replays Ethernet captures only"
                    ));
                }
                // pcap-file hands the raw time stamp over as nanoseconds; its unit is the
                // interface's if_tsresol.
                let units_per_second = units.ok_or_else(|| {
                    format!(
                        "{shown}: interface {} has time resolution {resol}, which t2sim \
                         cannot use",
                        p.interface_id
                    )
                })?;
                check_frame(path, k, p.data.len(), p.original_len)?;
                out.push(CapturedFrame {
                    units: p.timestamp.as_nanos(),
                    units_per_second,
                    bytes: p.data.into_owned(),
                });
            }
            Block::SimplePacket(_) | Block::Packet(_) => {
                return Err(format!(
                    "{shown}: packet {k} is in a simple or obsolete packet block; t2sim \
                     replays enhanced packet blocks (time stamped)"
                ))
            }
            _ => {}
        }
    }
    Ok(out)
}

/// When replayed frames arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayTiming {
    /// At their recorded times relative to the first frame.
    Recorded,
    /// Back to back at this rate in bits per second (preamble and gap included).
    Paced(u64),
}

/// The cycle each frame's last bit arrives at a port of `port_bps`; the first frame's in
/// cycle `start`.
///
/// Recorded: frame `k` at `start + ceil((t_k - t_0) x clock_hz)` cycles, later if the port's
/// line rate could not have carried it by then. The line-rate floor keeps consecutive frames
/// at least a serialization time apart (FCS, preamble and gap included), measured from the
/// earliest time each frame can really have ended given that its time stamp is rounded (up to
/// one time-stamp unit and one cycle earlier than stamped). So a capture of back-to-back frames
/// replays at exactly its recorded cycles, and a denser one at the line rate, never faster.
/// Paced at `r` b/s: back to back at `r`, the first frame in `start`.
/// Errors: times going backwards; a pace of 0 or above the port's rate.
pub fn replay_schedule(
    frames: &[CapturedFrame],
    clock: Clock,
    port_bps: u64,
    timing: ReplayTiming,
    start: Cycle,
) -> Result<Vec<Cycle>, String> {
    let rate = match timing {
        ReplayTiming::Recorded => port_bps,
        ReplayTiming::Paced(0) => return Err("a replay rate must be above 0 b/s".into()),
        ReplayTiming::Paced(r) if r > port_bps => {
            return Err(format!(
                "a replay rate of {r} b/s is above the port's {port_bps} b/s"
            ))
        }
        ReplayTiming::Paced(r) => r,
    };
    let line = LineRate::new(clock, rate);
    let tpc = line.ticks_per_cycle() as u128;
    let hz = clock.hz as u128;
    let mut out = Vec::with_capacity(frames.len());
    let Some(first) = frames.first() else {
        return Ok(out);
    };
    let (u0, per0) = (first.units, first.units_per_second);
    // The earliest end of the previous frame, in line ticks.
    let mut floor: u128 = 0;
    let mut prev_since = 0u128;
    for (k, f) in frames.iter().enumerate() {
        let ser = line.serialization_ticks(f.bytes.len() as u64 + FCS_BYTES) as u128;
        let end = match timing {
            ReplayTiming::Paced(_) => {
                let end = if k == 0 {
                    line.cycle_to_ticks(start) as u128
                } else {
                    floor + ser
                };
                floor = end;
                end
            }
            ReplayTiming::Recorded => {
                // t_k - t_0 = units_k / per_k - u0 / per0, exact over per0 * per_k.
                let num = f.units * per0;
                let base = u0 * f.units_per_second;
                let denom = per0 * f.units_per_second;
                let since = num.checked_sub(base).ok_or_else(|| {
                    format!("packet {} is stamped before the first packet", k + 1)
                })?;
                // Compare times over a common denominator (units may differ per interface).
                let since_ps = since * 1_000_000_000_000 / denom;
                if since_ps < prev_since {
                    return Err(format!(
                        "packet {} is stamped before packet {k}: times must not go backwards",
                        k + 1
                    ));
                }
                prev_since = since_ps;
                let cycles = (since * hz).div_ceil(denom);
                let stamped = (start as u128 + cycles) * tpc;
                // One time-stamp unit (rounded up to ticks) and one cycle of rounding.
                let slack = (hz * tpc).div_ceil(f.units_per_second) + tpc;
                let earliest = if k == 0 {
                    stamped.saturating_sub(slack)
                } else {
                    stamped.saturating_sub(slack).max(floor + ser)
                };
                floor = earliest;
                stamped.max(earliest)
            }
        };
        out.push(end.div_ceil(tpc) as Cycle);
    }
    Ok(out)
}

/// What to replay, into which node's port and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayRequest {
    pub file: PathBuf,
    pub node: String,
    pub port: PortRef,
    pub timing: ReplayTiming,
    /// The cycle the first frame may arrive, at the earliest.
    pub start: Cycle,
}

impl ReplayRequest {
    /// Reads the file and puts its frames on the wire into the node's port (before the run
    /// starts, or at cycles still ahead). Returns the number of frames.
    pub fn inject(&self, net: &mut Network, clock: Clock) -> Result<usize, String> {
        let frames = read_capture(&self.file)?;
        let node = (0..net.node_count())
            .map(NodeId)
            .find(|&id| net.node_dyn(id).name() == self.node)
            .ok_or_else(|| format!("replay: no node `{}`", self.node))?;
        let port = self.port.resolve(net, node, "replay")?;
        let n = net.node_dyn(node);
        let at = replay_schedule(&frames, clock, n.port_bps(port), self.timing, self.start)
            .map_err(|e| format!("{}: {e}", self.file.display()))?;
        for (f, &c) in frames.iter().zip(&at) {
            net.inject(node, port, &f.bytes, c)?;
        }
        Ok(frames.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_points_parse_with_clear_errors() {
        assert_eq!(
            CaptureSpec::parse("chip:3").unwrap(),
            CaptureSpec {
                node: "chip".into(),
                port: PortRef::Index(3),
                link: false
            }
        );
        assert_eq!(
            CaptureSpec::parse("receiver").unwrap().port,
            PortRef::Index(0)
        );
        let d = CaptureSpec::parse("chip:d136").unwrap();
        assert_eq!(d.port, PortRef::Device(136));
        assert_eq!(d.file_name(), "chip-d136.pcapng");
        let l = CaptureSpec::parse("link:switch0:2").unwrap();
        assert!(l.link);
        assert_eq!(l.file_name(), "link-switch0-2.pcapng");
        assert_eq!(
            CaptureSpec::parse("chip:x").unwrap_err(),
            "capture point `chip:x`: port `x` is not a port number (3) or device port (d8)"
        );
        assert!(CaptureSpec::parse("")
            .unwrap_err()
            .contains("expected NODE"));
        assert_eq!(
            CaptureSpec::parse_list("chip:1,chip:1").unwrap_err(),
            "capture point `chip:1` is given twice"
        );
    }

    #[test]
    fn time_stamps_round_to_the_nearest_nanosecond() {
        // 1.5 GHz: cycle 1 is 0.667 ns, cycle 2 1.333 ns, cycle 3 2 ns; 0.5 rounds up.
        assert_eq!(cycle_to_ns_round(1, 1_500_000_000), 1);
        assert_eq!(cycle_to_ns_round(2, 1_500_000_000), 1);
        assert_eq!(cycle_to_ns_round(3, 1_500_000_000), 2);
        assert_eq!(cycle_to_ns_round(1, 2_000_000_000), 1);
        assert_eq!(
            cycle_to_ns_round(1_500_000_000, 1_500_000_000),
            1_000_000_000
        );
    }

    fn frame(units: u128, per_s: u128, len: usize) -> CapturedFrame {
        CapturedFrame {
            units,
            units_per_second: per_s,
            bytes: vec![0; len],
        }
    }

    #[test]
    fn replay_keeps_recorded_times_and_the_line_rate() {
        let clock = Clock::tofino2();
        let g100 = 100_000_000_000;
        // A 1496-byte frame (1500 with FCS) takes 1520 x 8 x 3 / 200 = 182.4 cycles at
        // 100 Gb/s. Stamped 1 us apart (in microsecond and in nanosecond units): 1500
        // cycles apart, the first in the start cycle.
        let f = [frame(5, 1_000_000, 1496), frame(6_000, 1_000_000_000, 1496)];
        assert_eq!(
            replay_schedule(&f, clock, g100, ReplayTiming::Recorded, 7).unwrap(),
            [7, 1507]
        );
        // Back-to-back frames stamped in ns (rounded): 182.4 -> 122 ns, 364.8 -> 243 ns,
        // 547.2 -> 365 ns: they replay at their stamped cycles, 182.4 x k rounded up by the
        // stamps, never pushed later by the line-rate floor.
        let b2b = [
            frame(122, 1_000_000_000, 1496),
            frame(243, 1_000_000_000, 1496),
            frame(365, 1_000_000_000, 1496),
            frame(487, 1_000_000_000, 1496),
        ];
        assert_eq!(
            replay_schedule(&b2b, clock, g100, ReplayTiming::Recorded, 183).unwrap(),
            [183, 183 + 182, 183 + 365, 183 + 548]
        );
        // All stamped in the same nanosecond: the line rate spaces them, from the earliest
        // the first can have ended (one ns and one cycle before its stamp: 97.5, then
        // 279.9 and 462.3, rounded up).
        let dense = [
            frame(0, 1_000_000_000, 1496),
            frame(0, 1_000_000_000, 1496),
            frame(0, 1_000_000_000, 1496),
        ];
        assert_eq!(
            replay_schedule(&dense, clock, g100, ReplayTiming::Recorded, 100).unwrap(),
            [100, 280, 463]
        );
        // Paced at 50 Gb/s from cycle 10: 364.8 cycles each.
        assert_eq!(
            replay_schedule(&b2b, clock, g100, ReplayTiming::Paced(50_000_000_000), 10).unwrap(),
            [10, 375, 740, 1105]
        );
        let back = [frame(2, 1_000_000_000, 64), frame(1, 1_000_000_000, 64)];
        assert_eq!(
            replay_schedule(&back, clock, g100, ReplayTiming::Recorded, 0).unwrap_err(),
            "packet 2 is stamped before the first packet"
        );
        let back = [
            frame(1, 1_000_000_000, 64),
            frame(3, 1_000_000_000, 64),
            frame(2, 1_000_000_000, 64),
        ];
        assert_eq!(
            replay_schedule(&back, clock, g100, ReplayTiming::Recorded, 0).unwrap_err(),
            "packet 3 is stamped before packet 2: times must not go backwards"
        );
        assert!(
            replay_schedule(&f, clock, g100, ReplayTiming::Paced(200_000_000_000), 0)
                .unwrap_err()
                .contains("above the port's")
        );
    }
}
