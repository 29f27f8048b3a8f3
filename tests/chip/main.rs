//! The chip model driven directly: ports, pipes, TM, MACs, programs, the control plane,
//! mirroring, recirculation, pktgen, ghost, and properties over generated scenarios.
//!
//! One test binary for this part (each file a module), so the suite links a few binaries
//! instead of one per file.

#[path = "../common/mod.rs"]
mod common;

mod afc;
mod chip;
mod cnm;
mod congest_stat;
mod control_frames;
mod control_plane;
mod deparser_controls;
mod digests;
mod egress_mirror;
mod ghost;
mod l2;
mod long_run;
mod metadata;
mod mirror_header;
mod parser_graph;
mod pktgen;
mod program;
mod properties;
mod recirculation;
mod resubmit;
mod shipped_programs;
