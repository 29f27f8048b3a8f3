//! The source tree's own rules, checked on the tree itself: no scheme named below
//! `src/schemes/` ([`scheme_names`]).
//!
//! One test binary for this part (each file a module), as the other parts have.

mod scheme_names;
mod source;
