//! t2-pipeline: what a Tofino2 pipe does to a packet between its MACs and the traffic manager.
//!
//! Packets are real bytes in a [`packet::PacketPool`]. A gress ([`gress::GressPipeline`])
//! parses them into a [`phv::Phv`], runs the MAU stages that placement filled
//! ([`stage::Placement`] decides the cycles), and deparses them back into bytes. The crate
//! knows nothing of queues: it hands packets on with their intrinsic metadata.

pub mod bfc;
pub mod check;
pub mod examples;
pub mod exec;
pub mod fields;
pub mod ghost;
pub mod gress;
pub mod headers;
pub mod ir;
pub mod l3;
pub mod layout;
pub mod packet;
pub mod params;
pub mod parser;
pub mod parser_check;
pub mod pfc;
pub mod phv;
pub mod place;
pub mod qcn;
pub mod report;
pub mod stage;

pub use ghost::{GhostPipeline, GhostWord};
pub use gress::{Exit, Gress, GressPipeline, NoTables, StageProgram};
pub use packet::{PacketHandle, PacketPool};
pub use params::{ParamError, PipelineParams};
pub use phv::Phv;
pub use stage::{Dependency, Placement, StageTiming};

/// Why a pipe dropped a packet.
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
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [
        DropReason::ParserError,
        DropReason::Ipv4ChecksumError,
        DropReason::NotIpv4,
        DropReason::NoRoute,
        DropReason::TtlExpired,
        DropReason::ParserReject,
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
        }
    }
}
