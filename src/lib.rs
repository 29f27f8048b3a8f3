//! t2sim: a cycle-accurate model of the Tofino2 switch ASIC.
//!
//! This crate assembles the chip ([`chip::Chip`]) from the pipeline (`t2-pipeline`) and the
//! traffic manager (`t2-tm`), makes it a testbench node, and holds the scenarios and the
//! command-line front end.

pub mod capture;
pub mod chip;
pub mod headroom;
pub mod input;
pub mod scenario;
pub mod schemes;
pub mod stf;
pub mod study;

pub use chip::params::Tofino2Params;
pub use chip::{AfcMessage, Chip, ChipConfig, ChipDrop, ConfigError, MirrorSession, PortSpec};
/// PFC frames, as the chip and NICs send and read them.
pub use t2_pipeline::pfc;
