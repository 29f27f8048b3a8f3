//! The pipeline crate on its own: packets, the parser, PHV, placement, programs and their
//! interpreter, ghost threads, registers, selectors and LPM.
//!
//! One test binary (each file a module), so the suite links one binary instead of one per
//! file.

mod ghost;
mod header_validity;
mod in_place;
mod ir_check;
mod lpm;
mod p4_errors;
mod p4_front;
mod p4_lower;
mod p4_mirror_select;
mod parser_graph;
mod placement;
mod programs;
mod registers;
mod selector;
mod split;
mod substrate;
