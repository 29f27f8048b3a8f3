//! t2-pipeline: what a Tofino2 pipe does to a packet between its MACs and the traffic manager.
//!
//! Packets are real bytes in a [`packet::PacketPool`]. A gress ([`gress::GressPipeline`])
//! parses them into a [`phv::Phv`], runs the MAU stages that placement filled
//! ([`stage::Placement`] decides the cycles), and deparses them back into bytes. The crate
//! knows nothing of queues: it hands packets on with their intrinsic metadata.
//!
//! The crate is six layers; each uses only the ones below it (no module imports upward, and
//! no two modules import each other):
//!
//! ```text
//!   p4/       P4-16 front end: preprocess (cpp), lexer, parser, lower onto the IR
//!   run/      exec (interpreter + placed stage programs), compiled (the stages compiled at
//!             placement), state (register cells, random generators), hash (CRCs, the
//!             selector's hash), l3 (built-in forwarding)
//!   compile/  place (stages under budgets, table splitting), report
//!   program/  ir, error, builtin (parser graph as IR), parser_check, check, scope, blocks,
//!             examples
//!   hw/       params, phv, layout, fields, stage (timing), parser engine, gress, ghost
//!   wire/     packet, headers, pfc (bytes and frame formats)
//! ```
//!
//! `hw` runs whatever it is handed (a parser [`parser::Graph`], a [`gress::StageProgram`]);
//! only `program` knows the language and only `run` joins a placed program to the hardware.

pub mod compile;
pub mod hw;
pub mod program;
pub mod run;
pub mod wire;

// The crate's public paths stay flat (`t2_pipeline::ir`, `t2_pipeline::headers`, ...): the
// layer a module lives in is for readers of the tree, not a second name users must learn.
pub use compile::{place, report};
pub use hw::{cells, fields, ghost, gress, layout, params, parser, phv, stage};
pub use program::{blocks, check, examples, ir, parser_check};
pub use run::{exec, l3};
pub use wire::{headers, packet, pfc};

pub use cells::Cells;
pub use ghost::{GhostPipeline, GhostWord};
pub use gress::{Digested, Exit, Gress, GressPipeline, NoTables, StageProgram};
pub use packet::{PacketHandle, PacketPool};
pub use params::{ParamError, PipelineParams};
pub use phv::Phv;
pub use stage::{Dependency, Placement, StageTiming};

/// Why a gress dropped a packet: its parser, checksum or program (a program's own reason is
/// an [`ir::ProgramDrop`]); the chip counts it as `ChipDrop::Pipeline(gress, reason)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// A header was truncated or malformed.
    ParserError = 1,
    /// The IPv4 header checksum did not verify.
    Ipv4ChecksumError = 2,
    /// The program forwards only IPv4.
    NotIpv4 = 3,
    /// The forwarding table had no entry for the destination.
    NoRoute = 4,
    /// The TTL would have reached 0.
    TtlExpired = 5,
    /// The program's parser graph reached `reject`.
    ParserReject = 6,
    /// The program consumed the packet: a control frame or a record it has acted on (a BFC
    /// pause frame turned into AFC, a dequeue record counted), not lost data.
    Consumed = 7,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::ParserError,
        DropReason::Ipv4ChecksumError,
        DropReason::NotIpv4,
        DropReason::NoRoute,
        DropReason::TtlExpired,
        DropReason::ParserReject,
        DropReason::Consumed,
    ];

    /// The reason stored in the PHV's drop field; 0 means "not dropped".
    pub fn from_code(code: u8) -> Option<DropReason> {
        DropReason::ALL.into_iter().find(|r| *r as u8 == code)
    }

    /// Snake-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::ParserError => "parser_error",
            DropReason::Ipv4ChecksumError => "ipv4_checksum_error",
            DropReason::NotIpv4 => "not_ipv4",
            DropReason::NoRoute => "no_route",
            DropReason::TtlExpired => "ttl_expired",
            DropReason::ParserReject => "parser_reject",
            DropReason::Consumed => "consumed",
        }
    }
}
pub mod p4;
