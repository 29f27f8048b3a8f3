//! The `t2sim` command as a user runs it: every subcommand, its output and its errors.
//!
//! One test binary for this part (each file a module), so the suite links a few binaries
//! instead of one per file.

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod hostile;
mod hostile_entries;
mod p4_programs;
mod report;
mod report_budget;
