//! t2-waves: the signals a t2sim model exposes, written as a VCD waveform with a GTKWave save
//! file beside it.
//!
//! Modules declare signals by dotted hierarchical name (`chip.tm.pipe0.port3.q0.depth_cells`)
//! on a [`Tracer`]; a [`TraceFilter`] decides which are traced, and undeclared or filtered
//! signals cost nothing. Values are set in the cycle they change ([`Tracer::set`]) or scheduled
//! for a known future cycle ([`Tracer::schedule`], for pulses such as "a packet is at stage 7
//! now" that the model knows when the packet enters). Only changes are written, in time order,
//! with the clock period as the time unit (picoseconds, rounded) and a cycle counter signal.

pub mod filter;
pub mod gtkw;

pub use filter::{FilterError, TraceFilter};

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::io::{self, Write};
use vcd::{IdCode, SimulationCommand, TimescaleUnit, Value as Bit, VarType};

/// What a signal carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalKind {
    /// One bit.
    Bit,
    /// An unsigned vector of the given width in bits (1..=64).
    Vector(u8),
    /// One of a fixed set of names (a state, a drop reason), shown as text.
    Text,
}

/// A value of a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Bits(u64),
    Text(&'static str),
}

/// A handle to a traced signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SignalId(u32);

impl SignalId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A traced signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signal {
    /// Dotted hierarchical name, e.g. `chip.pipe0.ingress.stage07.valid`.
    pub path: String,
    pub kind: SignalKind,
}

impl Signal {
    /// The name of the signal's enclosing scope (`chip.pipe0.ingress.stage07`).
    pub fn scope(&self) -> &str {
        self.path.rsplit_once('.').map_or("", |(s, _)| s)
    }

    fn width(&self) -> u32 {
        match self.kind {
            SignalKind::Bit | SignalKind::Text => 1,
            SignalKind::Vector(w) => w as u32,
        }
    }

    fn initial(&self) -> Value {
        match self.kind {
            SignalKind::Text => Value::Text("-"),
            _ => Value::Bits(0),
        }
    }
}

/// A bad signal declaration or use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeclareError {
    /// The path is empty, or has an empty segment or a character other than
    /// `[A-Za-z0-9_]` in a segment.
    BadPath(String),
    /// The path was already declared.
    Duplicate(String),
    /// Vector widths must be 1..=64.
    BadWidth { path: String, width: u8 },
    /// Signals must be declared before the dump starts.
    AfterStart(String),
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
            DeclareError::AfterStart(p) => {
                write!(f, "signal `{p}` declared after the dump started")
            }
        }
    }
}

impl std::error::Error for DeclareError {}

/// One change as written to the dump: at `cycle`, `signal` took `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    pub cycle: u64,
    pub signal: SignalId,
    pub value: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    cycle: u64,
    seq: u64,
    signal: u32,
}

/// Makes a text value safe as one VCD token: bytes outside `!`..`~` and the backslash become
/// `\xHH`, so a space can never split the value from the signal's id.
pub fn escape_text(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    push_escaped(&mut out, s);
    String::from_utf8(out).expect("escaped text is ASCII")
}

fn push_escaped(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in s.bytes() {
        if (b'!'..=b'~').contains(&b) && b != b'\\' {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        }
    }
    if s.is_empty() {
        out.extend_from_slice(b"\\x00");
    }
}

/// Picoseconds at the start of `cycle` under a `clock_hz` clock, rounded to nearest.
pub fn cycle_to_ps(cycle: u64, clock_hz: u64) -> u64 {
    let num = cycle as u128 * 1_000_000_000_000;
    ((num + clock_hz as u128 / 2) / clock_hz as u128) as u64
}

/// Declares signals, keeps their values, and writes the changes as VCD.
pub struct Tracer {
    root: String,
    clock_hz: u64,
    filter: TraceFilter,
    signals: Vec<Signal>,
    /// Value each signal has in the dump so far.
    written: Vec<Value>,
    /// Value of the latest `set` of each signal (to skip unchanged samples cheaply).
    latest: Vec<Value>,
    /// Values set for `sampled_cycle`, not yet written.
    sampled: Vec<(u32, Value)>,
    sampled_cycle: u64,
    /// Changes not yet written, earliest first; their values are in `pending_values`.
    pending: BinaryHeap<Reverse<Pending>>,
    pending_values: Vec<Value>,
    free_values: Vec<u32>,
    seq: u64,
    /// Signals touched in the cycle being written, and their staged values.
    staged: Vec<Option<Value>>,
    touched: Vec<u32>,
    out: Option<vcd::Writer<Box<dyn Write + Send>>>,
    ids: Vec<IdCode>,
    cycle_id: Option<IdCode>,
    /// Each signal's id code as text, and the cycle counter's, for the fast value path.
    id_text: Vec<Vec<u8>>,
    cycle_id_text: Vec<u8>,
    /// The lines of the cycle being written, written out in one call.
    line: Vec<u8>,
    /// Everything written, kept only when asked for (tests compare it with the dump).
    log: Option<Vec<Change>>,
    flushed_before: u64,
    last_stamp: Option<u64>,
}

impl Tracer {
    /// A tracer for signals under `root` (e.g. `chip`), with a clock of `clock_hz` Hz.
    pub fn new(root: &str, clock_hz: u64, filter: TraceFilter) -> Tracer {
        assert!(clock_hz > 0, "a clock needs a non-zero frequency");
        Tracer {
            root: root.to_string(),
            clock_hz,
            filter,
            signals: Vec::new(),
            written: Vec::new(),
            latest: Vec::new(),
            sampled: Vec::new(),
            sampled_cycle: 0,
            pending: BinaryHeap::new(),
            pending_values: Vec::new(),
            free_values: Vec::new(),
            seq: 0,
            staged: Vec::new(),
            touched: Vec::new(),
            out: None,
            ids: Vec::new(),
            cycle_id: None,
            id_text: Vec::new(),
            cycle_id_text: Vec::new(),
            line: Vec::new(),
            log: None,
            flushed_before: 0,
            last_stamp: None,
        }
    }

    /// Keeps an in-memory record of every change written.
    pub fn keep_log(&mut self) {
        self.log = Some(Vec::new());
    }

    pub fn log(&self) -> &[Change] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// Declares a signal. Returns `None` if the filter leaves it out: the caller then skips
    /// all work for it.
    pub fn declare(
        &mut self,
        path: &str,
        kind: SignalKind,
    ) -> Result<Option<SignalId>, DeclareError> {
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
        if self.out.is_some() {
            return Err(DeclareError::AfterStart(path.to_string()));
        }
        if self.signals.iter().any(|s| s.path == path) {
            return Err(DeclareError::Duplicate(path.to_string()));
        }
        if !self.filter.selects(path) {
            return Ok(None);
        }
        let signal = Signal {
            path: path.to_string(),
            kind,
        };
        let init = signal.initial();
        self.signals.push(signal);
        self.written.push(init);
        self.latest.push(init);
        self.staged.push(None);
        Ok(Some(SignalId(self.signals.len() as u32 - 1)))
    }

    /// The traced signals, in declaration order.
    pub fn signals(&self) -> &[Signal] {
        &self.signals
    }

    pub fn clock_hz(&self) -> u64 {
        self.clock_hz
    }

    /// Starts the dump: writes the header (scopes, variables, initial values) to `w`.
    pub fn begin(&mut self, w: Box<dyn Write + Send>) -> io::Result<()> {
        let mut v = vcd::Writer::new(w);
        v.version(concat!("t2sim ", env!("CARGO_PKG_VERSION")))?;
        v.comment("time unit: 1 ps; one clock cycle is 1e12 / clock_hz ps, rounded per cycle")?;
        v.timescale(1, TimescaleUnit::PS)?;
        // Variables sorted by path so that each scope is opened once.
        let mut order: Vec<usize> = (0..self.signals.len()).collect();
        order.sort_by(|&a, &b| self.signals[a].path.cmp(&self.signals[b].path));
        let mut ids = vec![IdCode::FIRST; self.signals.len()];
        let mut open: Vec<&str> = Vec::new();
        v.add_module(&self.root)?;
        self.cycle_id = Some(v.add_var(VarType::Integer, 64, "cycle", None)?);
        for i in order {
            let s = &self.signals[i];
            let parts: Vec<&str> = s.path.split('.').collect();
            let (scopes, leaf) = parts.split_at(parts.len() - 1);
            let scopes = if scopes.first() == Some(&self.root.as_str()) {
                &scopes[1..]
            } else {
                scopes
            };
            let common = open.iter().zip(scopes).take_while(|(a, b)| a == b).count();
            while open.len() > common {
                v.upscope()?;
                open.pop();
            }
            for sc in &scopes[common..] {
                v.add_module(sc)?;
                open.push(sc);
            }
            let var_type = match s.kind {
                SignalKind::Text => VarType::String,
                _ => VarType::Wire,
            };
            ids[i] = v.add_var(var_type, s.width(), leaf[0], None)?;
        }
        for _ in open.drain(..) {
            v.upscope()?;
        }
        v.upscope()?;
        v.enddefinitions()?;
        v.timestamp(0)?;
        v.begin(SimulationCommand::Dumpvars)?;
        v.change_vector(self.cycle_id.expect("declared"), bits(0, 64))?;
        for (i, s) in self.signals.iter().enumerate() {
            write_value(&mut v, ids[i], s, s.initial())?;
        }
        v.end()?;
        self.id_text = ids.iter().map(|id| id.to_string().into_bytes()).collect();
        self.cycle_id_text = self.cycle_id.expect("declared").to_string().into_bytes();
        self.ids = ids;
        self.out = Some(v);
        Ok(())
    }

    /// Whether the dump has started.
    pub fn started(&self) -> bool {
        self.out.is_some()
    }

    /// Sets a signal that changes in cycle `cycle` (the current one). Samples that repeat the
    /// latest value are dropped at once.
    ///
    /// Sampled values skip the schedule queue: they wait in a list for their cycle to be
    /// written, after any values scheduled for the same cycle.
    #[inline]
    pub fn set(&mut self, cycle: u64, id: SignalId, value: Value) {
        if self.latest[id.index()] == value {
            return;
        }
        self.record_sample(cycle, id, value);
    }

    /// The part of `set` for a value that changed (kept out of line so `set` inlines).
    fn record_sample(&mut self, cycle: u64, id: SignalId, value: Value) {
        debug_assert!(
            cycle >= self.flushed_before,
            "a change in a cycle already written"
        );
        self.latest[id.index()] = value;
        if !self.sampled.is_empty() && self.sampled_cycle != cycle {
            // Samples of an older cycle not yet flushed: queue them like scheduled values.
            let old = std::mem::take(&mut self.sampled);
            for &(sig, v) in &old {
                self.schedule(self.sampled_cycle, SignalId(sig), v);
            }
            self.sampled = old;
            self.sampled.clear();
        }
        self.sampled_cycle = cycle;
        self.sampled.push((id.0, value));
    }

    /// Schedules `id` to take `value` in `cycle`, now or later. When several values are
    /// scheduled for one signal in one cycle, the one scheduled last wins.
    pub fn schedule(&mut self, cycle: u64, id: SignalId, value: Value) {
        debug_assert!(
            cycle >= self.flushed_before,
            "a change in a cycle already written"
        );
        let slot = match self.free_values.pop() {
            Some(i) => {
                self.pending_values[i as usize] = value;
                i
            }
            None => {
                self.pending_values.push(value);
                self.pending_values.len() as u32 - 1
            }
        };
        self.seq += 1;
        self.pending.push(Reverse(Pending {
            cycle,
            seq: (self.seq << 32) | slot as u64,
            signal: id.0,
        }));
    }

    /// Writes every change of cycles before `cycle`; nothing may be set or scheduled for those
    /// cycles afterwards.
    pub fn flush_before(&mut self, cycle: u64) -> io::Result<()> {
        loop {
            let queued = self.pending.peek().map(|Reverse(p)| p.cycle);
            let sampled = (!self.sampled.is_empty()).then_some(self.sampled_cycle);
            let now = match (queued, sampled) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(c) => c,
                    None => break,
                },
            };
            if now >= cycle {
                break;
            }
            while let Some(&Reverse(p)) = self.pending.peek() {
                if p.cycle != now {
                    break;
                }
                self.pending.pop();
                let slot = (p.seq & 0xffff_ffff) as u32;
                let value = self.pending_values[slot as usize];
                self.free_values.push(slot);
                if self.staged[p.signal as usize].is_none() {
                    self.touched.push(p.signal);
                }
                self.staged[p.signal as usize] = Some(value);
            }
            if sampled == Some(now) {
                for &(sig, value) in &self.sampled {
                    if self.staged[sig as usize].is_none() {
                        self.touched.push(sig);
                    }
                    self.staged[sig as usize] = Some(value);
                }
                self.sampled.clear();
            }
            self.write_cycle(now)?;
        }
        self.flushed_before = self.flushed_before.max(cycle);
        Ok(())
    }

    /// Writes the net changes of one cycle. Values are formatted here rather than through
    /// the `vcd` writer's per-bit formatting: this is the hot path of a traced run.
    fn write_cycle(&mut self, cycle: u64) -> io::Result<()> {
        self.touched.sort_unstable();
        self.line.clear();
        for k in 0..self.touched.len() {
            let s = self.touched[k] as usize;
            let value = self.staged[s].take().expect("touched signals are staged");
            if self.written[s] == value {
                continue;
            }
            self.written[s] = value;
            if self.out.is_some() {
                if self.line.is_empty() {
                    self.line.push(b'#');
                    push_decimal(&mut self.line, cycle_to_ps(cycle, self.clock_hz));
                    self.line.push(b'\n');
                    push_vector(&mut self.line, cycle, 64, &self.cycle_id_text);
                    self.last_stamp = Some(cycle);
                }
                let id = &self.id_text[s];
                match (self.signals[s].kind, value) {
                    (SignalKind::Bit, Value::Bits(b)) => {
                        self.line.push(if b & 1 == 1 { b'1' } else { b'0' });
                        self.line.extend_from_slice(id);
                        self.line.push(b'\n');
                    }
                    (SignalKind::Vector(w), Value::Bits(b)) => {
                        push_vector(&mut self.line, b, w as u32, id)
                    }
                    (SignalKind::Text, Value::Text(t)) => {
                        self.line.push(b's');
                        push_escaped(&mut self.line, t);
                        self.line.push(b' ');
                        self.line.extend_from_slice(id);
                        self.line.push(b'\n');
                    }
                    (kind, v) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!(
                                "signal `{}` of kind {kind:?} given {v:?}",
                                self.signals[s].path
                            ),
                        ))
                    }
                }
            }
            if let Some(log) = self.log.as_mut() {
                log.push(Change {
                    cycle,
                    signal: SignalId(s as u32),
                    value,
                });
            }
        }
        self.touched.clear();
        if let Some(out) = self.out.as_mut() {
            out.writer().write_all(&self.line)?;
        }
        Ok(())
    }

    /// Ends the dump at cycle `end`: writes the changes of cycles up to `end`, discards those
    /// scheduled later (they have not happened), marks the end time and flushes the output.
    pub fn finish(&mut self, end: u64) -> io::Result<()> {
        self.flush_before(end.saturating_add(1))?;
        self.pending.clear();
        self.sampled.clear();
        if let Some(out) = self.out.as_mut() {
            if self.last_stamp != Some(end) {
                out.timestamp(cycle_to_ps(end, self.clock_hz))?;
                out.change_vector(self.cycle_id.expect("begun"), bits(end, 64))?;
            }
            out.flush()?;
        }
        Ok(())
    }
}

fn push_decimal(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev());
}

/// `b<bits> <id>\n`, the bits from the highest set one down, at most `width` of them.
fn push_vector(out: &mut Vec<u8>, value: u64, width: u32, id: &[u8]) {
    out.push(b'b');
    let n = (64 - value.leading_zeros()).clamp(1, width);
    for i in (0..n).rev() {
        out.push(if value >> i & 1 == 1 { b'1' } else { b'0' });
    }
    out.push(b' ');
    out.extend_from_slice(id);
    out.push(b'\n');
}

/// The bits of `value` from its highest set bit down (VCD implies the leading zeros).
fn bits(value: u64, max_width: u32) -> impl Iterator<Item = Bit> {
    let width = (64 - value.leading_zeros()).clamp(1, max_width);
    (0..width).rev().map(move |i| {
        if value >> i & 1 == 1 {
            Bit::V1
        } else {
            Bit::V0
        }
    })
}

fn write_value(
    out: &mut vcd::Writer<Box<dyn Write + Send>>,
    id: IdCode,
    signal: &Signal,
    value: Value,
) -> io::Result<()> {
    match (signal.kind, value) {
        (SignalKind::Bit, Value::Bits(b)) => out.change_scalar(id, b & 1 == 1),
        (SignalKind::Vector(w), Value::Bits(b)) => out.change_vector(id, bits(b, w as u32)),
        (SignalKind::Text, Value::Text(t)) => out.change_string(id, &escape_text(t)),
        (kind, v) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("signal `{}` of kind {kind:?} given {v:?}", signal.path),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test can read afterwards.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn writes_only_changes_in_time_order() {
        let buf = Shared::default();
        let mut t = Tracer::new("chip", 1_500_000_000, TraceFilter::all());
        t.keep_log();
        let busy = t
            .declare("chip.port3.tx_busy", SignalKind::Bit)
            .unwrap()
            .unwrap();
        let depth = t
            .declare("chip.tm.pipe0.port3.q0.depth_cells", SignalKind::Vector(19))
            .unwrap()
            .unwrap();
        let exit = t
            .declare("chip.pipe0.ingress.exit", SignalKind::Text)
            .unwrap()
            .unwrap();
        t.begin(Box::new(buf.clone())).unwrap();
        // A pulse scheduled ahead, overlapping a later one: the later schedule wins at 12.
        t.schedule(11, busy, Value::Bits(1));
        t.schedule(12, busy, Value::Bits(0));
        t.schedule(12, busy, Value::Bits(1));
        t.schedule(13, busy, Value::Bits(0));
        t.schedule(40, busy, Value::Bits(1)); // after the end: never written
        t.set(3, depth, Value::Bits(9));
        t.set(4, depth, Value::Bits(9)); // unchanged: not written
        t.set(5, exit, Value::Text("no route"));
        t.flush_before(12).unwrap();
        assert_eq!(t.log().len(), 3);
        t.finish(20).unwrap();
        let log: Vec<(u64, usize, Value)> = t
            .log()
            .iter()
            .map(|c| (c.cycle, c.signal.index(), c.value))
            .collect();
        assert_eq!(
            log,
            vec![
                (3, 1, Value::Bits(9)),
                (5, 2, Value::Text("no route")),
                (11, 0, Value::Bits(1)),
                (13, 0, Value::Bits(0)),
            ]
        );
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("$timescale 1 ps $end"), "{text}");
        assert!(text.contains("$var string 1"), "{text}");
        assert!(text.contains("sno\\x20route"), "{text}");
        // Cycle 3 is at 2000 ps, cycle 5 at 3333 ps, cycle 11 at 7333 ps.
        assert!(text.contains("\n#2000\n"), "{text}");
        assert!(text.contains("\n#3333\n"), "{text}");
        assert!(text.contains("\n#7333\n"), "{text}");
        assert!(
            !text.contains("\n#8000\n"),
            "cycle 12 has no net change: {text}"
        );
        assert!(
            text.ends_with("#13333\nb10100 !\n"),
            "ends at cycle 20: {text}"
        );
    }

    #[test]
    fn filtered_signals_are_not_traced() {
        let mut t = Tracer::new(
            "chip",
            1_000_000_000,
            TraceFilter::parse("chip.tm.**").unwrap(),
        );
        assert_eq!(t.declare("chip.port0.tx_busy", SignalKind::Bit), Ok(None));
        assert!(t
            .declare("chip.tm.free_cells", SignalKind::Vector(19))
            .unwrap()
            .is_some());
        assert_eq!(t.signals().len(), 1);
    }

    #[test]
    fn rejects_bad_declarations() {
        let mut t = Tracer::new("chip", 1_000_000_000, TraceFilter::all());
        assert_eq!(
            t.declare("chip..x", SignalKind::Bit),
            Err(DeclareError::BadPath("chip..x".into()))
        );
        assert_eq!(
            t.declare("chip.a b", SignalKind::Bit),
            Err(DeclareError::BadPath("chip.a b".into()))
        );
        assert!(matches!(
            t.declare("chip.v", SignalKind::Vector(65)),
            Err(DeclareError::BadWidth { width: 65, .. })
        ));
        t.declare("chip.x", SignalKind::Bit).unwrap();
        assert_eq!(
            t.declare("chip.x", SignalKind::Bit),
            Err(DeclareError::Duplicate("chip.x".into()))
        );
        t.begin(Box::new(io::sink())).unwrap();
        assert_eq!(
            t.declare("chip.y", SignalKind::Bit),
            Err(DeclareError::AfterStart("chip.y".into()))
        );
    }

    #[test]
    fn text_is_escaped_into_one_token() {
        assert_eq!(escape_text("ttl_expired"), "ttl_expired");
        assert_eq!(escape_text("a b\\c"), "a\\x20b\\x5cc");
        assert_eq!(escape_text(""), "\\x00");
        assert_eq!(cycle_to_ps(1, 1_500_000_000), 667);
        assert_eq!(cycle_to_ps(3, 1_500_000_000), 2000);
    }
}
