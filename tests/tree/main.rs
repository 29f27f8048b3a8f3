//! The source tree's own rules, checked on the tree itself: no scheme named below
//! `src/schemes/` ([`scheme_names`]), no two files of a crate using each other directly or
//! in a ring ([`import_rings`]), every path the docs name existing and no citation of files
//! outside the repository ([`doc_paths`]).
//!
//! One test binary for this part (each file a module), as the other parts have.

mod doc_paths;
mod import_rings;
mod scheme_names;
mod source;
