//! The traffic manager on its own: buffer pools and admission, scheduling and shaping, and
//! properties over generated traffic.
//!
//! One test binary (each file a module), so the suite links one binary instead of one per
//! file.

mod pfc_dynamic;
mod pools;
mod properties;
mod scheduling;
