//! The chip's signals for waveforms: what they are called, and how their values are taken
//! from the model.
//!
//! Two kinds of signal:
//! - *state* (queue depth, a MAC busy, a FIFO's fill, free cells): read from the model after
//!   every tick of the chip and written when it changes;
//! - *pulses* (a packet at stage k, a packet leaving a deparser): known when the packet enters
//!   the gress, so they are scheduled then for the exact cycles, and are right even when the
//!   kernel jumps over those cycles.
//!
//! Signal names (see `docs/waves.md`):
//! `chip.cycle`, `chip.drops`, `chip.recirculated`,
//! `chip.port<d>.{rx_pkt,rx_fifo,tx_pkt,tx_busy}` (`d` the device port),
//! `chip.recirc.pipe<p>.{tx_busy,rx_fifo}`,
//! `chip.pipe<p>.{ingress,egress}.{occupancy,exit}`,
//! `chip.pipe<p>.{ingress,egress}.stage<kk>.{valid,pkt_id}`,
//! `chip.tm.free_cells`, `chip.tm.pool<p>.used_cells`,
//! `chip.tm.pipe<p>.port<d>.depth_cells`,
//! `chip.tm.pipe<p>.port<d>.q<q>.{depth_cells,paused,pfc_paused}` (`paused` by AFC,
//! `pfc_paused` held by a received PFC frame for the queue's class) (and `chip.tm.pipe<p>.recirc...` for the recirculation port),
//! `chip.ghost.pipe<p>.{valid,updates,qid,qlength,ping_pong}` (TM pipe `p`'s queue-depth
//! updates reaching the ingress pipes), `chip.pipe<p>.reg.<array>.sum` (the sum of an ingress
//! register array's cells in pipe `p`: a counter array's total, or the value of the one
//! cell in use). Queues are declared as they are when tracing starts.
//!
//! Packets are numbered 1, 2, 3 ... as their frames arrive (0 means "no packet"), and every
//! packet-number signal returns to 0 when the packet has passed, so back-to-back packets show
//! as separate values and a quiet line as 0.

use std::io;
use t2_clock::Cycle;
use t2_pipeline::GhostWord;
use t2_waves::gtkw::{self, Display, Group, Trace};
use t2_waves::{DeclareError, Signal, SignalId, SignalKind, TraceFilter, Tracer, Value};

/// What `--vcd` traces when no `--trace` is given: ports, the TM, and per gress the
/// occupancy and the fate of each packet. Per-stage signals are opt-in (`--trace`).
pub const DEFAULT_TRACE: &str = "chip.drops,chip.recirculated,chip.port*.**,chip.recirc.**,\
    chip.tm.free_cells,chip.tm.pipe*.*.depth_cells,chip.pipe*.*.occupancy,chip.pipe*.*.exit";

/// Signals of one gress of one pipe.
pub(crate) struct GressSignals {
    pub occupancy: Option<SignalId>,
    pub exit: Option<SignalId>,
    /// Per stage: valid, pkt_id.
    pub stages: Vec<(Option<SignalId>, Option<SignalId>)>,
}

pub(crate) struct PortSignals {
    /// The number of the packet whose frame arrived in this cycle (0 otherwise).
    pub rx_pkt: Option<SignalId>,
    /// The number of the packet being serialized (0 between frames).
    pub tx_pkt: Option<SignalId>,
    pub tx_busy: Option<SignalId>,
    pub rx_fifo: Option<SignalId>,
    /// Cells queued for the port, all queues.
    pub depth_cells: Option<SignalId>,
    /// Per queue: depth in cells, paused (AFC), held by PFC.
    pub queues: Vec<QueueSignals>,
    /// Whether any queue signal is traced (so untraced queues cost nothing).
    pub any_queue: bool,
}

/// Signals of one queue.
pub(crate) struct QueueSignals {
    pub depth_cells: Option<SignalId>,
    /// Paused by AFC.
    pub paused: Option<SignalId>,
    /// Held by a received PFC frame: rises in the cycle the frame takes effect, falls in
    /// the cycle its quanta run out or an XON takes effect.
    pub pfc_paused: Option<SignalId>,
}

/// Signals of one TM pipe's ghost updates, pulses in the cycle they reach the ingress pipes.
pub(crate) struct GhostSignals {
    pub valid: Option<SignalId>,
    /// How many arrived in the cycle (more than one with `ghost_updates_per_cycle` > 1).
    pub updates: Option<SignalId>,
    /// The last of them (in delivery order); held until the next.
    pub qid: Option<SignalId>,
    pub qlength: Option<SignalId>,
    pub ping_pong: Option<SignalId>,
}

impl GhostSignals {
    fn any(&self) -> bool {
        [
            self.valid,
            self.updates,
            self.qid,
            self.qlength,
            self.ping_pong,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// The chip's tracer and the ids of its traced signals.
pub struct ChipTrace {
    pub(crate) tracer: Tracer,
    pub(crate) drops: Option<SignalId>,
    pub(crate) recirculated: Option<SignalId>,
    pub(crate) free_cells: Option<SignalId>,
    /// Cells charged to each application pool.
    pub(crate) pools: Vec<Option<SignalId>>,
    pub(crate) ports: Vec<PortSignals>,
    /// `[pipe][0 = ingress, 1 = egress]`.
    pub(crate) gresses: Vec<[GressSignals; 2]>,
    /// Per TM pipe.
    pub(crate) ghost: Vec<GhostSignals>,
    /// `[pipe][register array]`: the sum of the array's cells in the pipe's ingress.
    pub(crate) register_sums: Vec<Vec<Option<SignalId>>>,
    /// Chip-local packet number by packet handle, assigned when a frame arrives.
    pub(crate) serial: Vec<u32>,
    pub(crate) next_serial: u32,
    /// The first write error; tracing stops there and `finish` reports it.
    pub(crate) error: Option<io::Error>,
}

/// The layout the trace needs to name signals.
pub(crate) struct TraceLayout {
    pub clock_hz: u64,
    pub pipes: usize,
    pub stages: usize,
    /// Each port's pipe, whether it is a recirculation port, its number of queues and its
    /// device port.
    pub ports: Vec<(usize, bool, usize, u16)>,
    pub buffer_cells: u32,
    pub rx_fifo_frames: u32,
    /// The names of the ingress program's register arrays, in the program's order.
    pub registers: Vec<String>,
}

fn width_for(max: u64) -> u8 {
    (64 - max.leading_zeros()).max(1) as u8
}

impl ChipTrace {
    pub(crate) fn new(
        layout: &TraceLayout,
        filter: TraceFilter,
    ) -> Result<ChipTrace, DeclareError> {
        let mut t = Tracer::new("chip", layout.clock_hz, filter);
        let cells = SignalKind::Vector(width_for(layout.buffer_cells as u64));
        let drops = t.declare("chip.drops", SignalKind::Vector(32))?;
        let recirculated = t.declare("chip.recirculated", SignalKind::Vector(32))?;
        let free_cells = t.declare("chip.tm.free_cells", cells)?;
        let pools = (0..t2_tm::APP_POOLS)
            .map(|p| t.declare(&format!("chip.tm.pool{p}.used_cells"), cells))
            .collect::<Result<_, DeclareError>>()?;
        let fifo = SignalKind::Vector(width_for(layout.rx_fifo_frames as u64));
        let mut ports = Vec::new();
        for &(pipe, recirc, queues, dev) in &layout.ports {
            let (mac, tm) = if recirc {
                (
                    format!("chip.recirc.pipe{pipe}"),
                    format!("chip.tm.pipe{pipe}.recirc"),
                )
            } else {
                (
                    format!("chip.port{dev}"),
                    format!("chip.tm.pipe{pipe}.port{dev}"),
                )
            };
            let queues = (0..queues)
                .map(|q| {
                    Ok(QueueSignals {
                        depth_cells: t.declare(&format!("{tm}.q{q}.depth_cells"), cells)?,
                        paused: t.declare(&format!("{tm}.q{q}.paused"), SignalKind::Bit)?,
                        pfc_paused: t.declare(&format!("{tm}.q{q}.pfc_paused"), SignalKind::Bit)?,
                    })
                })
                .collect::<Result<Vec<_>, DeclareError>>()?;
            let pkt = SignalKind::Vector(32);
            let front = |t: &mut Tracer, leaf: &str| match recirc {
                true => Ok(None),
                false => t.declare(&format!("{mac}.{leaf}"), pkt),
            };
            ports.push(PortSignals {
                rx_pkt: front(&mut t, "rx_pkt")?,
                tx_pkt: front(&mut t, "tx_pkt")?,
                tx_busy: t.declare(&format!("{mac}.tx_busy"), SignalKind::Bit)?,
                rx_fifo: t.declare(&format!("{mac}.rx_fifo"), fifo)?,
                depth_cells: t.declare(&format!("{tm}.depth_cells"), cells)?,
                any_queue: queues.iter().any(|q| {
                    q.depth_cells.is_some() || q.paused.is_some() || q.pfc_paused.is_some()
                }),
                queues,
            });
        }
        let mut gresses = Vec::new();
        for p in 0..layout.pipes {
            let mut gress = |name: &str| -> Result<GressSignals, DeclareError> {
                let base = format!("chip.pipe{p}.{name}");
                Ok(GressSignals {
                    occupancy: t.declare(&format!("{base}.occupancy"), SignalKind::Vector(16))?,
                    exit: t.declare(&format!("{base}.exit"), SignalKind::Text)?,
                    stages: (0..layout.stages)
                        .map(|k| {
                            Ok((
                                t.declare(&format!("{base}.stage{k:02}.valid"), SignalKind::Bit)?,
                                t.declare(
                                    &format!("{base}.stage{k:02}.pkt_id"),
                                    SignalKind::Vector(32),
                                )?,
                            ))
                        })
                        .collect::<Result<_, DeclareError>>()?,
                })
            };
            gresses.push([gress("ingress")?, gress("egress")?]);
        }
        let ghost = (0..layout.pipes)
            .map(|p| {
                let base = format!("chip.ghost.pipe{p}");
                Ok(GhostSignals {
                    valid: t.declare(&format!("{base}.valid"), SignalKind::Bit)?,
                    updates: t.declare(&format!("{base}.updates"), SignalKind::Vector(8))?,
                    qid: t.declare(&format!("{base}.qid"), SignalKind::Vector(11))?,
                    qlength: t.declare(&format!("{base}.qlength"), SignalKind::Vector(18))?,
                    ping_pong: t.declare(&format!("{base}.ping_pong"), SignalKind::Bit)?,
                })
            })
            .collect::<Result<_, DeclareError>>()?;
        let register_sums = (0..layout.pipes)
            .map(|p| {
                layout
                    .registers
                    .iter()
                    .map(|r| {
                        t.declare(&format!("chip.pipe{p}.reg.{r}.sum"), SignalKind::Vector(64))
                    })
                    .collect::<Result<_, DeclareError>>()
            })
            .collect::<Result<_, DeclareError>>()?;
        Ok(ChipTrace {
            tracer: t,
            register_sums,
            drops,
            recirculated,
            free_cells,
            pools,
            ports,
            gresses,
            ghost,
            serial: Vec::new(),
            next_serial: 1,
            error: None,
        })
    }

    /// Starts writing the dump to `out`.
    pub(crate) fn begin(&mut self, out: Box<dyn io::Write + Send>) -> io::Result<()> {
        self.tracer.begin(out)
    }

    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    pub fn tracer_mut(&mut self) -> &mut Tracer {
        &mut self.tracer
    }

    /// Gives a packet the chip made itself (a generated packet) the next number; returns it.
    pub(crate) fn number(&mut self, handle: u32) -> u32 {
        let i = handle as usize;
        if self.serial.len() <= i {
            self.serial.resize(i + 1, 0);
        }
        let n = self.next_serial;
        self.serial[i] = n;
        // 0 means "no packet": skip it when the count wraps.
        self.next_serial = self.next_serial.checked_add(1).unwrap_or(1);
        n
    }

    /// Numbers a packet whose frame arrived on port `port` (an index) in cycle `now`, and
    /// marks the arrival on the port for that cycle.
    pub(crate) fn arrived(&mut self, now: Cycle, port: usize, handle: u32) {
        let n = self.number(handle);
        if let Some(id) = self.ports.get(port).and_then(|p| p.rx_pkt) {
            self.tracer.schedule(now, id, Value::Bits(n as u64));
            self.tracer.schedule(now + 1, id, Value::Bits(0));
        }
    }

    /// Forgets the number of a packet that left the chip or was dropped, so that a frame the
    /// chip makes later in the same pool slot (a PFC frame, a mirror copy) never shows it.
    pub(crate) fn forget(&mut self, handle: u32) {
        if let Some(n) = self.serial.get_mut(handle as usize) {
            *n = 0;
        }
    }

    pub(crate) fn serial_of(&self, handle: u32) -> u32 {
        serial_in(&self.serial, handle)
    }

    /// Schedules the stage pulses of a packet that entered a gress at `now`.
    pub(crate) fn entered(
        &mut self,
        pipe: usize,
        gress: usize,
        now: Cycle,
        offsets: &[Cycle],
        handle: u32,
    ) {
        let id = self.serial_of(handle) as u64;
        let stages = &self.gresses[pipe][gress].stages;
        for (k, &(valid, pkt_id)) in stages.iter().enumerate() {
            let at = now + offsets[k];
            if let Some(v) = valid {
                self.tracer.schedule(at, v, Value::Bits(1));
                self.tracer.schedule(at + 1, v, Value::Bits(0));
            }
            if let Some(p) = pkt_id {
                // A packet entering one cycle later is scheduled later and wins at `at + 1`.
                self.tracer.schedule(at, p, Value::Bits(id));
                self.tracer.schedule(at + 1, p, Value::Bits(0));
            }
        }
    }

    /// Marks a packet leaving a gress at `now` with its fate, for one cycle.
    pub(crate) fn exited(&mut self, pipe: usize, gress: usize, now: Cycle, fate: &'static str) {
        if let Some(e) = self.gresses[pipe][gress].exit {
            self.tracer.schedule(now, e, Value::Text(fate));
            self.tracer.schedule(now + 1, e, Value::Text("-"));
        }
    }

    /// Whether any queue's PFC hold is traced (the chip then visits every cycle a hold ends).
    pub(crate) fn traces_pfc_holds(&self) -> bool {
        self.ports
            .iter()
            .flat_map(|p| &p.queues)
            .any(|q| q.pfc_paused.is_some())
    }

    /// Whether any ghost signal is traced (the chip then visits every delivery cycle).
    pub(crate) fn traces_ghost(&self) -> bool {
        self.ghost.iter().any(GhostSignals::any)
    }

    /// Marks the ghost updates that reach the ingress pipes in cycle `now`, in delivery order.
    pub(crate) fn ghost(&mut self, now: Cycle, words: &[GhostWord]) {
        for (p, sig) in self.ghost.iter().enumerate() {
            let mine = || words.iter().filter(|w| w.pipe_id as usize == p);
            let Some(last) = mine().next_back() else {
                continue;
            };
            let pulses = [(sig.valid, 1), (sig.updates, mine().count() as u64)];
            for (id, v) in pulses {
                if let Some(id) = id {
                    self.tracer.schedule(now, id, Value::Bits(v));
                    self.tracer.schedule(now + 1, id, Value::Bits(0));
                }
            }
            let held = [
                (sig.qid, last.qid as u64),
                (sig.qlength, last.qlength as u64),
                (sig.ping_pong, last.ping_pong as u64),
            ];
            for (id, v) in held {
                if let Some(id) = id {
                    self.tracer.schedule(now, id, Value::Bits(v));
                }
            }
        }
    }

    /// Records a write error and stops tracing.
    pub(crate) fn fail(&mut self, e: io::Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }
}

/// The number of the packet with handle `handle` (0 if it was never numbered).
pub(crate) fn serial_in(serial: &[u32], handle: u32) -> u32 {
    serial.get(handle as usize).copied().unwrap_or(0)
}

/// Where a signal goes in the save file: (section in data-flow order, group title).
fn placement(path: &str) -> (u8, String) {
    let rest = path.strip_prefix("chip.").unwrap_or(path);
    let (scope, leaf) = rest.rsplit_once('.').unwrap_or(("", rest));
    let port_side = |scope: &str, side: &str| format!("{scope}.{side}");
    if scope.is_empty() {
        return (0, "chip".into());
    }
    if scope.starts_with("port") || scope.starts_with("recirc.") {
        return match leaf {
            "rx_pkt" | "rx_fifo" => (1, port_side(scope, "rx")),
            _ => (6, port_side(scope, "tx")),
        };
    }
    if let Some(pipe) = scope.strip_prefix("pipe") {
        let section = if pipe.contains(".egress") { 5 } else { 2 };
        return (section, scope.into());
    }
    if scope.starts_with("tm") {
        // Totals in one group (free cells, pools, each port's depth); each queue its own.
        let queue = scope.rsplit('.').next().is_some_and(|s| {
            s.len() > 1 && s.starts_with('q') && s[1..].bytes().all(|b| b.is_ascii_digit())
        });
        return (3, if queue { scope.into() } else { "tm".into() });
    }
    if scope.starts_with("ghost") {
        return (4, scope.into());
    }
    (7, scope.into())
}

/// Order of the leaves inside a group: a packet's arrival, its progress, then state.
const LEAF_ORDER: &[&str] = &[
    "drops",
    "recirculated",
    "rx_pkt",
    "rx_fifo",
    "exit",
    "occupancy",
    "valid",
    "pkt_id",
    "free_cells",
    "used_cells",
    "depth_cells",
    "paused",
    "pfc_paused",
    "updates",
    "qid",
    "qlength",
    "ping_pong",
    "tx_pkt",
    "tx_busy",
];

/// A sort key that orders the numbers inside a name by value (`port8` before `port16`).
fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = c.to_digit(10).unwrap_or(0) as u64;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(d as u64);
                chars.next();
            }
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    out.push((text, u64::MAX));
    out
}

/// How the save file shows a signal: occupancies as analog steps, other numbers in decimal,
/// bits in binary.
fn display_of(s: &Signal) -> Display {
    let leaf = s.path.rsplit('.').next().unwrap_or("");
    match s.kind {
        SignalKind::Bit => Display::Binary,
        SignalKind::Vector(_) if matches!(leaf, "depth_cells" | "free_cells" | "used_cells") => {
            Display::Analog
        }
        SignalKind::Vector(_) | SignalKind::Text => Display::Decimal,
    }
}

/// A signal with its place in the save file: (section, group, leaf rank, path) and group title.
struct Placed<'a> {
    key: (u8, NaturalKey, usize, NaturalKey),
    title: String,
    signal: &'a Signal,
}

type NaturalKey = Vec<(String, u64)>;

/// A group the save file shows before the data-flow groups, holding the signals its patterns
/// select in the order the patterns are given: how a scenario tells a scheme's story in a
/// waveform (`[[output.wave_group]]`, docs/waves.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveGroup {
    pub title: String,
    /// One pattern each, as `--trace` takes them.
    pub patterns: Vec<TraceFilter>,
}

/// The save file's traces for the chip's signals: the cycle counter on top, then the `story`
/// groups in their order, then the signals no story group took, grouped in the order the data
/// flows: totals (`chip`), ports in (`port<d>.rx`), ingress (`pipe<p>.ingress`, then its
/// stages), the TM (`tm`: free cells, pools and each port's depth; then one group per queue),
/// ghost updates, egress, ports out (`port<d>.tx`). A story group that selects no traced
/// signal is an error naming it.
pub fn save_file_groups(
    signals: &[Signal],
    story: &[WaveGroup],
) -> Result<(Vec<Trace>, Vec<Group>), String> {
    let mut placed: Vec<Placed> = signals
        .iter()
        .map(|s| {
            let (section, title) = placement(&s.path);
            let leaf = s.path.rsplit('.').next().unwrap_or("");
            let rank = LEAF_ORDER
                .iter()
                .position(|l| *l == leaf)
                .unwrap_or(LEAF_ORDER.len());
            Placed {
                key: (section, natural_key(&title), rank, natural_key(&s.path)),
                title,
                signal: s,
            }
        })
        .collect();
    placed.sort_by(|a, b| a.key.cmp(&b.key));
    let mut taken = vec![false; placed.len()];
    let mut groups: Vec<Group> = Vec::new();
    for group in story {
        let mut traces = Vec::new();
        for pattern in &group.patterns {
            for (i, p) in placed.iter().enumerate() {
                if !taken[i] && pattern.selects(&p.signal.path) {
                    taken[i] = true;
                    // Story groups mix scopes: name each trace by its whole path.
                    let inner = p
                        .signal
                        .path
                        .strip_prefix("chip.")
                        .unwrap_or(&p.signal.path);
                    traces.push(Trace {
                        name: gtkw::gtkwave_name(p.signal),
                        display: display_of(p.signal),
                        alias: Some(inner.replace('.', "_")),
                    });
                }
            }
        }
        if traces.is_empty() {
            return Err(format!(
                "output.wave_group: group `{}`: no traced signal matches its patterns",
                group.title
            ));
        }
        // A pattern that names no traced signal is a typo, not a choice: say so.
        if let Some(k) = group
            .patterns
            .iter()
            .position(|f| !placed.iter().any(|p| f.selects(&p.signal.path)))
        {
            return Err(format!(
                "output.wave_group: group `{}`: signals[{k}] matches no traced signal",
                group.title
            ));
        }
        groups.push(Group {
            title: group.title.clone(),
            traces,
        });
    }
    let story_groups = groups.len();
    for (
        Placed {
            title, signal: s, ..
        },
        _,
    ) in placed.into_iter().zip(taken).filter(|(_, taken)| !taken)
    {
        // The TM totals come from many scopes: name each by its path inside the TM.
        let alias = (title == "tm").then(|| {
            let inner = s.path.strip_prefix("chip.tm.").unwrap_or(&s.path);
            inner.replace('.', "_")
        });
        let trace = Trace {
            name: gtkw::gtkwave_name(s),
            display: display_of(s),
            alias,
        };
        let open_group = groups.len() > story_groups;
        match groups.last_mut() {
            Some(g) if open_group && g.title == title => g.traces.push(trace),
            _ => groups.push(Group {
                title,
                traces: vec![trace],
            }),
        }
    }
    let top = vec![Trace {
        name: gtkw::cycle_name("chip"),
        display: Display::Decimal,
        alias: None,
    }];
    Ok((top, groups))
}

/// Writes the GTKWave save file for a dump of the chip at `dump` with `signals` traced, ending
/// at `end_ps`.
pub fn write_save_file(
    out: &mut impl io::Write,
    dump: &std::path::Path,
    signals: &[Signal],
    story: &[WaveGroup],
    end_ps: u64,
) -> io::Result<()> {
    let (top, groups) = save_file_groups(signals, story)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    gtkw::write_save_file(out, dump, "chip", &top, &groups, end_ps)
}
