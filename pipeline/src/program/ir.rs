//! The program IR: what a P4-like program for the Tofino2 MAU is, as plain data.
//!
//! A [`Program`] names its fields, tables, actions, register arrays with their
//! RegisterActions, hash units, and the ingress / egress (/ ghost) controls that apply the
//! tables under `if` gateways. It round-trips through serde JSON so a report can be reproduced
//! from a file, and small builder helpers make it pleasant to write in Rust.
//!
//! A program may declare its own header types ([`HeaderType`]: ordered fields with bit
//! widths, a whole number of bytes) and a parser graph ([`ParserGraph`]: states that extract
//! headers in order, then go to a next state unconditionally or select on extracted fields,
//! ending in `accept` or `reject`). Without a parser, a program gets the built-in graph
//! (Ethernet, IPv4 by ethertype 0x0800, UDP/TCP by protocol; [`crate::program::builtin::graph`]),
//! which is itself IR data run by the same engine. The built-in headers (`ethernet`, `ipv4`,
//! `udp`, `tcp`) keep their fixed PHV containers (`crate::hw::layout`) and may be extracted by a
//! program's graph without being declared. Header fields, the Tofino2 intrinsic metadata and
//! the program's own metadata fields are known by name (see [`crate::hw::fields`]);
//! [`crate::program::check::check`] validates a program and lowers it to the resolved form that the
//! parser, placement and execution use. `docs/parser.md` has the parser model and its rules.

use serde::{Deserialize, Serialize};

/// A whole program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub name: String,
    /// The program's own header types (the built-in ones need no declaration).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderType>,
    /// The parser graph; `None` runs the built-in graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parser: Option<ParserGraph>,
    /// The egress parser's graph when it is not the ingress one (a program with its own
    /// `parser`): the same headers, parsed as the packet leaves the TM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_parser: Option<ParserGraph>,
    /// The program's own metadata fields.
    #[serde(default)]
    pub metadata: Vec<MetadataField>,
    #[serde(default)]
    pub hashes: Vec<HashUnit>,
    #[serde(default)]
    pub registers: Vec<RegisterArray>,
    #[serde(default)]
    pub register_actions: Vec<RegisterAction>,
    #[serde(default)]
    pub actions: Vec<Action>,
    #[serde(default)]
    pub tables: Vec<Table>,
    /// The ingress control.
    #[serde(default)]
    pub ingress: Vec<Stmt>,
    /// The egress control.
    #[serde(default)]
    pub egress: Vec<Stmt>,
    /// The ghost control (runs in lockstep with ingress; placed and timed with it).
    #[serde(default)]
    pub ghost: Vec<Stmt>,
    /// Traffic the program adds per data packet, for the report's recirculation and mirror
    /// budget (the chip does not enforce it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    /// Digests the ingress deparser sends the control plane (TNA's `Digest<T>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub digests: Vec<Digest>,
    /// Checksums the deparsers compute into header fields (TNA's `Checksum.update` in a
    /// deparser), besides the built-in IPv4 header's, which is always recomputed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checksum_updates: Vec<ChecksumUpdate>,
}

/// A deparser's checksum unit: as a packet leaves the deparser of `gress` (`ingress` or
/// `egress`), `dst` becomes the ones' complement of the ones' complement sum of `items`
/// (RFC 1071), where `when` (a 1-bit field, or a header's `$valid`) is 1 or is absent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksumUpdate {
    pub gress: String,
    /// A 16-bit field.
    pub dst: String,
    pub items: Vec<ChecksumItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// A sum of zero is written as 0xffff (TNA's `zeros_as_ones`, as UDP sends it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zeros_as_ones: bool,
}

/// A piece of a checksum's data: the items of a list, concatenated most significant bit
/// first, are summed as 16-bit words (a last partial word padded with zeros).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ChecksumItem {
    /// A field by name, its whole width (a header field of any width).
    Field(String),
    /// `bits` (1 to 64) of a constant: a cast's zero padding, or a literal in the list.
    Const { value: u64, bits: u32 },
}

/// A digest of the ingress deparser: when a packet leaves it with
/// `ig_intr_dprsr_md.digest_type` equal to `digest_type` (1 to 7; 0 sends none), the chip
/// records the values of `fields` as the packet leaves, for the control plane to read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Digest {
    /// The name the control plane knows it by (P4: `IngressDeparser.learn`).
    pub name: String,
    pub digest_type: u8,
    /// What the digest carries, in order.
    pub fields: Vec<DigestField>,
}

/// One value of a digest: its name in the digest (P4: the field of the digest's struct)
/// and the field it is read from (up to 64 bits).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigestField {
    pub name: String,
    pub field: String,
}

/// Packets a program adds per data packet it forwards: a packet it sends round the
/// recirculation port and a mirror copy, each given by its frame bytes (FCS included; 0
/// for none). The report finds the smallest data frame the ports can carry at line rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overhead {
    #[serde(default)]
    pub recirculated_bytes: u32,
    #[serde(default)]
    pub mirrored_bytes: u32,
}

/// A program-defined metadata field of 1 to 64 bits (over 32, in pieces named whole where a
/// wide header field is, and by slices elsewhere).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetadataField {
    pub name: String,
    pub bits: u8,
}

/// A header type: fields in wire order, the first field's most significant bit first.
/// Its fields are named `<header>.<field>` (and `<header>.$valid`, read-only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderType {
    pub name: String,
    pub fields: Vec<HeaderField>,
}

impl HeaderType {
    /// A header of `(name, bits)` fields.
    pub fn new(name: &str, fields: &[(&str, u16)]) -> HeaderType {
        HeaderType {
            name: name.to_string(),
            fields: fields
                .iter()
                .map(|&(n, bits)| HeaderField {
                    name: n.to_string(),
                    bits,
                })
                .collect(),
        }
    }

    /// Total width in bits.
    pub fn bits(&self) -> u32 {
        self.fields.iter().map(|f| f.bits as u32).sum()
    }
}

/// A header field of 1 to 128 bits. Fields wider than 32 bits (MAC addresses) are carried
/// through the PHV but cannot be named by tables and actions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderField {
    pub name: String,
    pub bits: u16,
}

/// The parser graph: states by name; parsing starts at the state named `start`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParserGraph {
    pub states: Vec<ParserState>,
    /// Value sets (P4's `value_set`) that select cases name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub value_sets: Vec<ValueSet>,
    /// The headers the deparser emits, in order (P4's `emit`s), where that is not every
    /// header the graph extracts in the order it extracts them (empty): a header left out
    /// is removed from the packet, and one no state extracts may be emitted when the program
    /// makes it valid (a bridged header).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emit: Vec<String>,
}

/// A value set: `size` parser TCAM rows reserved where a select case names it, which the
/// control plane fills with values (a value and mask per key of that select).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueSet {
    /// The name the control plane knows it by (P4: `IngressParser.vs`).
    pub name: String,
    pub size: u32,
    /// The values added, in order (the first that matches wins, as for cases).
    #[serde(default)]
    pub entries: Vec<Vec<KeyValue>>,
}

/// The terminal a transition names to stop parsing and keep the packet.
pub const ACCEPT: &str = "accept";
/// The terminal a transition names to stop parsing and drop the packet (`parser_reject`).
pub const REJECT: &str = "reject";
/// The state parsing starts in.
pub const START: &str = "start";

/// A parser state: extracts headers in order, then moves on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParserState {
    pub name: String,
    /// Headers extracted, in order, from where the previous state stopped.
    #[serde(default)]
    pub extract: Vec<String>,
    /// Fields the state writes after its extracts, in order (P4's assignments in a parser
    /// state: Tofino's parser writes constants and packet bytes into PHV containers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<ParserSet>,
    /// The state's checksum-engine operations, in order (P4's `Checksum` extern in a
    /// parser); each runs where it stands among the extracts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checksum: Vec<ParserChecksum>,
    /// Bytes the state skips (P4's `advance`), each after its number of the state's
    /// extracts: the parser moves past them and the deparser leaves them out of the packet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip: Vec<ParserSkip>,
    pub transition: Transition,
}

/// A run of packet bits a parser state moves past without extracting them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParserSkip {
    /// How many of the state's extracts run before it.
    pub after_extracts: u32,
    /// A whole number of bytes, in bits.
    pub bits: u32,
}

/// One operation of a parser checksum engine (a `Checksum` instance of the parser).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParserChecksum {
    /// The engine by the P4 instance's name: operations naming one name share one engine.
    pub engine: String,
    /// How many of the state's extracts run before it.
    pub after_extracts: u32,
    pub op: ChecksumOp,
}

/// What a parser checksum operation does to its engine's running sum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ChecksumOp {
    /// Adds the items (`add`).
    Add(Vec<ChecksumItem>),
    /// Subtracts the items (`subtract`).
    Subtract(Vec<ChecksumItem>),
    /// Writes the engine's error bit to the 1-bit field (`verify`): 0 when the sum is
    /// 0xffff, the sum of data that carries its own correct checksum, else 1. Tofino's
    /// parser writes the checksum error, so a P4 program's `verify()` reads true when the
    /// checksum is wrong (the behaviour p4lang/bf-p4c's STF tests expect).
    Verify(String),
    /// ORs the error bit into the 1-bit field (`f = ck.verify() || f`): one error flag for
    /// several engines.
    VerifyOr(String),
    /// Writes the checksum, the sum's ones' complement, to the 16-bit field (`get`).
    Get(String),
    /// From here on every header extracted is subtracted, and when parsing ends the sum is
    /// written to the 16-bit field (`subtract_all_and_deposit`: the residual that a deparser
    /// adds back to checksum the payload it never parsed).
    Deposit(String),
}

/// A parser state's write of a PHV field of at most 64 bits (the value zero-extended or
/// truncated to it; the check cuts a wide field where its containers are).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParserSet {
    pub dst: String,
    pub src: ParserValue,
}

/// What a parser state writes into a field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ParserValue {
    Const(u64),
    /// A field as the PHV holds it once the state's headers are extracted.
    Field(String),
    /// `bits` (1 to 64) of the packet, `offset` bits from where the state starts (P4's
    /// `lookahead`, or a field of a header the state extracts past).
    Packet {
        offset: u32,
        bits: u32,
    },
}

/// Where a parser state goes: a state's name, `accept` or `reject`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Transition {
    /// Unconditionally.
    Goto(String),
    /// By the values of already-extracted fields: the first case whose every key matches
    /// (`(field & mask) == (value & mask)`, mask all ones when absent), else `default`.
    Select {
        keys: Vec<String>,
        #[serde(default)]
        cases: Vec<SelectCase>,
        default: String,
    },
}

/// One case of a select: a value (with optional mask) per key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectCase {
    #[serde(default)]
    pub values: Vec<KeyValue>,
    pub next: String,
    /// A case that matches the values of this value set (its `values` are empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_set: Option<String>,
}

impl ParserState {
    /// A state that extracts nothing and accepts.
    pub fn new(name: &str) -> ParserState {
        ParserState {
            name: name.to_string(),
            extract: Vec::new(),
            set: Vec::new(),
            checksum: Vec::new(),
            skip: Vec::new(),
            transition: Transition::Goto(ACCEPT.to_string()),
        }
    }
    pub fn extract(mut self, header: &str) -> ParserState {
        self.extract.push(header.to_string());
        self
    }
    /// Goes to `next` unconditionally.
    pub fn goto(mut self, next: &str) -> ParserState {
        self.transition = Transition::Goto(next.to_string());
        self
    }
    /// Selects on `keys`, going to `default` when no case matches; add cases with
    /// [`ParserState::case`] and [`ParserState::masked_case`].
    pub fn select(mut self, keys: &[&str], default: &str) -> ParserState {
        self.transition = Transition::Select {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            cases: Vec::new(),
            default: default.to_string(),
        };
        self
    }
    /// A case of exact values, one per key.
    pub fn case(self, values: &[u64], next: &str) -> ParserState {
        let values = values
            .iter()
            .map(|&value| KeyValue { value, mask: None })
            .collect();
        self.push_case(values, next)
    }
    /// A case of (value, mask) pairs, one per key.
    pub fn masked_case(self, values: &[(u64, u64)], next: &str) -> ParserState {
        let values = values
            .iter()
            .map(|&(value, mask)| KeyValue {
                value,
                mask: Some(mask),
            })
            .collect();
        self.push_case(values, next)
    }
    fn push_case(mut self, values: Vec<KeyValue>, next: &str) -> ParserState {
        let case = SelectCase {
            values,
            next: next.to_string(),
            value_set: None,
        };
        match &mut self.transition {
            Transition::Select { cases, .. } => cases.push(case),
            // A case without a select: keep the goto as the default; the check then
            // reports the values given for no keys.
            Transition::Goto(next) => {
                self.transition = Transition::Select {
                    keys: Vec::new(),
                    cases: vec![case],
                    default: std::mem::take(next),
                }
            }
        }
        self
    }
}

/// A value an action primitive reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    /// A PHV field by name.
    Field(String),
    /// A constant (at most 32 bits).
    Const(u64),
    /// An action parameter by name (action data).
    Param(String),
}

impl Operand {
    pub fn field(name: &str) -> Operand {
        Operand::Field(name.to_string())
    }
    pub fn param(name: &str) -> Operand {
        Operand::Param(name.to_string())
    }
}

/// Two operands combined into a destination field (`dst = a op b`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Binary {
    pub dst: String,
    pub a: Operand,
    pub b: Operand,
}

/// The arithmetic and logic a VLIW ALU slot performs on two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AluOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    /// Signed minimum: both operands read as two's complement (a field sign-extended from
    /// its width, a constant as 32 bits), as P4's `min` on `int<>` values.
    SMin,
    /// Signed maximum.
    SMax,
    /// Arithmetic shift right: `a` sign-extended from its width, shifted right by `b` (32 or
    /// more gives all sign bits), as P4's `>>` on `int<>`.
    Sar,
}

impl AluOp {
    /// Whether the operation reads its operands as signed values.
    pub fn is_signed(self) -> bool {
        matches!(self, AluOp::SMin | AluOp::SMax | AluOp::Sar)
    }

    /// Applies the operation to 32-bit values (wrapping; shifts of 32 or more give 0).
    pub fn apply(self, a: u32, b: u32) -> u32 {
        match self {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::And => a & b,
            AluOp::Or => a | b,
            AluOp::Xor => a ^ b,
            AluOp::Shl => a.checked_shl(b).unwrap_or(0),
            AluOp::Shr => a.checked_shr(b).unwrap_or(0),
            AluOp::Min => a.min(b),
            AluOp::Max => a.max(b),
            AluOp::SMin => (a as i32).min(b as i32) as u32,
            AluOp::SMax => (a as i32).max(b as i32) as u32,
            AluOp::Sar => ((a as i32) >> b.min(31)) as u32,
        }
    }
}

/// `v`'s low `bits` bits as a two's-complement number, extended to 32 bits.
pub fn sign_extend(v: u32, bits: u8) -> u32 {
    if bits == 0 || bits >= 32 {
        return v;
    }
    let shift = 32 - bits as u32;
    (((v << shift) as i32) >> shift) as u32
}

/// The reason a program's `drop` primitive gives (the model keeps it in `drop_ctl`'s
/// container); the gress reports it as the matching [`crate::DropReason`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramDrop {
    NotIpv4,
    NoRoute,
    TtlExpired,
    /// A control frame or record the program has acted on (not data lost).
    Consumed,
}

impl ProgramDrop {
    pub fn reason(self) -> crate::DropReason {
        match self {
            ProgramDrop::NotIpv4 => crate::DropReason::NotIpv4,
            ProgramDrop::NoRoute => crate::DropReason::NoRoute,
            ProgramDrop::TtlExpired => crate::DropReason::TtlExpired,
            ProgramDrop::Consumed => crate::DropReason::Consumed,
        }
    }
}

/// One VLIW primitive of an action. Primitives of one action act in parallel, so an action
/// may write a field only once and may not read a field another of its primitives writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Primitive {
    /// `dst = src` (a copy when `src` is a field).
    Set {
        dst: String,
        src: Operand,
    },
    Add(Binary),
    Sub(Binary),
    And(Binary),
    Or(Binary),
    Xor(Binary),
    Shl(Binary),
    Shr(Binary),
    Min(Binary),
    Max(Binary),
    /// Signed `min` (two's complement; see [`AluOp::SMin`]).
    SMin(Binary),
    /// Signed `max`.
    SMax(Binary),
    /// Arithmetic shift right (see [`AluOp::Sar`]).
    Sar(Binary),
    /// `dst = hash unit's output` (truncated to the field).
    Hash {
        dst: String,
        hash: String,
    },
    /// Sets `ucast_egress_port` and marks it valid.
    SetEgressPort {
        port: Operand,
    },
    /// Sets `qid`.
    SetQid {
        qid: Operand,
    },
    /// Drops the packet for `reason`.
    Drop {
        reason: ProgramDrop,
    },
    /// Marks Congestion Experienced (ECN = 3) if the packet is ECN-capable (ECN != 0).
    MarkEcn,
    /// Runs a RegisterAction on cell `index` (taken modulo the array size).
    Execute {
        register_action: String,
        index: Operand,
    },
    /// Ingress or egress: the deparser also sends a copy of the packet as it leaves (ingress:
    /// to the TM; egress: to the MAC) to mirror session `session` (8 bits), truncated as the
    /// session says. A copy is never mirrored again by egress.
    Mirror {
        session: Operand,
    },
    /// Ingress only: the packet goes to its pipe's recirculation port instead of its egress
    /// port.
    Recirculate,
    /// `dst = a random number` (truncated to the field) from the table's deterministic
    /// generator, seeded per pipe ([`crate::run::exec::State::seed`]).
    Random {
        dst: String,
    },
    /// P4's `hdr.setValid()`: the deparser emits `header` (in deparse order) whether or not
    /// it was parsed; its fields are what the PHV holds (zero unless parsed or set).
    SetValid {
        header: String,
    },
    /// P4's `hdr.setInvalid()`: the deparser leaves `header` out of the packet.
    SetInvalid {
        header: String,
    },
    /// TNA's `mirror.emit<H>(session, hdr)`: as `mirror`, and the copy starts with header
    /// `header` (one the parser graph extracts; its fields as the PHV holds them when the
    /// packet leaves the deparser, whether or not it is valid), followed by the packet. The
    /// copy then carries `eg_intr_md.mirror_type` (the header's place in the parser graph,
    /// from 1) into the egress, where the parser may select on it to parse the header and the
    /// program may rewrite the copy (into a control frame, say).
    MirrorWithHeader {
        session: Operand,
        header: String,
    },
    /// Ingress only, TNA's `resubmit.emit<H>(hdr)`: the packet as it entered the ingress
    /// (the program's changes discarded) goes through the ingress once more instead of to
    /// the TM, with header `header` (at most 16 bytes, one the parser graph extracts; its
    /// fields as the PHV holds them) in front of it when given. On that second pass
    /// `ig_intr_md.resubmit_flag` is 1 (a parser `select` may key on it); a second pass is
    /// not resubmitted again.
    Resubmit {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        header: Option<String>,
    },
}

impl Primitive {
    /// The ALU operation and operands of a two-operand primitive.
    pub fn binary(&self) -> Option<(AluOp, &Binary)> {
        Some(match self {
            Primitive::Add(b) => (AluOp::Add, b),
            Primitive::Sub(b) => (AluOp::Sub, b),
            Primitive::And(b) => (AluOp::And, b),
            Primitive::Or(b) => (AluOp::Or, b),
            Primitive::Xor(b) => (AluOp::Xor, b),
            Primitive::Shl(b) => (AluOp::Shl, b),
            Primitive::Shr(b) => (AluOp::Shr, b),
            Primitive::Min(b) => (AluOp::Min, b),
            Primitive::Max(b) => (AluOp::Max, b),
            Primitive::SMin(b) => (AluOp::SMin, b),
            Primitive::SMax(b) => (AluOp::SMax, b),
            Primitive::Sar(b) => (AluOp::Sar, b),
            _ => return None,
        })
    }

    /// `dst = a op b`.
    pub fn alu(op: AluOp, dst: &str, a: Operand, b: Operand) -> Primitive {
        let bin = Binary {
            dst: dst.to_string(),
            a,
            b,
        };
        match op {
            AluOp::Add => Primitive::Add(bin),
            AluOp::Sub => Primitive::Sub(bin),
            AluOp::And => Primitive::And(bin),
            AluOp::Or => Primitive::Or(bin),
            AluOp::Xor => Primitive::Xor(bin),
            AluOp::Shl => Primitive::Shl(bin),
            AluOp::Shr => Primitive::Shr(bin),
            AluOp::Min => Primitive::Min(bin),
            AluOp::Max => Primitive::Max(bin),
            AluOp::SMin => Primitive::SMin(bin),
            AluOp::SMax => Primitive::SMax(bin),
            AluOp::Sar => Primitive::Sar(bin),
        }
    }

    pub fn set(dst: &str, src: Operand) -> Primitive {
        Primitive::Set {
            dst: dst.to_string(),
            src,
        }
    }
}

/// An action parameter (action data) of 1 to 32 bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    pub bits: u8,
}

/// An action: parameters and the primitives it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    pub name: String,
    #[serde(default)]
    pub params: Vec<Param>,
    #[serde(default)]
    pub primitives: Vec<Primitive>,
}

impl Action {
    pub fn new(name: &str) -> Action {
        Action {
            name: name.to_string(),
            params: Vec::new(),
            primitives: Vec::new(),
        }
    }
    pub fn param(mut self, name: &str, bits: u8) -> Action {
        self.params.push(Param {
            name: name.to_string(),
            bits,
        });
        self
    }
    pub fn prim(mut self, p: Primitive) -> Action {
        self.primitives.push(p);
        self
    }
}

/// The mask of a `prefix_len`-bit prefix of a `bits`-bit field (a longer prefix is the
/// whole field).
pub fn prefix_mask(bits: u8, prefix_len: u8) -> u64 {
    let bits = bits.min(64) as u32;
    let len = (prefix_len as u32).min(bits);
    let full = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    if len == 0 {
        0
    } else {
        full & !((1u64 << (bits - len)).wrapping_sub(1))
    }
}

/// How a table matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    Exact,
    Ternary,
    /// Longest prefix match, held in TCAM as a ternary table: every key but the last is
    /// matched exactly; the last by prefix, each entry's mask giving its prefix.
    Lpm,
}

/// An action with its arguments (action data), in the order of the action's parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionCall {
    pub action: String,
    #[serde(default)]
    pub args: Vec<u64>,
}

impl ActionCall {
    pub fn new(action: &str, args: &[u64]) -> ActionCall {
        ActionCall {
            action: action.to_string(),
            args: args.to_vec(),
        }
    }

    /// Whether no action is named (an entry that names a group of members instead).
    pub fn is_none(&self) -> bool {
        self.action.is_empty()
    }
}

/// An action selector (P4's `ActionSelector`, ECMP and LAG): an entry names a group of
/// members (actions with their data), and a hash of `inputs` picks one member per packet,
/// so a flow keeps its member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    /// Fields hashed to pick a member (the flow's identity, e.g. the 5-tuple).
    pub inputs: Vec<String>,
    /// Groups the selector holds (what placement sizes it for).
    pub groups: u32,
    /// Most members one group may have.
    pub max_members: u32,
}

/// One key component of an entry. Ternary entries may give a mask (absent = all bits).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyValue {
    pub value: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<u64>,
}

/// A static table entry. Ternary entries are searched in list order: earlier wins.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub key: Vec<KeyValue>,
    /// The action a hit runs; none when the entry names a group of `members`.
    #[serde(default, skip_serializing_if = "ActionCall::is_none")]
    pub action: ActionCall,
    /// A selector table's group: a hit runs the member a hash of the selector's inputs picks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ActionCall>,
}

/// A match-action table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub name: String,
    pub kind: MatchKind,
    /// Key fields, by name.
    #[serde(default)]
    pub keys: Vec<String>,
    /// Entries the table is sized for (what placement allocates memory for).
    pub size: u32,
    /// Actions an entry may name.
    pub actions: Vec<String>,
    /// What a miss runs.
    pub default_action: ActionCall,
    #[serde(default)]
    pub entries: Vec<Entry>,
    /// An action selector: entries may name groups of members.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Selector>,
    /// P4's `@stage(N)`: placement puts the table in MAU stage `N` (counting from 0) or
    /// refuses the program, naming why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<u32>,
    /// The table goes in a stage after the one (the last one, if split) of this table,
    /// which the same control applies earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl Table {
    /// Pins the table to MAU stage `stage` (P4's `@stage`).
    pub fn stage(mut self, stage: u32) -> Table {
        self.stage = Some(stage);
        self
    }
    /// Places the table in a stage after table `other`'s.
    pub fn after(mut self, other: &str) -> Table {
        self.after = Some(other.to_string());
        self
    }
    /// A table with no actions or entries yet; the default action is the first action
    /// added unless [`Table::default_action`] sets another.
    pub fn new(name: &str, kind: MatchKind, keys: &[&str], size: u32) -> Table {
        Table {
            name: name.to_string(),
            kind,
            keys: keys.iter().map(|k| k.to_string()).collect(),
            size,
            actions: Vec::new(),
            default_action: ActionCall::new("", &[]),
            entries: Vec::new(),
            selector: None,
            stage: None,
            after: None,
        }
    }
    /// Gives the table an action selector hashing `inputs` over groups of at most
    /// `max_members` members, sized for `groups` groups.
    pub fn selector(mut self, inputs: &[&str], groups: u32, max_members: u32) -> Table {
        self.selector = Some(Selector {
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            groups,
            max_members,
        });
        self
    }
    /// An exact entry naming a group of members (a selector table).
    pub fn group_entry(mut self, key: &[u64], members: &[(&str, &[u64])]) -> Table {
        self.entries.push(Entry {
            key: key
                .iter()
                .map(|&value| KeyValue { value, mask: None })
                .collect(),
            action: ActionCall::default(),
            members: members
                .iter()
                .map(|&(a, args)| ActionCall::new(a, args))
                .collect(),
        });
        self
    }
    pub fn action(mut self, name: &str) -> Table {
        if self.actions.is_empty() && self.default_action.action.is_empty() {
            self.default_action = ActionCall::new(name, &[]);
        }
        self.actions.push(name.to_string());
        self
    }
    pub fn default_action(mut self, name: &str, args: &[u64]) -> Table {
        self.default_action = ActionCall::new(name, args);
        self
    }
    /// An exact entry (every key component fully specified).
    pub fn entry(mut self, key: &[u64], action: &str, args: &[u64]) -> Table {
        self.entries.push(Entry {
            key: key
                .iter()
                .map(|&value| KeyValue { value, mask: None })
                .collect(),
            action: ActionCall::new(action, args),
            members: Vec::new(),
        });
        self
    }
    /// A longest-prefix entry of an `lpm` table: exact values for all keys but the last,
    /// then the last key's value and prefix length; `bits` is the last key's width.
    pub fn lpm_entry(
        mut self,
        exact: &[u64],
        (value, prefix_len, bits): (u64, u8, u8),
        action: &str,
        args: &[u64],
    ) -> Table {
        let mut key: Vec<KeyValue> = exact
            .iter()
            .map(|&value| KeyValue { value, mask: None })
            .collect();
        key.push(KeyValue {
            value,
            mask: Some(prefix_mask(bits, prefix_len)),
        });
        self.entries.push(Entry {
            key,
            action: ActionCall::new(action, args),
            members: Vec::new(),
        });
        self
    }
    /// A ternary entry of (value, mask) pairs.
    pub fn ternary_entry(mut self, key: &[(u64, u64)], action: &str, args: &[u64]) -> Table {
        self.entries.push(Entry {
            key: key
                .iter()
                .map(|&(value, mask)| KeyValue {
                    value,
                    mask: Some(mask),
                })
                .collect(),
            action: ActionCall::new(action, args),
            members: Vec::new(),
        });
        self
    }
}

/// A comparison, used by gateways and by stateful-ALU conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds<T: Ord>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// A gateway condition: `field cmp value`, where value is a field or a constant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub field: String,
    pub cmp: Cmp,
    pub value: Operand,
}

impl Condition {
    pub fn new(field: &str, cmp: Cmp, value: Operand) -> Condition {
        Condition {
            field: field.to_string(),
            cmp,
            value,
        }
    }
}

/// A statement of a control.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Stmt {
    /// Applies a table (each table is applied exactly once in the program).
    Apply(String),
    /// A gateway: runs `then` if the condition holds, else `otherwise`.
    If {
        /// A name for reports (default: `<gress>_if<N>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        cond: Condition,
        #[serde(default)]
        then: Vec<Stmt>,
        #[serde(default, rename = "else")]
        otherwise: Vec<Stmt>,
    },
}

impl Stmt {
    pub fn apply(table: &str) -> Stmt {
        Stmt::Apply(table.to_string())
    }
    pub fn if_(cond: Condition, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
        Stmt::If {
            name: None,
            cond,
            then,
            otherwise,
        }
    }
}

/// CRC flavour of a hash unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashAlgorithm {
    Crc16,
    Crc32,
}

impl HashAlgorithm {
    pub fn bits(self) -> u32 {
        match self {
            HashAlgorithm::Crc16 => 16,
            HashAlgorithm::Crc32 => 32,
        }
    }
    /// The default (normal, MSB-first) polynomial: CRC-16/BUYPASS 0x8005, CRC-32 0x04C11DB7.
    pub fn default_polynomial(self) -> u32 {
        match self {
            HashAlgorithm::Crc16 => 0x8005,
            HashAlgorithm::Crc32 => 0x04C1_1DB7,
        }
    }
}

/// A hash over fields: a CRC of the fields' bytes (big-endian, each field padded to whole
/// bytes), MSB first, initial value 0, no reflection, no final XOR.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HashUnit {
    pub name: String,
    pub algorithm: HashAlgorithm,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polynomial: Option<u32>,
    pub inputs: Vec<String>,
}

/// A register array: `size` cells of `cell_bits` (1, 8, 16, 32 or 64), all starting at 0.
/// A `pair` array's cells hold two halves of `cell_bits` (8, 16 or 32) each, `lo` and `hi`,
/// updated together by one RegisterAction (P4's `Register<pair, _>`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterArray {
    pub name: String,
    pub cell_bits: u8,
    pub size: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pair: bool,
    /// Cells (each half of a pair) hold two's-complement values (P4's `Register<int<N>>`):
    /// the stateful ALU compares and takes `min`/`max` signed, operands sign-extended from
    /// their width (a field's bits, a constant's and a cell's the cell width).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signed: bool,
}

/// An operand of the stateful ALU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaluOperand {
    /// The cell's value as read (the `lo` half of a pair).
    Cell,
    /// The `hi` half of a paired cell as read.
    CellHi,
    /// A PHV field.
    Field(String),
    /// A constant from the stateful register file (at most 34 bits).
    Const(u64),
}

/// A comparator of the stateful ALU: `a cmp b`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaluCondition {
    pub a: SaluOperand,
    pub cmp: Cmp,
    pub b: SaluOperand,
}

/// What a stateful update ALU computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaluOp {
    /// `a` (b is ignored).
    Set,
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
}

/// A guard term: comparator `condition` must evaluate to `holds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guard {
    pub condition: usize,
    pub holds: bool,
}

/// Which half of a paired cell an update ALU writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    /// The whole cell of an unpaired array, or the `lo` half of a pair.
    #[default]
    Lo,
    Hi,
}

/// An update ALU: if every guard holds, its half of the cell becomes `a op b`. Per half, the
/// first update whose guards hold wins; with none, the half keeps its value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaluUpdate {
    #[serde(default)]
    pub when: Vec<Guard>,
    #[serde(default, skip_serializing_if = "is_lo")]
    pub half: Half,
    pub op: SaluOp,
    pub a: SaluOperand,
    #[serde(default = "zero_operand")]
    pub b: SaluOperand,
}

fn is_lo(h: &Half) -> bool {
    *h == Half::Lo
}

fn zero_operand() -> SaluOperand {
    SaluOperand::Const(0)
}

/// What an output ALU sends back to the PHV.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaluOutputValue {
    /// The cell (the `lo` half of a pair) before the update.
    Old,
    /// The cell (the `lo` half of a pair) after the update.
    New,
    /// The `hi` half of a pair before the update.
    OldHi,
    /// The `hi` half of a pair after the update.
    NewHi,
    /// The comparator results, bit i = condition i held.
    Predicate,
}

/// An output ALU: writes `value` (truncated) into field `dst`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaluOutput {
    pub dst: String,
    pub value: SaluOutputValue,
}

/// A RegisterAction: one read-modify-write of one cell, within Tofino2's stateful-ALU
/// limits (at most 4 conditions, 2 update ALUs per half, 4 outputs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterAction {
    pub name: String,
    pub register: String,
    #[serde(default)]
    pub conditions: Vec<SaluCondition>,
    #[serde(default)]
    pub updates: Vec<SaluUpdate>,
    #[serde(default)]
    pub outputs: Vec<SaluOutput>,
}

impl RegisterAction {
    /// A RegisterAction on array `register` that does nothing yet.
    pub fn new(name: &str, register: &str) -> RegisterAction {
        RegisterAction {
            name: name.to_string(),
            register: register.to_string(),
            conditions: Vec::new(),
            updates: Vec::new(),
            outputs: Vec::new(),
        }
    }
    /// Adds comparator `a cmp b` (the next condition index).
    pub fn condition(mut self, a: SaluOperand, cmp: Cmp, b: SaluOperand) -> RegisterAction {
        self.conditions.push(SaluCondition { a, cmp, b });
        self
    }
    /// Adds an update ALU.
    pub fn update(mut self, u: SaluUpdate) -> RegisterAction {
        self.updates.push(u);
        self
    }
    /// Adds an output ALU writing `value` into field `dst`.
    pub fn output(mut self, dst: &str, value: SaluOutputValue) -> RegisterAction {
        self.outputs.push(SaluOutput {
            dst: dst.to_string(),
            value,
        });
        self
    }
}

impl SaluUpdate {
    /// An unconditional update of the `lo` half (the whole cell of an unpaired array):
    /// the cell becomes `a op b`.
    pub fn new(op: SaluOp, a: SaluOperand, b: SaluOperand) -> SaluUpdate {
        SaluUpdate {
            when: Vec::new(),
            half: Half::Lo,
            op,
            a,
            b,
        }
    }
    /// The same update of the `hi` half of a pair.
    pub fn hi(mut self) -> SaluUpdate {
        self.half = Half::Hi;
        self
    }
    /// The same update, only when every guard holds.
    pub fn when(mut self, guards: &[Guard]) -> SaluUpdate {
        self.when = guards.to_vec();
        self
    }
}

/// Builds a program; [`ProgramBuilder::build`] validates it.
#[derive(Clone, Debug, Default)]
pub struct ProgramBuilder {
    program: Program,
}

impl ProgramBuilder {
    pub fn new(name: &str) -> ProgramBuilder {
        ProgramBuilder {
            program: Program {
                name: name.to_string(),
                ..Program::default()
            },
        }
    }
    /// Declares a header type of `(name, bits)` fields.
    pub fn header(mut self, name: &str, fields: &[(&str, u16)]) -> Self {
        self.program.headers.push(HeaderType::new(name, fields));
        self
    }
    /// Sets the parser graph (parsing starts at the state named `start`).
    pub fn parser(mut self, states: Vec<ParserState>) -> Self {
        self.program.parser = Some(ParserGraph {
            states,
            value_sets: Vec::new(),
            emit: Vec::new(),
        });
        self
    }
    pub fn metadata(mut self, name: &str, bits: u8) -> Self {
        self.program.metadata.push(MetadataField {
            name: name.to_string(),
            bits,
        });
        self
    }
    pub fn hash(mut self, name: &str, algorithm: HashAlgorithm, inputs: &[&str]) -> Self {
        self.program.hashes.push(HashUnit {
            name: name.to_string(),
            algorithm,
            polynomial: None,
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
        });
        self
    }
    pub fn register(mut self, name: &str, cell_bits: u8, size: u32) -> Self {
        self.program.registers.push(RegisterArray {
            name: name.to_string(),
            cell_bits,
            size,
            pair: false,
            signed: false,
        });
        self
    }
    /// A register array of `size` signed cells (`Register<int<cell_bits>>`).
    pub fn register_signed(mut self, name: &str, cell_bits: u8, size: u32) -> Self {
        self.program.registers.push(RegisterArray {
            name: name.to_string(),
            cell_bits,
            size,
            pair: false,
            signed: true,
        });
        self
    }
    /// A register array of `size` cells, each a pair of `half_bits` halves.
    pub fn register_pair(mut self, name: &str, half_bits: u8, size: u32) -> Self {
        self.program.registers.push(RegisterArray {
            name: name.to_string(),
            cell_bits: half_bits,
            size,
            pair: true,
            signed: false,
        });
        self
    }
    pub fn register_action(mut self, ra: RegisterAction) -> Self {
        self.program.register_actions.push(ra);
        self
    }
    pub fn action(mut self, a: Action) -> Self {
        self.program.actions.push(a);
        self
    }
    pub fn table(mut self, t: Table) -> Self {
        self.program.tables.push(t);
        self
    }
    pub fn ingress(mut self, body: Vec<Stmt>) -> Self {
        self.program.ingress = body;
        self
    }
    pub fn egress(mut self, body: Vec<Stmt>) -> Self {
        self.program.egress = body;
        self
    }
    pub fn ghost(mut self, body: Vec<Stmt>) -> Self {
        self.program.ghost = body;
        self
    }
    /// Declares the bytes the program recirculates and mirrors per data packet.
    pub fn overhead(mut self, recirculated_bytes: u32, mirrored_bytes: u32) -> Self {
        self.program.overhead = Some(Overhead {
            recirculated_bytes,
            mirrored_bytes,
        });
        self
    }
    /// The program built so far.
    pub fn peek(&self) -> &Program {
        &self.program
    }
    /// The program without validation (for tests that want an invalid one).
    pub fn build_unchecked(self) -> Program {
        self.program
    }
}

impl Program {
    /// Parses a program from JSON (does not validate it; see [`crate::program::check::check`]).
    pub fn from_json(text: &str) -> Result<Program, serde_json::Error> {
        serde_json::from_str(text)
    }
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a program always serializes")
    }
}
