//! t2sim: a cycle-accurate model of the Tofino2 switch ASIC.
//!
//! This crate assembles the chip ([`chip::Chip`]) from the pipeline (`t2-pipeline`) and the
//! traffic manager (`t2-tm`), makes it a testbench node, and holds the scenarios and the
//! command-line front end.

pub mod chip;
pub mod compare;
pub mod control_toml;
pub mod headroom;
pub mod parallel;
pub mod params;
pub mod pcap;
pub mod plots;
pub mod program;
pub mod progress;
pub mod scenario;
pub mod scenario_file;
pub mod schemes;
pub mod stats;
pub mod sweep;
pub mod topology;
pub mod trace;

pub use chip::{AfcMessage, Chip, ChipConfig, ConfigError, DropCause, MirrorSession, PortSpec};
pub use params::Tofino2Params;
/// PFC frames, as the chip and NICs send and read them.
pub use t2_pipeline::pfc;
