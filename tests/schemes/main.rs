//! Each congestion scheme on the chip: its program, TM set-up and host behaviour, run on
//! scenario files and checked against its promises.
//!
//! One test binary for this part (each file a module), so the suite links a few binaries
//! instead of one per file.

#[path = "../common/mod.rs"]
mod common;

mod bfc;
mod bfc_properties;
mod bfc_refresh;
mod dcqcn;
mod dcqcn_nic;
mod dctcp;
mod host_features;
mod hpcc;
mod lossless;
mod mice_elephant;
mod p4_sources;
mod pabo;
mod pias;
mod scheme_scenarios;
mod schemes;
mod slytherin;
mod wire_tap;
