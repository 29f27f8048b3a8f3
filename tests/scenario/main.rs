//! Scenario files and what is built from them: topologies, the control keys, results, compare
//! and sweep, parallel runs, captures, waves, the kept broken inputs and the fuzzers.
//!
//! One test binary for this part (each file a module), so the suite links a few binaries
//! instead of one per file.

#[path = "../common/mod.rs"]
mod common;

mod bad_inputs;
mod compare;
mod control_toml;
mod experiments;
mod fuzz;
mod hostile;
mod parallel;
mod pcap;
mod results;
mod scenario_file;
mod topology;
mod waves;
