//! Reading pcap (micro- or nanosecond) and pcapng files of Ethernet frames, with errors that
//! name the file and the packet.

use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, PcapError};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use t2_clock::FCS_BYTES;

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
    if path.is_dir() {
        return Err(format!("{shown}: is a folder, not a pcap or pcapng file"));
    }
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
    if captured > original as usize {
        return Err(format!(
            "{shown}: packet {k} has {captured} bytes captured but says the frame had \
             {original}: the lengths contradict each other"
        ));
    }
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
    let h = r.header();
    if (h.version_major, h.version_minor) != (2, 4) {
        return Err(format!(
            "{shown}: pcap version {}.{}; t2sim reads version 2.4 (the only one there is)",
            h.version_major, h.version_minor
        ));
    }
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
                // Finer than a picosecond (10^12, or 2^40, units a second) is refused:
                // nothing t2sim models is that fine, and it keeps the replay's exact
                // arithmetic within 128 bits.
                let units = if resol & 0x80 == 0 {
                    (resol <= 12).then(|| 10u128.pow(resol as u32))
                } else {
                    (resol & 0x7f <= 40).then(|| 1u128 << (resol & 0x7f))
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
                        "{shown}: interface {}: if_tsresol {resol:#04x} is finer than the \
                         picosecond t2sim takes (at most 10^-12 s: 12, or 2^-40 s: 0xa8)",
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
