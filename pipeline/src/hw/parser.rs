//! The parser (bytes to PHV) and deparser (PHV back to bytes): one engine that runs a
//! program's parser graph, or the built-in one.
//!
//! A [`Graph`] is the resolved form of an `ir::ParserGraph` (`crate::program::parser_check` builds
//! it): states that extract headers in order from where the previous state stopped, then go
//! to the next state unconditionally or by the first select case whose keys match the fields
//! just extracted, until `accept` or `reject`. Each extracted header's bytes go into its PHV
//! containers and its `$valid` bit is set. A header that runs past the end of the frame drops
//! the packet with `parser_error`, `reject` with `parser_reject`; the headers parsed before
//! stay valid, and the program decides nothing more about the packet.
//!
//! Without a program graph the chip runs `crate::program::builtin::graph`: `ethernet`, then `ipv4` if the
//! ethertype is 0x0800, then `udp` or `tcp` by protocol, then accept. The built-in `ipv4`
//! header is special in two ways the IR does not express: like Tofino2's parser checksum
//! engines the parser verifies its header checksum (`ipv4_checksum_error`) and checks version
//! 4 and IHL >= 5, and its options (IHL > 5) are skipped over, not extracted; the deparser's
//! checksum unit recomputes the checksum.
//!
//! The deparser writes every valid header's containers back, in the graph's one deparse
//! order (the order headers are extracted on every path), each where the previous one ended.
//! While the program leaves the headers' validity alone these are the offsets they were parsed
//! from; after `set_valid` / `set_invalid` the front of the packet is rebuilt
//! ([`Graph::deparse_to`]). Bytes past the last parsed header (the payload) stay as received.
//!
//! Parsing takes the gress's `parser_cycles` whatever the graph; its resources (TCAM rows,
//! extractors per state) are counted here and judged by placement (`docs/parser.md`).

use crate::hw::checksum;
use crate::hw::layout::{self, Extract};
use crate::hw::phv::{Field, Phv};
use crate::wire::headers;
use crate::DropReason;

/// Parser TCAM rows (state-transition entries) per parser (`[p4c] bf-p4c/specs/parde_spec.h:635`).
pub const TCAM_ROWS: u32 = 256;
/// 16-bit extractors per parser state (`parde_spec.h:587`, `:649`).
pub const EXTRACTORS_PER_STATE: u32 = 20;
/// Bits a select may match on: the parser's 4 x 8-bit match registers (`parde_spec.h:591-631`).
pub const SELECT_KEY_BITS: u32 = 32;
/// Header-valid (POV) bits on Tofino2 (`[p4c] bf-p4c/specs/phv_spec.cpp:585`).
pub const POV_BITS: usize = 128;

/// Where a built-in header lives: its extractions, valid bit, and whether it is the IPv4
/// header with its checks and options.
pub(crate) fn builtin_layout(name: &str) -> Option<(&'static [Extract], Field, bool)> {
    Some(match name {
        "ethernet" => (layout::ETHERNET, layout::VALID_ETHERNET, false),
        "ipv4" => (layout::IPV4, layout::VALID_IPV4, true),
        "udp" => (layout::UDP, layout::VALID_UDP, false),
        "tcp" => (layout::TCP, layout::VALID_TCP, false),
        _ => return None,
    })
}

/// A header as the parser and deparser see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderLayout {
    pub name: String,
    /// Bytes extracted (for `ipv4`, the fixed 20; its options are skipped).
    pub bytes: usize,
    pub extracts: Vec<Extract>,
    pub valid: Field,
    /// The built-in IPv4 header: version/IHL checks, checksum, options skipped.
    pub ipv4: bool,
}

impl HeaderLayout {
    /// 16-bit extractors the header takes: one per 8- or 16-bit container, two per 32-bit
    /// one (an extractor writes 16 bits, or a single byte).
    pub fn extractors(&self) -> u32 {
        self.extracts
            .iter()
            .map(|e| e.container.bytes().div_ceil(2) as u32)
            .sum()
    }
}

/// Where a transition goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    State(usize),
    Accept,
    Reject,
}

/// One select case: (value, mask) per key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub values: Vec<(u32, u32)>,
    pub next: Next,
}

/// A resolved parser state. An unconditional transition has no keys and no cases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub name: String,
    /// Indices into [`Graph::headers`], in extraction order.
    pub extracts: Vec<usize>,
    pub keys: Vec<Field>,
    pub cases: Vec<Case>,
    pub default: Next,
    /// TCAM rows held for value-set values not added yet (a value set's rows are reserved
    /// when the program loads; those filled are among `cases`).
    pub reserved_rows: u32,
    /// Where the state's value-set cases go, filled or not: edges of the graph for its
    /// checks (reachability, header order) before the control plane adds a value.
    pub value_set_next: Vec<Next>,
    /// Fields written after the extracts, in order.
    pub sets: Vec<Set>,
    /// Checksum-engine operations, each run after its number of the state's extracts.
    pub checksums: Vec<checksum::Step>,
    /// Bytes skipped (`advance`): (after how many of the state's extracts, bytes).
    pub skips: Vec<(u32, u32)>,
}

/// A parser state's write of a field (`ir::ParserSet` resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Set {
    pub dst: Field,
    pub src: SetSource,
}

/// What a [`Set`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetSource {
    Const(u32),
    Field(Field),
    /// `bits` (1 to 32) of the packet, `offset` bits from where the state starts.
    Packet {
        offset: u32,
        bits: u32,
    },
}

/// `bits` (1 to 32) of `bytes` from bit `at`, most significant first; `None` past the end.
fn packet_bits(bytes: &[u8], at: usize, bits: u32) -> Option<u32> {
    let end = at + bits as usize;
    if end > bytes.len() * 8 {
        return None;
    }
    let v = bytes[at / 8..end.div_ceil(8)]
        .iter()
        .fold(0u64, |v, &b| v << 8 | b as u64);
    let tail = end.div_ceil(8) * 8 - end;
    Some(((v >> tail) & ((1u64 << bits) - 1)) as u32)
}

/// A validated parser graph with every name resolved. Parsing starts in state 0. The
/// graph has no loops (checked when it is built), so parsing ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    pub headers: Vec<HeaderLayout>,
    pub states: Vec<State>,
    /// Header indices in the order the deparser emits them.
    pub deparse_order: Vec<usize>,
    /// Set only on the built-in graph (`crate::program::builtin`), whose containers are the
    /// fixed ones of `layout.rs`: it may take the hand-unrolled fast path.
    pub builtin: bool,
}

// Every packet goes through `load` and `store` once per extracted container; most extracts
// fill their container, and those take the PHV's whole-container path.
#[inline]
fn load(phv: &mut Phv, e: &Extract, bytes: &[u8]) {
    if e.len == e.container.bytes() {
        phv.extract(e.container, bytes);
    } else {
        let v = bytes[..e.len]
            .iter()
            .fold(0u32, |v, &b| (v << 8) | b as u32);
        phv.set_container(e.container, v);
    }
}

#[inline(always)]
fn store(phv: &Phv, e: &Extract, out: &mut [u8]) {
    if e.len == e.container.bytes() {
        phv.emit(e.container, out);
    } else {
        let v = phv.container(e.container);
        for (i, b) in out[..e.len].iter_mut().enumerate() {
            *b = (v >> (8 * (e.len - 1 - i))) as u8;
        }
    }
}

/// What the parser found: where the headers it extracted end (the payload starts there),
/// which headers those were (bit `h` for `Graph::headers[h]`), and the IPv4 header's offset
/// and length (options included) if it was one of them. The deparser needs it when the
/// program made headers valid or invalid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    pub end: usize,
    pub parsed: u128,
    pub ipv4: Option<(usize, usize)>,
    /// The parser skipped bytes between headers (`advance`), which the deparser leaves out.
    pub skipped: bool,
}

/// The smallest frame the deparser leaves (without FCS): a header removed below it is
/// padded with zeros, as a MAC pads a short frame.
pub const MIN_FRAME_BYTES: usize = 60;

impl Graph {
    /// Whether this is the built-in graph, which has a hand-unrolled fast path
    /// ([`builtin_fast`]).
    fn is_builtin(&self) -> bool {
        self.builtin
    }

    /// TCAM rows state `s` takes: one per select case, plus one for the default (the
    /// catch-all row); one for an unconditional transition; plus the rows its value sets
    /// hold empty.
    pub fn state_tcam_rows(&self, s: usize) -> u32 {
        self.states[s].cases.len() as u32 + 1 + self.states[s].reserved_rows
    }

    /// 16-bit extractors state `s` takes: its headers' ([`HeaderLayout::extractors`]) plus
    /// one per POV container its `$valid` bits are written in (a constant extraction).
    pub fn state_extractors(&self, s: usize) -> u32 {
        let st = &self.states[s];
        let mut pov: Vec<_> = Vec::new();
        // A write takes the extractors of its container, as an extraction does.
        let mut n: u32 = st
            .sets
            .iter()
            .map(|w| w.dst.container.bytes().div_ceil(2) as u32)
            .sum();
        for &h in &st.extracts {
            let hl = &self.headers[h];
            n += hl.extractors();
            if !pov.contains(&hl.valid.container) {
                pov.push(hl.valid.container);
            }
        }
        n + pov.len() as u32
    }

    /// Extracts header `h` at `extent.end`, which it advances to where the next header
    /// starts.
    #[inline]
    fn extract(
        &self,
        h: usize,
        bytes: &[u8],
        extent: &mut Extent,
        phv: &mut Phv,
    ) -> Result<(), DropReason> {
        let at = extent.end;
        let hl = &self.headers[h];
        if bytes.len() < at + hl.bytes {
            return Err(DropReason::ParserError);
        }
        let mut len = hl.bytes;
        if hl.ipv4 {
            let ver_ihl = bytes[at];
            let ihl = (ver_ihl & 0xf) as usize;
            if ver_ihl >> 4 != 4 || ihl < 5 || bytes.len() < at + ihl * 4 {
                return Err(DropReason::ParserError);
            }
            len = ihl * 4;
        }
        let header = &bytes[at..at + hl.bytes];
        for e in &hl.extracts {
            load(phv, e, &header[e.offset..]);
        }
        phv.set(hl.valid, 1);
        if hl.ipv4 && !headers::ipv4_checksum_ok(&bytes[at..at + len]) {
            return Err(DropReason::Ipv4ChecksumError);
        }
        extent.end = at + len;
        extent.parsed |= 1 << h;
        if hl.ipv4 {
            extent.ipv4 = Some((at, len));
        }
        Ok(())
    }

    /// Parses `bytes` into `phv` (which the caller has cleared, apart from intrinsic
    /// metadata). Returns the drop reason if a header is truncated or malformed, the IPv4
    /// checksum is wrong, or the graph rejects the packet.
    pub fn parse(&self, bytes: &[u8], phv: &mut Phv) -> Result<(), DropReason> {
        self.parse_extent(bytes, phv).map(|_| ())
    }

    /// [`Graph::parse`], returning what the parser found.
    pub fn parse_extent(&self, bytes: &[u8], phv: &mut Phv) -> Result<Extent, DropReason> {
        if self.is_builtin() {
            return builtin_fast::parse(bytes, phv);
        }
        self.parse_by_table(bytes, phv)
    }

    /// Header `h`'s bytes as `phv` holds its fields, whether or not it is valid (a mirror
    /// header, which the deparser puts in front of a copy).
    pub fn header_bytes(&self, h: usize, phv: &Phv) -> Vec<u8> {
        let layout = &self.headers[h];
        let mut bytes = vec![0; layout.bytes];
        for e in &layout.extracts {
            phv.emit(e.container, &mut bytes[e.offset..]);
        }
        bytes
    }

    /// [`Graph::parse_extent`] by walking the resolved graph, whatever it is.
    pub fn parse_by_table(&self, bytes: &[u8], phv: &mut Phv) -> Result<Extent, DropReason> {
        let mut extent = Extent::default();
        let mut s = 0;
        let mut engines = checksum::ParserEngines::default();
        // The graph is acyclic, so a path visits each state at most once.
        for _ in 0..self.states.len() {
            let st = &self.states[s];
            let start = extent.end;
            if st.checksums.is_empty() && st.skips.is_empty() {
                for &h in &st.extracts {
                    let at = extent.end;
                    self.extract(h, bytes, &mut extent, phv)?;
                    engines.extracted(&bytes[at..extent.end]);
                }
            } else {
                let mut steps = st.checksums.iter().peekable();
                let mut skips = st.skips.iter().peekable();
                for k in 0..=st.extracts.len() {
                    while let Some(step) = steps.next_if(|c| c.after_extracts as usize <= k) {
                        engines.run(step, phv);
                    }
                    while let Some(&(_, n)) = skips.next_if(|s| s.0 as usize <= k) {
                        extent.end += n as usize;
                        extent.skipped = true;
                        if extent.end > bytes.len() {
                            return Err(DropReason::ParserError);
                        }
                    }
                    if let Some(&h) = st.extracts.get(k) {
                        let at = extent.end;
                        self.extract(h, bytes, &mut extent, phv)?;
                        engines.extracted(&bytes[at..extent.end]);
                    }
                }
            }
            for w in &st.sets {
                let v = match w.src {
                    SetSource::Const(c) => c,
                    SetSource::Field(f) => phv.get(f),
                    SetSource::Packet { offset, bits } => {
                        packet_bits(bytes, start * 8 + offset as usize, bits)
                            .ok_or(DropReason::ParserError)?
                    }
                };
                phv.set(w.dst, v);
            }
            let next = st
                .cases
                .iter()
                .find(|c| {
                    st.keys
                        .iter()
                        .zip(&c.values)
                        .all(|(&f, &(v, m))| phv.get(f) & m == v & m)
                })
                .map_or(st.default, |c| c.next);
            match next {
                Next::Accept => {
                    engines.finish(phv);
                    return Ok(extent);
                }
                Next::Reject => return Err(DropReason::ParserReject),
                Next::State(n) => s = n,
            }
        }
        Err(DropReason::ParserError)
    }

    /// The headers the deparser emits that `phv` says are valid (bit `h` for
    /// `headers[h]`).
    fn valid_set(&self, phv: &Phv) -> u128 {
        self.deparse_order
            .iter()
            .filter(|&&h| phv.get(self.headers[h].valid) == 1)
            .fold(0, |m, &h| m | 1 << h)
    }

    /// The deparser: writes `phv`'s valid headers into `bytes`, the packet they were parsed
    /// from (`extent` is what the parser found). With the headers the parser found, it
    /// writes them in place ([`Graph::deparse`]). When the program made headers valid or
    /// invalid, it rebuilds the front of the packet: every valid header in deparse order,
    /// then the payload from `extent.end`; a parsed IPv4 header keeps its options (as many
    /// as its IHL still asks for, zeros past them), and a packet shorter than 60 bytes is
    /// padded.
    pub fn deparse_to(&self, phv: &Phv, bytes: &mut Vec<u8>, extent: &Extent) {
        if self.valid_set(phv) == extent.parsed && !extent.skipped {
            return self.deparse(phv, bytes);
        }
        let mut out = Vec::with_capacity(bytes.len() + 64);
        for &h in &self.deparse_order {
            let hl = &self.headers[h];
            if phv.get(hl.valid) == 0 {
                continue;
            }
            let start = out.len();
            let len = if hl.ipv4 {
                (phv.get(layout::IPV4_IHL) as usize * 4).max(hl.bytes)
            } else {
                hl.bytes
            };
            out.resize(start + len, 0);
            for e in &hl.extracts {
                store(phv, e, &mut out[start + e.offset..]);
            }
            if hl.ipv4 {
                if let Some((at, parsed_len)) = extent.ipv4 {
                    let options = (len.min(parsed_len) - hl.bytes).min(bytes.len() - at);
                    let from = at + hl.bytes;
                    out[start + hl.bytes..start + hl.bytes + options]
                        .copy_from_slice(&bytes[from..from + options]);
                }
                let header = &mut out[start..start + len];
                header[10] = 0;
                header[11] = 0;
                let sum = headers::internet_checksum(header);
                header[10..12].copy_from_slice(&sum.to_be_bytes());
            }
        }
        out.extend_from_slice(&bytes[extent.end.min(bytes.len())..]);
        if out.len() < MIN_FRAME_BYTES {
            out.resize(MIN_FRAME_BYTES, 0);
        }
        bytes.clear();
        bytes.extend_from_slice(&out);
    }

    /// Writes the valid headers in `phv` back into `bytes` (the packet they were parsed
    /// from), in deparse order, and recomputes the IPv4 header checksum.
    pub fn deparse(&self, phv: &Phv, bytes: &mut [u8]) {
        if self.is_builtin() {
            return builtin_fast::deparse(phv, bytes);
        }
        self.deparse_by_table(phv, bytes)
    }

    /// [`Graph::deparse`] by walking the resolved graph, whatever it is.
    pub fn deparse_by_table(&self, phv: &Phv, bytes: &mut [u8]) {
        let mut at = 0;
        for &h in &self.deparse_order {
            let hl = &self.headers[h];
            if phv.get(hl.valid) == 0 {
                continue;
            }
            // A program may have rewritten the IHL: never less than the fixed header, and
            // never past the frame.
            let len = if hl.ipv4 {
                (phv.get(layout::IPV4_IHL) as usize * 4).max(hl.bytes)
            } else {
                hl.bytes
            };
            if bytes.len() < at + len {
                return;
            }
            let header = &mut bytes[at..at + hl.bytes];
            for e in &hl.extracts {
                store(phv, e, &mut header[e.offset..]);
            }
            if hl.ipv4 {
                let header = &mut bytes[at..at + len];
                header[10] = 0;
                header[11] = 0;
                let sum = headers::internet_checksum(header);
                header[10..12].copy_from_slice(&sum.to_be_bytes());
            }
            at += len;
        }
    }
}

/// The built-in graph (Ethernet -> IPv4 -> UDP/TCP) unrolled by hand over the fixed layout
/// of `layout.rs`. Every packet of a program without its own parser goes through it twice
/// (ingress and egress), and walking the graph's tables costs about twice as much; the
/// tests check that both give the same PHV, drop reason and bytes.
mod builtin_fast {
    use super::*;

    #[inline(always)]
    fn extract_all(phv: &mut Phv, header: &[u8], extracts: &[Extract]) {
        for e in extracts {
            phv.extract(e.container, &header[e.offset..]);
        }
    }

    /// The built-in headers' indices in the built-in graph (`builtin_headers` order).
    const ETHERNET: u32 = 0;
    const IPV4: u32 = 1;
    const UDP: u32 = 2;
    const TCP: u32 = 3;

    pub fn parse(bytes: &[u8], phv: &mut Phv) -> Result<Extent, DropReason> {
        let eth = headers::Ethernet::LEN;
        if bytes.len() < eth {
            return Err(DropReason::ParserError);
        }
        extract_all(phv, bytes, layout::ETHERNET);
        phv.set(layout::VALID_ETHERNET, 1);
        let mut extent = Extent {
            end: eth,
            parsed: 1 << ETHERNET,
            ipv4: None,
            skipped: false,
        };
        if phv.get(layout::ETH_TYPE) != headers::ETHERTYPE_IPV4 as u32 {
            return Ok(extent);
        }
        if bytes.len() < eth + headers::Ipv4::MIN_LEN {
            return Err(DropReason::ParserError);
        }
        let ver_ihl = bytes[eth];
        let ihl = (ver_ihl & 0xf) as usize;
        if ver_ihl >> 4 != 4 || ihl < 5 || bytes.len() < eth + ihl * 4 {
            return Err(DropReason::ParserError);
        }
        extract_all(phv, &bytes[eth..], layout::IPV4);
        phv.set(layout::VALID_IPV4, 1);
        if !headers::ipv4_checksum_ok(&bytes[eth..eth + ihl * 4]) {
            return Err(DropReason::Ipv4ChecksumError);
        }
        let l4 = eth + ihl * 4;
        extent.end = l4;
        extent.parsed |= 1 << IPV4;
        extent.ipv4 = Some((eth, ihl * 4));
        let (extracts, valid, len, h) = match phv.get(layout::IPV4_PROTOCOL) as u8 {
            headers::IPPROTO_UDP => (layout::UDP, layout::VALID_UDP, headers::Udp::LEN, UDP),
            headers::IPPROTO_TCP => (layout::TCP, layout::VALID_TCP, headers::Tcp::MIN_LEN, TCP),
            _ => return Ok(extent),
        };
        if bytes.len() < l4 + len {
            return Err(DropReason::ParserError);
        }
        extract_all(phv, &bytes[l4..], extracts);
        phv.set(valid, 1);
        extent.end = l4 + len;
        extent.parsed |= 1 << h;
        Ok(extent)
    }

    pub fn deparse(phv: &Phv, bytes: &mut [u8]) {
        // In deparse order, each call inlined with its own constant layout.
        let mut at = 0;
        let _ = emit(
            phv,
            bytes,
            &mut at,
            layout::ETHERNET,
            layout::VALID_ETHERNET,
            headers::Ethernet::LEN,
            false,
        ) && emit(
            phv,
            bytes,
            &mut at,
            layout::IPV4,
            layout::VALID_IPV4,
            headers::Ipv4::MIN_LEN,
            true,
        ) && emit(
            phv,
            bytes,
            &mut at,
            layout::UDP,
            layout::VALID_UDP,
            headers::Udp::LEN,
            false,
        ) && emit(
            phv,
            bytes,
            &mut at,
            layout::TCP,
            layout::VALID_TCP,
            headers::Tcp::MIN_LEN,
            false,
        );
    }

    /// Writes one header back at `at` if it is valid and advances `at`; `false` when the
    /// frame is too short for it (the deparser stops there).
    #[inline(always)]
    fn emit(
        phv: &Phv,
        bytes: &mut [u8],
        at: &mut usize,
        extracts: &[Extract],
        valid: Field,
        fixed: usize,
        ipv4: bool,
    ) -> bool {
        if phv.get(valid) == 0 {
            return true;
        }
        let len = if ipv4 {
            (phv.get(layout::IPV4_IHL) as usize * 4).max(fixed)
        } else {
            fixed
        };
        if bytes.len() < *at + len {
            return false;
        }
        let header = &mut bytes[*at..*at + len];
        for e in extracts {
            phv.emit(e.container, &mut header[e.offset..]);
        }
        if ipv4 {
            header[10] = 0;
            header[11] = 0;
            let sum = headers::internet_checksum(header);
            header[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        *at += len;
        true
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use crate::hw::params::PhvParams;
    use crate::program::parser_check::builtin_graph as parser;
    use proptest::prelude::*;

    /// Frames the built-in graph meets: IPv4 or not, IHL 4 to 7 (options), version 4 or
    /// not, a right or wrong checksum, UDP, TCP or another protocol, cut anywhere.
    fn frame() -> impl Strategy<Value = Vec<u8>> {
        (
            any::<bool>(),
            4u8..=7,
            prop::sample::select(vec![4u8, 4, 4, 6]),
            any::<bool>(),
            prop::sample::select(vec![17u8, 6, 1]),
            prop::collection::vec(any::<u8>(), 90),
            0usize..=90,
        )
            .prop_map(|(ipv4, ihl, version, good_sum, proto, random, cut)| {
                let mut b = random[..14].to_vec();
                b[12..14].copy_from_slice(&if ipv4 { [0x08, 0x00] } else { [0x86, 0xdd] });
                let mut ip = random[14..14 + 4 * ihl as usize].to_vec();
                ip[0] = version << 4 | ihl;
                ip[9] = proto;
                ip[10] = 0;
                ip[11] = 0;
                let sum = headers::internet_checksum(&ip);
                let sum = if good_sum { sum } else { sum ^ 1 };
                ip[10..12].copy_from_slice(&sum.to_be_bytes());
                b.extend_from_slice(&ip);
                b.extend_from_slice(&random[..20]);
                b.truncate(cut.max(1).min(b.len()));
                b
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The unrolled built-in parser and deparser do exactly what walking the built-in
        /// graph does: the same PHV and drop reason, then the same bytes after the program
        /// rewrote fields (the IHL and TTL included).
        #[test]
        fn the_fast_path_equals_the_graph(
            bytes in frame(),
            ihl in prop::option::of(0u32..16),
            ttl in any::<u8>(),
        ) {
            let g = parser();
            let (mut by_table, mut fast) = (
                Phv::new(&PhvParams::default()),
                Phv::new(&PhvParams::default()),
            );
            let a = g.parse_by_table(&bytes, &mut by_table);
            let b = builtin_fast::parse(&bytes, &mut fast);
            prop_assert_eq!(a.ok(), b.ok());
            prop_assert_eq!(a.err(), b.err());
            prop_assert_eq!(&by_table, &fast);
            if let Some(ihl) = ihl {
                by_table.set(layout::IPV4_IHL, ihl);
            }
            by_table.set(layout::IPV4_TTL, ttl as u32);
            let (mut x, mut y) = (bytes.clone(), bytes.clone());
            g.deparse_by_table(&by_table, &mut x);
            builtin_fast::deparse(&by_table, &mut y);
            prop_assert_eq!(x, y);
        }
    }

    #[test]
    fn the_builtin_graph_takes_the_fast_path_and_others_do_not() {
        assert!(parser().is_builtin());
        // The same graph written out as a program's own parser is resolved like any other
        // program graph and walks its tables.
        let mut program = crate::program::examples::l3_forward();
        program.parser = Some(crate::program::builtin::graph());
        let checked = crate::program::check::check(&program).unwrap();
        assert!(!checked.parser.is_builtin());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::params::PhvParams;
    use crate::program::parser_check::{builtin_graph as parser, deparse, parse};
    use crate::wire::headers::{build_udp_frame, parse_frame, Endpoints, MacAddr};
    use std::net::Ipv4Addr;

    fn frame() -> Vec<u8> {
        let ep = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 1, 2, 3),
            src_port: 4791,
            dst_port: 9,
        };
        let mut b = Vec::new();
        build_udp_frame(&mut b, &ep, 64, 5, &[7; 40], false, 60);
        b
    }

    #[test]
    fn parses_udp_into_containers() {
        let b = frame();
        let mut phv = Phv::new(&PhvParams::default());
        parse(&b, &mut phv).unwrap();
        assert_eq!(phv.get(layout::VALID_UDP), 1);
        assert_eq!(phv.get(layout::VALID_TCP), 0);
        assert_eq!(
            phv.get(layout::IPV4_DST),
            u32::from(Ipv4Addr::new(10, 1, 2, 3))
        );
        assert_eq!(phv.get(layout::IPV4_TTL), 64);
        assert_eq!(phv.get(layout::L4_SRC_PORT), 4791);
    }

    #[test]
    fn deparse_writes_changes_and_fixes_checksum() {
        let mut b = frame();
        let mut phv = Phv::new(&PhvParams::default());
        parse(&b, &mut phv).unwrap();
        phv.set(layout::IPV4_TTL, 63);
        phv.set(layout::IPV4_ECN, 3);
        deparse(&phv, &mut b);
        let p = parse_frame(&b).unwrap();
        assert_eq!(p.ipv4.unwrap().ttl, 63);
        assert_eq!(p.ipv4.unwrap().tos & 3, 3);
        assert!(headers::ipv4_checksum_ok(&b[14..34]));
        // Untouched fields and the payload are as built.
        let mut fresh = frame();
        fresh[22] = 63;
        fresh[15] |= 3;
        fresh[24..26].copy_from_slice(&b[24..26]);
        assert_eq!(b, fresh);
    }

    #[test]
    fn bad_frames_get_reasons() {
        let mut phv = Phv::new(&PhvParams::default());
        assert_eq!(parse(&[0; 10], &mut phv), Err(DropReason::ParserError));
        let mut b = frame();
        b[22] ^= 1; // TTL changed without fixing the checksum
        phv.clear();
        assert_eq!(parse(&b, &mut phv), Err(DropReason::Ipv4ChecksumError));
        let b = frame();
        phv.clear();
        assert_eq!(parse(&b[..30], &mut phv), Err(DropReason::ParserError));
        let mut arp = frame();
        arp[12] = 0x08;
        arp[13] = 0x06;
        phv.clear();
        assert_eq!(parse(&arp, &mut phv), Ok(()));
        assert_eq!(phv.get(layout::VALID_IPV4), 0);
    }

    #[test]
    fn builtin_graph_resolves_to_the_layout_with_its_resources() {
        let g = parser();
        let names: Vec<&str> = g.states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["start", "parse_ipv4", "parse_udp", "parse_tcp"]);
        let order: Vec<&str> = g
            .deparse_order
            .iter()
            .map(|&h| g.headers[h].name.as_str())
            .collect();
        assert_eq!(order, ["ethernet", "ipv4", "udp", "tcp"]);
        assert_eq!(g.headers[1].extracts, layout::IPV4);
        assert_eq!(g.states[0].keys, [layout::ETH_TYPE]);
        assert_eq!(g.states[1].keys, [layout::IPV4_PROTOCOL]);
        // Rows: 1 case + default, 2 cases + default, 1, 1.
        let rows: Vec<u32> = (0..4).map(|s| g.state_tcam_rows(s)).collect();
        assert_eq!(rows, [2, 3, 1, 1]);
        // Ethernet: 32+16+16+32+16 bits = 2+1+1+2+1 extractors, + 1 POV = 8. IPv4: eight
        // 8/16-bit containers and two 32-bit ones = 12, + 1 = 13. UDP 4 + 1; TCP 6 + 2*2 + 1.
        let ex: Vec<u32> = (0..4).map(|s| g.state_extractors(s)).collect();
        assert_eq!(ex, [8, 13, 5, 11]);
    }

    #[test]
    fn partial_extractions_are_right_aligned_big_endian() {
        let e = Extract {
            offset: 1,
            container: crate::hw::phv::Container::b32(20),
            len: 3,
        };
        let mut phv = Phv::new(&PhvParams::default());
        load(&mut phv, &e, &[0xaa, 0x12, 0x34, 0x56, 0xbb][1..]);
        assert_eq!(phv.container(e.container), 0x0012_3456);
        let mut out = [0u8; 5];
        store(&phv, &e, &mut out[1..]);
        assert_eq!(out, [0, 0x12, 0x34, 0x56, 0]);
    }
}

#[cfg(test)]
mod packet_bits_tests {
    use super::packet_bits;

    #[test]
    fn reads_any_bits_most_significant_first() {
        let bytes = [0xc0, 0xff, 0xee, 0x12];
        assert_eq!(packet_bits(&bytes, 0, 24), Some(0xc0ffee));
        assert_eq!(packet_bits(&bytes, 4, 8), Some(0x0f));
        assert_eq!(packet_bits(&bytes, 12, 4), Some(0xf));
        assert_eq!(packet_bits(&bytes, 0, 32), Some(0xc0ff_ee12));
        assert_eq!(packet_bits(&bytes, 30, 2), Some(0b10));
        assert_eq!(packet_bits(&bytes, 25, 8), None);
    }
}
