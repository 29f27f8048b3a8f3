//! Fields a program can name: the built-in headers of `layout.rs`, Tofino2 intrinsic
//! metadata under their Tofino2 names and widths, and where the IR's extra fields live.
//!
//! Built-in headers and the intrinsic metadata the chip already fills sit where `layout.rs`
//! put them. The remaining intrinsic metadata gets fixed containers just past the layout's.
//! A program's own headers (`crate::program::parser_check`) get normal containers after those, then
//! its metadata, one normal container per field, in declaration order. Gateway outcomes are
//! kept in dark 8-bit containers (one bit per gateway), standing in for the next-table
//! signals the hardware passes between stages.

use crate::hw::layout;
use crate::hw::phv::{Container, Field, PhvParams, Width};

/// How a program may use a built-in field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// Set by the parser or the chip; programs only read it.
    ReadOnly,
}

/// A named built-in field.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub field: Field,
    pub access: Access,
}

const fn rw(name: &'static str, field: Field) -> Builtin {
    Builtin {
        name,
        field,
        access: Access::ReadWrite,
    }
}

const fn ro(name: &'static str, field: Field) -> Builtin {
    Builtin {
        name,
        field,
        access: Access::ReadOnly,
    }
}

/// Containers past `layout::CONTAINERS_USED` that hold intrinsic metadata the layout lacks.
const COS: Container = Container::b8(7);
const ENQ_QDEPTH: Container = Container::b32(6);
const DEQ_QDEPTH: Container = Container::b32(7);
const DEQ_TIMEDELTA: Container = Container::b32(8);
const ADV_FLOW_CTL: Container = Container::b32(9);
/// Deparser controls the program sets with the `mirror` and `recirculate` primitives. They
/// sit in the upper bits of the container that holds `eg_intr_md.enq_qdepth` (bits 0-18) in
/// egress: the ingress PHV has no queue depth, and in egress bits 19-27 are above the depth,
/// so the egress `mirror` (egress-to-egress mirroring) uses the same bits without touching
/// egress metadata. `recirculate` is refused outside ingress, so bit 28 is ingress only.
pub const MIRROR_SESSION: Field = Field::at(ENQ_QDEPTH, 19, 8);
pub const MIRROR_VALID: Field = Field::at(ENQ_QDEPTH, 27, 1);
pub const RECIRCULATE: Field = Field::at(ENQ_QDEPTH, 28, 1);
/// `mirror_io_select` of either deparser: 1 mirrors the packet as it entered the gress (before
/// the program changed it), 0 (the default) as it leaves. Bit 29, above the egress depth too.
pub const MIRROR_IO_SELECT: Field = Field::at(ENQ_QDEPTH, 29, 1);
/// The mirror type of a copy made with a mirror header (`mirror_with_header`): the header's
/// index in the parser graph plus 1 (0: none), 4 bits as Tofino2's `MirrorType_t`. The
/// ingress (or egress) program sets it with the mirror; the chip sets it in a copy's egress
/// PHV before parsing, standing in for TNA's lookahead on the mirror header's type field.
/// Bits 3-6 of the container whose low 3 bits are `ingress_cos` (ingress only).
pub const MIRROR_TYPE: Field = Field::at(COS, 3, 4);
/// `resubmit` (ingress only): bit 30 of the `enq_qdepth` container asks for a resubmit, and
/// its low 8 bits (no queue depth in ingress) hold the resubmit header's place in the parser
/// graph plus 1 (0: no header).
pub const RESUBMIT: Field = Field::at(ENQ_QDEPTH, 30, 1);
/// `ig_intr_dprsr_md.pktgen` (ingress only): 1 fires the pipe's deparser-triggered pktgen
/// applications as the packet leaves the deparser. Bit 31 of the same container.
pub const PKTGEN_TRIGGER: Field = Field::at(ENQ_QDEPTH, 31, 1);
pub const RESUBMIT_HEADER: Field = Field::at(ENQ_QDEPTH, 0, 8);
/// `ig_intr_tm_md.bypass_egress` (ingress only): 1 sends the packet from the TM straight to
/// its port's MAC, past the egress pipeline. Bit 14 of the container of
/// `ucast_egress_port`, below its valid bit.
pub const BYPASS_EGRESS: Field = Field::at(layout::UCAST_EGRESS_PORT.container, 14, 1);
/// `ig_intr_dprsr_md.digest_type` (ingress only, 3 bits as T2NA's `DigestType_t`): the
/// digest the ingress deparser sends for the packet (0: none). Bits 16-18 of the same
/// container, above the ingress MAC time stamp's high bits.
pub const DIGEST_TYPE: Field = Field::at(ENQ_QDEPTH, 16, 3);
/// `ig_intr_md.resubmit_flag`: 1 on a resubmitted packet's second pass, set before parsing
/// (bit 7 of the `ingress_cos` container).
pub const RESUBMIT_FLAG: Field = Field::at(COS, 7, 1);
/// Intrinsic fields set before the parser runs, which a parser `select` may key on:
/// `ig_intr_md.ingress_port` (0 in egress), `ig_intr_md.resubmit_flag` (0 in egress) and
/// `eg_intr_md.mirror_type` (0 in ingress).
pub const PARSER_INTRINSICS: [(&str, Field); 3] = [
    ("ig_intr_md.ingress_port", layout::INGRESS_PORT),
    ("ig_intr_md.resubmit_flag", RESUBMIT_FLAG),
    ("eg_intr_md.mirror_type", MIRROR_TYPE),
];
/// The ghost metadata header is one 32-bit container on Tofino2.
const GHOST: Container = Container::b32(10);

/// `ig_intr_tm_md.ingress_cos`: the class the TM admits the packet in (PFC, priority groups).
pub const INGRESS_COS: Field = Field::low(COS, 3);
/// `eg_intr_md.enq_qdepth`: cells in the queue when the packet joined it.
pub const EG_ENQ_QDEPTH: Field = Field::low(ENQ_QDEPTH, 19);
/// `eg_intr_md.deq_qdepth`: cells left in the queue when the packet left it.
pub const EG_DEQ_QDEPTH: Field = Field::low(DEQ_QDEPTH, 19);
/// `eg_intr_md.deq_congest_stat` (2 bits), `eg_intr_md.enq_congest_stat` (2 bits) and
/// `eg_intr_md.app_pool_congest_stat` (8 bits, 2 per pool): the TM's congestion levels
/// (see `t2_tm::Dequeued`), in the bits of the `deq_qdepth` container above its 19.
pub const EG_DEQ_CONGEST_STAT: Field = Field::at(DEQ_QDEPTH, 19, 2);
pub const EG_ENQ_CONGEST_STAT: Field = Field::at(DEQ_QDEPTH, 21, 2);
pub const EG_APP_POOL_CONGEST_STAT: Field = Field::at(DEQ_QDEPTH, 23, 8);
/// `eg_intr_md.deq_timedelta`: nanoseconds the packet spent in the TM.
pub const EG_DEQ_TIMEDELTA: Field = Field::whole(DEQ_TIMEDELTA);
/// `ig_intr_dprsr_md.adv_flow_ctl` and `eg_intr_dprsr_md.adv_flow_ctl`: the AFC message the
/// deparser hands the TM (qfc:1 | port_id:9 | qid:7 | credit:15). The gresses have separate
/// PHVs, so both names share one container.
pub const DPRSR_ADV_FLOW_CTL: Field = Field::whole(ADV_FLOW_CTL);

/// The 32-bit container that holds the low word of `eg_prsr_md.global_tstamp`: the one
/// container the time metadata adds (every other piece reuses a container the other gress
/// leaves free, see below).
const EG_GLOBAL_TSTAMP_LO: Container = Container::b32(11);

// Time and queue metadata (t2na.p4 widths; docs/tofino2.md). A gress has its own PHV, so a
// field that exists in one gress only may sit in a container only the other gress uses;
// `only_in` and the checker keep each field to its gress, so the two never meet. Fields
// wider than 32 bits are pieces, most significant first; an ALU sees one piece at a time
// (name a slice such as `ig_prsr_md.global_tstamp[31:0]`).

/// `ig_intr_md.ingress_mac_tstamp` (48 b, ns): when the MAC received the frame. Ingress;
/// the high 16 bits in the low bits of the `enq_qdepth` container, the low 32 in the
/// `deq_qdepth` container (both egress metadata).
pub const IG_MAC_TSTAMP: [Field; 2] = [Field::low(ENQ_QDEPTH, 16), Field::whole(DEQ_QDEPTH)];
/// `ig_prsr_md.global_tstamp` (48 b, ns): when the packet entered the ingress parser.
/// Ingress; the high 16 bits in the container of `eg_intr_md.egress_port`, the low 32 in that
/// of `deq_timedelta`.
pub const IG_GLOBAL_TSTAMP: [Field; 2] = [
    Field::whole(layout::EGRESS_PORT.container),
    Field::whole(DEQ_TIMEDELTA),
];
/// `eg_prsr_md.global_tstamp` (48 b, ns): when the packet entered the egress parser.
/// Egress; the high 16 bits in the container of `ig_intr_md.ingress_port`, the low 32 in a
/// container of its own.
pub const EG_GLOBAL_TSTAMP: [Field; 2] = [
    Field::whole(layout::INGRESS_PORT.container),
    Field::whole(EG_GLOBAL_TSTAMP_LO),
];
/// `eg_intr_md.enq_tstamp` (32 b, ns): when the TM admitted the packet (low 32 bits of the
/// time in ns). Egress; in the ghost metadata container (the ghost thread has its own PHV).
pub const EG_ENQ_TSTAMP: Field = Field::whole(GHOST);
/// `eg_intr_md.egress_qid` (7 b): the queue the packet left, as its index among its MAC's
/// 128 queues (the chip fills it). Egress; the bits of `ig_intr_tm_md.qid`.
pub const EG_EGRESS_QID: Field = layout::QID;
/// `eg_intr_md.egress_cos` (3 b): the packet's class of service in egress (the
/// `ingress_cos` it was admitted in). Egress; the bits of `ig_intr_tm_md.ingress_cos`.
pub const EG_EGRESS_COS: Field = INGRESS_COS;

/// A named built-in field wider than 32 bits: its pieces, most significant first.
#[derive(Clone, Copy, Debug)]
pub struct WideBuiltin {
    pub name: &'static str,
    pub pieces: &'static [Field],
    pub access: Access,
}

/// The built-in fields wider than 32 bits (the 48-bit timestamps).
pub const WIDE_BUILTINS: &[WideBuiltin] = &[
    WideBuiltin {
        name: "ig_intr_md.ingress_mac_tstamp",
        pieces: &IG_MAC_TSTAMP,
        access: Access::ReadOnly,
    },
    WideBuiltin {
        name: "ig_prsr_md.global_tstamp",
        pieces: &IG_GLOBAL_TSTAMP,
        access: Access::ReadOnly,
    },
    WideBuiltin {
        name: "eg_prsr_md.global_tstamp",
        pieces: &EG_GLOBAL_TSTAMP,
        access: Access::ReadOnly,
    },
];

pub fn wide_builtin(name: &str) -> Option<&'static WideBuiltin> {
    WIDE_BUILTINS.iter().find(|b| b.name == name)
}

/// A 48-bit value as the values of two pieces (16 high bits, 32 low bits).
pub fn split48(pieces: &[Field; 2], value: u64) -> [(Field, u32); 2] {
    [
        (pieces[0], ((value >> 32) & 0xffff) as u32),
        (pieces[1], value as u32),
    ]
}

/// The thread a built-in field exists in, by its Tofino2 name: `ig_*` metadata in ingress,
/// `eg_*` in egress, `ghost_md.*` in the ghost thread; `None` for fields every thread has
/// (headers, program metadata).
pub fn only_in(name: &str) -> Option<&'static str> {
    let name = name.split('[').next().unwrap_or(name);
    if builtin(name).is_none() && wide_builtin(name).is_none() {
        return None;
    }
    if name.starts_with("ig_") {
        Some("ingress")
    } else if name.starts_with("eg_") {
        Some("egress")
    } else if name.starts_with("ghost_md.") {
        Some("ghost")
    } else {
        None
    }
}

/// First free container index per width (8, 16, 32) after the built-ins.
pub const FIRST_FREE: [u16; 3] = [8, 17, 12];

/// Every built-in field, in a fixed order.
pub const BUILTINS: &[Builtin] = &[
    ro("ethernet.$valid", layout::VALID_ETHERNET),
    ro("ipv4.$valid", layout::VALID_IPV4),
    ro("udp.$valid", layout::VALID_UDP),
    ro("tcp.$valid", layout::VALID_TCP),
    rw("ethernet.ether_type", layout::ETH_TYPE),
    rw("ipv4.ihl", layout::IPV4_IHL),
    rw("ipv4.diffserv", layout::IPV4_TOS),
    rw("ipv4.ecn", layout::IPV4_ECN),
    rw("ipv4.total_len", layout::IPV4_TOTAL_LEN),
    rw("ipv4.ttl", layout::IPV4_TTL),
    rw("ipv4.protocol", layout::IPV4_PROTOCOL),
    rw("ipv4.src_addr", layout::IPV4_SRC),
    rw("ipv4.dst_addr", layout::IPV4_DST),
    rw("l4.src_port", layout::L4_SRC_PORT),
    rw("l4.dst_port", layout::L4_DST_PORT),
    ro("ig_intr_md.ingress_port", layout::INGRESS_PORT),
    ro("ig_intr_md.pkt_length", layout::PKT_LENGTH),
    rw("ig_intr_tm_md.ucast_egress_port", layout::UCAST_EGRESS_PORT),
    rw("ig_intr_tm_md.qid", layout::QID),
    rw("ig_intr_tm_md.ingress_cos", INGRESS_COS),
    // Nonzero drops the packet; the model stores the drop reason code here. A program
    // drops through the `drop` primitive (with its reason) and may write 0 to keep a packet
    // an earlier table dropped.
    rw(
        "ig_intr_dprsr_md.drop_ctl",
        Field::low(layout::DROP_REASON.container, 3),
    ),
    rw("ig_intr_dprsr_md.adv_flow_ctl", DPRSR_ADV_FLOW_CTL),
    rw("ig_intr_dprsr_md.mirror_io_select", MIRROR_IO_SELECT),
    rw("ig_intr_tm_md.bypass_egress", BYPASS_EGRESS),
    ro("eg_intr_md.egress_port", layout::EGRESS_PORT),
    ro("eg_intr_md.pkt_length", layout::PKT_LENGTH),
    ro("eg_intr_md.enq_qdepth", EG_ENQ_QDEPTH),
    ro("eg_intr_md.deq_qdepth", EG_DEQ_QDEPTH),
    ro("eg_intr_md.deq_timedelta", EG_DEQ_TIMEDELTA),
    ro("eg_intr_md.enq_congest_stat", EG_ENQ_CONGEST_STAT),
    ro("eg_intr_md.deq_congest_stat", EG_DEQ_CONGEST_STAT),
    ro("eg_intr_md.app_pool_congest_stat", EG_APP_POOL_CONGEST_STAT),
    ro("eg_intr_md.enq_tstamp", EG_ENQ_TSTAMP),
    ro("eg_intr_md.egress_qid", EG_EGRESS_QID),
    ro("eg_intr_md.egress_cos", EG_EGRESS_COS),
    rw("eg_intr_dprsr_md.adv_flow_ctl", DPRSR_ADV_FLOW_CTL),
    rw("eg_intr_dprsr_md.mirror_io_select", MIRROR_IO_SELECT),
    ro("ghost_md.qlength", Field::low(GHOST, 18)),
    ro("ghost_md.qid", Field::at(GHOST, 18, 11)),
    ro("ghost_md.pipe_id", Field::at(GHOST, 29, 2)),
    ro("ghost_md.ping_pong", Field::at(GHOST, 31, 1)),
    ro("eg_intr_md.mirror_type", MIRROR_TYPE),
    ro("ig_intr_md.resubmit_flag", RESUBMIT_FLAG),
    rw("ig_intr_dprsr_md.pktgen", PKTGEN_TRIGGER),
    rw("ig_intr_dprsr_md.digest_type", DIGEST_TYPE),
];

pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Index of a width in per-width arrays (8, 16, 32).
pub fn width_index(w: Width) -> usize {
    match w {
        Width::B8 => 0,
        Width::B16 => 1,
        Width::B32 => 2,
    }
}

/// Allocates program metadata into normal containers after the built-ins.
///
/// When the normal containers of every wide-enough width are used up, a field spills into
/// the move-only (mocha, then dark) containers of its narrowest width, so the program can
/// still be checked; placement then refuses it for lack of normal PHV containers.
#[derive(Clone, Debug)]
pub struct MetadataAllocator {
    next: [u16; 3],
    normal: [u16; 3],
    /// Containers per width a spilled field may use (the last dark 8-bit containers are
    /// kept for gateway outcomes).
    total: [u16; 3],
}

impl MetadataAllocator {
    pub fn new(phv: &PhvParams) -> MetadataAllocator {
        MetadataAllocator {
            next: FIRST_FREE,
            normal: phv.normal,
            total: [
                phv.containers_8 - phv.dark[0],
                phv.containers_16,
                phv.containers_32,
            ],
        }
    }

    /// A container for a field of `bits` bits: the narrowest normal width that holds it,
    /// else a wider normal one, else a spilled one. `None` only when every container that
    /// could hold it is taken.
    pub fn alloc(&mut self, bits: u8) -> Option<Field> {
        let first = Self::narrowest(bits as u32);
        let normal = self.normal;
        let total = self.total;
        self.take(first, &normal)
            .or_else(|| self.take(first, &total))
            .map(|c| Field::low(c, bits))
    }

    /// A normal container of at least `bytes` bytes (1 to 4), the narrowest first: for
    /// header bytes, which the parser and deparser must reach (mocha containers could too,
    /// but the MAU computes only on normal ones). `None` when none is left.
    pub fn alloc_normal(&mut self, bytes: usize) -> Option<Container> {
        let normal = self.normal;
        self.take(Self::narrowest(bytes as u32 * 8), &normal)
    }

    /// Index of the narrowest width of at least `bits` bits.
    fn narrowest(bits: u32) -> usize {
        match bits {
            0..=8 => 0,
            9..=16 => 1,
            _ => 2,
        }
    }

    /// The next container of width index `first` or wider below `limit`.
    fn take(&mut self, first: usize, limit: &[u16; 3]) -> Option<Container> {
        let widths = [Width::B8, Width::B16, Width::B32];
        (first..3).find(|&i| self.next[i] < limit[i]).map(|i| {
            self.next[i] += 1;
            Container {
                width: widths[i],
                index: self.next[i] - 1,
            }
        })
    }

    /// Containers in use per width (built-ins included); more than the normal count means
    /// some metadata spilled.
    pub fn used(&self) -> [u16; 3] {
        self.next
    }
}

/// The bit that records gateway `n`'s outcome: in dark 8-bit containers, from the last one
/// down. `None` if the dark 8-bit containers are used up.
pub fn gateway_bit(phv: &PhvParams, n: usize) -> Option<Field> {
    let dark = phv.dark[0] as usize;
    if n >= dark * 8 {
        return None;
    }
    let index = phv.containers_8 as usize - 1 - n / 8;
    Some(Field::at(Container::b8(index as u16), (n % 8) as u8, 1))
}

/// Dark 8-bit containers needed for `gateways` gateway bits.
pub fn gateway_containers(gateways: usize) -> u16 {
    gateways.div_ceil(8) as u16
}

/// Bytes of a container that a field's bits touch (what a crossbar must carry for it).
pub fn field_bytes(f: Field) -> u32 {
    let lo = f.shift as u32 / 8;
    let hi = (f.shift as u32 + f.bits as u32).div_ceil(8);
    hi - lo
}

/// Whether two fields share any bit.
pub fn overlaps(a: Field, b: Field) -> bool {
    if a.container != b.container {
        return false;
    }
    let (a0, a1) = (a.shift as u32, a.shift as u32 + a.bits as u32);
    let (b0, b1) = (b.shift as u32, b.shift as u32 + b.bits as u32);
    a0 < b1 && b0 < a1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_have_unique_names_and_tofino2_widths() {
        for (i, b) in BUILTINS.iter().enumerate() {
            assert!(
                BUILTINS[i + 1..].iter().all(|o| o.name != b.name),
                "{}",
                b.name
            );
        }
        let w = |n: &str| builtin(n).unwrap().field.bits;
        assert_eq!(w("ig_intr_tm_md.ucast_egress_port"), 9);
        assert_eq!(w("ig_intr_tm_md.qid"), 7);
        assert_eq!(w("ig_intr_tm_md.ingress_cos"), 3);
        assert_eq!(w("eg_intr_md.enq_qdepth"), 19);
        assert_eq!(w("eg_intr_md.deq_qdepth"), 19);
        assert_eq!(w("eg_intr_md.deq_timedelta"), 32);
        assert_eq!(w("eg_intr_md.enq_congest_stat"), 2);
        assert_eq!(w("eg_intr_md.deq_congest_stat"), 2);
        assert_eq!(w("eg_intr_md.app_pool_congest_stat"), 8);
        // Egress metadata sharing a container never overlaps.
        let eg: Vec<Field> = BUILTINS
            .iter()
            .filter(|b| b.name.starts_with("eg_intr_md."))
            .map(|b| b.field)
            .chain([MIRROR_SESSION, MIRROR_VALID, MIRROR_IO_SELECT])
            .collect();
        for (i, a) in eg.iter().enumerate() {
            assert!(eg[i + 1..].iter().all(|b| !overlaps(*a, *b)), "{a:?}");
        }
        assert_eq!(w("ig_intr_dprsr_md.adv_flow_ctl"), 32);
        assert_eq!(w("eg_intr_dprsr_md.adv_flow_ctl"), 32);
        assert_eq!(w("ig_intr_dprsr_md.drop_ctl"), 3);
        assert_eq!(w("eg_intr_md.enq_tstamp"), 32);
        assert_eq!(w("eg_intr_md.egress_qid"), 7);
        assert_eq!(w("eg_intr_md.egress_cos"), 3);
        for b in WIDE_BUILTINS {
            let bits: u32 = b.pieces.iter().map(|f| f.bits as u32).sum();
            assert_eq!(bits, 48, "{}", b.name);
        }
    }

    /// Within one gress, no two fields of that gress (or of both) share a bit.
    #[test]
    fn each_gress_metadata_is_disjoint() {
        for gress in ["ingress", "egress"] {
            let mut fs: Vec<(&str, Field)> = BUILTINS
                .iter()
                .filter(|b| b.name.contains("intr") || b.name.contains("prsr"))
                .filter(|b| only_in(b.name).is_none_or(|g| g == gress))
                // Both gresses name these; one shared field.
                .filter(|b| !b.name.ends_with("pkt_length") || b.name.starts_with("ig_"))
                .filter(|b| !b.name.ends_with("adv_flow_ctl") || b.name.starts_with("ig_"))
                .filter(|b| !b.name.ends_with("mirror_io_select") || b.name.starts_with("ig_"))
                .map(|b| (b.name, b.field))
                .collect();
            for b in WIDE_BUILTINS
                .iter()
                .filter(|b| only_in(b.name) == Some(gress))
            {
                fs.extend(b.pieces.iter().map(|&f| (b.name, f)));
            }
            fs.extend([
                ("mirror_session", MIRROR_SESSION),
                ("mirror_valid", MIRROR_VALID),
                ("recirculate", RECIRCULATE),
            ]);
            for (i, a) in fs.iter().enumerate() {
                for b in &fs[i + 1..] {
                    assert!(!overlaps(a.1, b.1), "{gress}: {} and {}", a.0, b.0);
                }
            }
        }
        assert_eq!(only_in("eg_intr_md.deq_qdepth"), Some("egress"));
        assert_eq!(only_in("ig_prsr_md.global_tstamp[31:0]"), Some("ingress"));
        assert_eq!(only_in("ghost_md.qid"), Some("ghost"));
        assert_eq!(only_in("ipv4.ttl"), None);
        assert_eq!(only_in("ig_my_metadata"), None);
    }

    #[test]
    fn extra_containers_start_past_the_layout() {
        assert!(FIRST_FREE[0] > COS.index && layout::CONTAINERS_USED[0] <= COS.index);
        assert!(layout::CONTAINERS_USED[1] <= FIRST_FREE[1]);
        assert!(layout::CONTAINERS_USED[2] <= ENQ_QDEPTH.index && FIRST_FREE[2] > GHOST.index);
    }

    #[test]
    fn allocator_widens_then_spills() {
        let phv = PhvParams {
            normal: [9, 17, 13],
            ..PhvParams::default()
        };
        let mut a = MetadataAllocator::new(&phv);
        assert_eq!(a.alloc(3).unwrap().container, Container::b8(8));
        assert_eq!(a.alloc(3).unwrap().container, Container::b32(12));
        // Spilled past the normal containers, up to the dark 8-bit ones.
        assert_eq!(a.alloc(3).unwrap().container, Container::b8(9));
        for _ in 10..64 {
            a.alloc(3).unwrap();
        }
        assert_eq!(a.used()[0], 64);
        assert_eq!(a.alloc(3).unwrap().container.width, Width::B16);
        let g = gateway_bit(&phv, 9).unwrap();
        assert_eq!((g.container, g.shift), (Container::b8(78), 1));
    }

    #[test]
    fn header_containers_are_normal_only_and_widen() {
        let phv = PhvParams {
            normal: [9, 18, 13],
            ..PhvParams::default()
        };
        let mut a = MetadataAllocator::new(&phv);
        assert_eq!(a.alloc_normal(1), Some(Container::b8(8)));
        assert_eq!(a.alloc_normal(1), Some(Container::b16(17)));
        assert_eq!(a.alloc_normal(2), Some(Container::b32(12)));
        // 3 bytes need 32 bits; no normal container is left, and headers never spill.
        assert_eq!(a.alloc_normal(3), None);
        assert_eq!(a.used(), [9, 18, 13]);
    }

    #[test]
    fn byte_spans_and_overlap() {
        assert_eq!(field_bytes(layout::IPV4_ECN), 1);
        assert_eq!(field_bytes(Field::at(Container::b16(0), 7, 2)), 2);
        assert_eq!(field_bytes(layout::IPV4_DST), 4);
        assert!(overlaps(layout::IPV4_ECN, layout::IPV4_TOS));
        assert!(!overlaps(
            layout::UCAST_EGRESS_PORT,
            layout::EGRESS_PORT_VALID
        ));
    }
}
