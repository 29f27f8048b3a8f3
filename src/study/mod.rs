//! Studies over many runs: one scenario under several schemes side by side (`compare`), a
//! grid over any key of a scenario file (`sweep`), their SVG plots, and the thread pool that
//! spreads independent runs over the cores.

pub mod compare;
pub mod parallel;
pub mod plots;
pub mod stats;
pub mod sweep;
