//! Writing captures: the network tap that takes each captured frame as it crosses a port
//! or link, and the pcapng file each capture point fills.

use super::{cycle_to_ns_round, CaptureSpec};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, PcapError};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use t2_clock::Clock;
use t2_testbench::{Direction, Network, NodeId, Tap, TapFrame};

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
