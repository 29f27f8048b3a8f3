//! The error every program check returns, and the two helpers the checks share.

use std::fmt;

/// A program that cannot be accepted: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrError {
    pub path: String,
    pub problem: String,
}

impl fmt::Display for IrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl std::error::Error for IrError {}

pub(crate) fn err<T>(path: &str, problem: impl Into<String>) -> Result<T, IrError> {
    Err(IrError {
        path: path.to_string(),
        problem: problem.into(),
    })
}

/// Whether `v` fits in `bits` bits.
pub(crate) fn fits(v: u64, bits: u32) -> bool {
    bits >= 64 || v >> bits == 0
}
