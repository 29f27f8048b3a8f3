//! t2-waves: the signals a t2sim model exposes, and a record of how they change.
//!
//! Modules declare signals by hierarchical name (`chip.tm.port3.depth_cells`); a
//! [`Recorder`] keeps only changes, stamped with the cycle they happened in. The VCD writer
//! and GTKWave save files build on this record. This crate depends on no other t2sim crate,
//! so every module can use it.

use std::fmt;

/// What a signal carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalKind {
    /// One bit.
    Bit,
    /// An unsigned vector of the given width in bits (1..=64).
    Vector(u8),
}

/// A handle to a declared signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SignalId(u32);

impl SignalId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A declared signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signal {
    /// Dotted hierarchical name, e.g. `chip.pipe0.ingress.stage07.valid`.
    pub path: String,
    pub kind: SignalKind,
}

/// A bad signal declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeclareError {
    /// The path is empty, or has an empty segment or a character other than
    /// `[A-Za-z0-9_]` in a segment.
    BadPath(String),
    /// The path was already declared.
    Duplicate(String),
    /// Vector widths must be 1..=64.
    BadWidth { path: String, width: u8 },
}

impl fmt::Display for DeclareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclareError::BadPath(p) => write!(
                f,
                "signal path `{p}`: segments must be non-empty and use only letters, digits and _"
            ),
            DeclareError::Duplicate(p) => write!(f, "signal `{p}` is declared twice"),
            DeclareError::BadWidth { path, width } => {
                write!(f, "signal `{path}`: width {width} is outside 1..=64")
            }
        }
    }
}

impl std::error::Error for DeclareError {}

/// One recorded change: at `cycle`, `signal` took `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    pub cycle: u64,
    pub signal: SignalId,
    pub value: u64,
}

/// Declared signals, their current values, and every change since recording began.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    signals: Vec<Signal>,
    current: Vec<u64>,
    changes: Vec<Change>,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Declares a signal whose initial value is 0.
    pub fn declare(&mut self, path: &str, kind: SignalKind) -> Result<SignalId, DeclareError> {
        let valid_segment =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !path.split('.').all(valid_segment) {
            return Err(DeclareError::BadPath(path.to_string()));
        }
        if let SignalKind::Vector(w) = kind {
            if w == 0 || w > 64 {
                return Err(DeclareError::BadWidth {
                    path: path.to_string(),
                    width: w,
                });
            }
        }
        if self.signals.iter().any(|s| s.path == path) {
            return Err(DeclareError::Duplicate(path.to_string()));
        }
        let id = SignalId(self.signals.len() as u32);
        self.signals.push(Signal {
            path: path.to_string(),
            kind,
        });
        self.current.push(0);
        Ok(id)
    }

    /// Sets `signal` to `value` at `cycle`; records a change only if the value differs.
    /// Values wider than the signal are truncated to its width.
    pub fn set(&mut self, cycle: u64, signal: SignalId, value: u64) {
        let width = match self.signals[signal.index()].kind {
            SignalKind::Bit => 1,
            SignalKind::Vector(w) => w,
        };
        let value = if width == 64 {
            value
        } else {
            value & ((1u64 << width) - 1)
        };
        let slot = &mut self.current[signal.index()];
        if *slot != value {
            *slot = value;
            self.changes.push(Change {
                cycle,
                signal,
                value,
            });
        }
    }

    pub fn signals(&self) -> &[Signal] {
        &self.signals
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The value `signal` had at the end of `cycle`.
    pub fn value_at(&self, signal: SignalId, cycle: u64) -> u64 {
        self.changes
            .iter()
            .rev()
            .find(|c| c.signal == signal && c.cycle <= cycle)
            .map_or(0, |c| c.value)
    }

    pub fn find(&self, path: &str) -> Option<SignalId> {
        self.signals
            .iter()
            .position(|s| s.path == path)
            .map(|i| SignalId(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_changes() {
        let mut r = Recorder::new();
        let busy = r.declare("chip.port3.tx_busy", SignalKind::Bit).unwrap();
        let depth = r
            .declare("chip.tm.port3.depth_cells", SignalKind::Vector(19))
            .unwrap();
        r.set(5, busy, 1);
        r.set(6, busy, 1);
        r.set(9, busy, 0);
        r.set(7, depth, 9);
        r.set(8, depth, 9);
        assert_eq!(r.changes().len(), 3);
        assert_eq!(r.value_at(busy, 4), 0);
        assert_eq!(r.value_at(busy, 8), 1);
        assert_eq!(r.value_at(busy, 9), 0);
        assert_eq!(r.value_at(depth, 100), 9);
        assert_eq!(r.find("chip.port3.tx_busy"), Some(busy));
    }

    #[test]
    fn truncates_to_width() {
        let mut r = Recorder::new();
        let v = r.declare("a.b", SignalKind::Vector(4)).unwrap();
        r.set(1, v, 0x1f);
        assert_eq!(r.value_at(v, 1), 0xf);
    }

    #[test]
    fn rejects_bad_declarations() {
        let mut r = Recorder::new();
        assert_eq!(
            r.declare("chip..x", SignalKind::Bit),
            Err(DeclareError::BadPath("chip..x".into()))
        );
        assert_eq!(
            r.declare("chip.a b", SignalKind::Bit),
            Err(DeclareError::BadPath("chip.a b".into()))
        );
        assert!(matches!(
            r.declare("chip.v", SignalKind::Vector(65)),
            Err(DeclareError::BadWidth { width: 65, .. })
        ));
        r.declare("chip.x", SignalKind::Bit).unwrap();
        assert_eq!(
            r.declare("chip.x", SignalKind::Bit),
            Err(DeclareError::Duplicate("chip.x".into()))
        );
    }
}
