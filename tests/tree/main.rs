//! The source tree's own rules, checked on the tree itself: no scheme named below
//! `src/schemes/` ([`scheme_names`]), no two files of a crate using each other directly or
//! in a ring ([`import_rings`]).
//!
//! One test binary for this part (each file a module), as the other parts have.

mod import_rings;
mod scheme_names;
mod source;
