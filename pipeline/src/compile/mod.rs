//! The compiler side: placement of a checked program onto the MAU stages under Tofino2's
//! per-stage budgets (tables split over stages when they must be), and the resource report.
//! Depends on `program` and `hw`.

pub mod place;
pub mod report;
