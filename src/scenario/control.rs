//! Scenario-file keys for the control plane: `[[mirror_session]]`, `[[pktgen]]` and
//! `[[control]]` (operations at a chosen time) tables, given to every switch when the network
//! is built (docs/testbench.md). With a P4 program (`program = "x.p4"`) `[[control]]` names
//! tables, actions, registers and counters as BfRt would (`pipe.Ingress.ipv4_host`,
//! `Ingress.forward`, or the last name when it is unambiguous) and they are translated to
//! the lowered program's objects here (docs/p4.md, Control plane). Errors name the key. Every value is checked when it is
//! read: times through one checked ns-to-cycles conversion bounded by the run's end, a
//! burst's size against a limit, payloads strictly as hex digits within the wire's frame
//! limit, keys an operation does not take refused, and ids given twice refused by name.

use crate::chip::{Chip, ControlOp, MirrorSession, PktgenApp, PktgenTrigger};
use serde::Deserialize;
use std::collections::BTreeMap;
use t2_clock::{Clock, Cycle};
use t2_pipeline::ir::{ActionCall, Entry, KeyValue};
use t2_pipeline::p4::Compiled;
use t2_pipeline::Gress;

/// The keys `[[control]]` has added to each table (IR name), in order: a new key's place
/// after the const entries, for a DirectCounter's entry index.
type Places = BTreeMap<String, Vec<Vec<u64>>>;

/// Packets one pktgen firing may make (`batches x packets_per_batch`): the burst is listed
/// when it fires, so its size is bounded here (2^20 packets, about 40 MB of schedule), well
/// above what a 100 Gb/s port sends in a 10 s run's worth of small bursts.
pub const MAX_PKTGEN_BURST: u64 = 1 << 20;

/// The one conversion from a time in ns a user gave (`key`) to cycles of `clock`, rounded up:
/// a value past `end_ns` (the run's end, flows' duration plus drain) cannot act in the run
/// and is refused, as is one whose cycles do not fit a [`Cycle`].
pub(crate) fn ns_to_cycles_key(
    clock: Clock,
    key: &str,
    ns: u64,
    end_ns: u64,
) -> Result<Cycle, String> {
    if ns > end_ns {
        return Err(format!(
            "{key}: {ns} ns is after the run's end ({end_ns} ns: duration_us + drain_us)"
        ));
    }
    clock
        .checked_ns_to_cycles_ceil(ns)
        .ok_or_else(|| format!("{key}: {ns} ns does not fit a cycle count"))
}

/// Bytes from `hex`, two digits a byte, nothing else (no sign, no spaces inside, ASCII only).
fn parse_hex(key: &str, hex: &str) -> Result<Vec<u8>, String> {
    if let Some((i, c)) = hex.char_indices().find(|(_, c)| !c.is_ascii_hexdigit()) {
        return Err(format!(
            "{key}: {c:?} at byte {i} is not a hex digit (0-9, a-f, A-F)"
        ));
    }
    if !hex.len().is_multiple_of(2) {
        return Err(format!(
            "{key}: {} digits, not a whole number of bytes",
            hex.len()
        ));
    }
    let digit = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
    Ok(hex
        .as_bytes()
        .chunks(2)
        .map(|p| digit(p[0]) << 4 | digit(p[1]))
        .collect())
}

/// `[[control]]`: one operation every switch's control plane makes at `at_ns`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct ControlToml {
    at_ns: u64,
    /// `add_entry`, `modify_entry`, `delete_entry`, `write_register` or `port_down`.
    op: String,
    /// Entries: one pipe (default: every pipe); registers: the pipe (default 0).
    pipe: Option<usize>,
    table: Option<String>,
    /// Key values, and for ternary or lpm tables their masks (one per value).
    #[serde(default)]
    key: Vec<u64>,
    masks: Option<Vec<u64>>,
    action: Option<String>,
    #[serde(default)]
    args: Vec<u64>,
    /// `ingress` (default) or `egress`.
    gress: Option<String>,
    register: Option<String>,
    index: Option<u32>,
    value: Option<u64>,
    port: Option<usize>,
}

impl ControlToml {
    /// Keys given that `op` does not take, by name.
    fn stray_keys(&self) -> Vec<&'static str> {
        let given = [
            ("pipe", self.pipe.is_some()),
            ("table", self.table.is_some()),
            ("key", !self.key.is_empty()),
            ("masks", self.masks.is_some()),
            ("action", self.action.is_some()),
            ("args", !self.args.is_empty()),
            ("gress", self.gress.is_some()),
            ("register", self.register.is_some()),
            ("index", self.index.is_some()),
            ("value", self.value.is_some()),
            ("port", self.port.is_some()),
        ];
        let takes: &[&str] = match self.op.as_str() {
            "add_entry" | "modify_entry" => &["pipe", "table", "key", "masks", "action", "args"],
            "delete_entry" => &["pipe", "table", "key", "masks"],
            "write_register" => &["pipe", "gress", "register", "index", "value"],
            "port_down" => &["port"],
            _ => return Vec::new(),
        };
        given
            .iter()
            .filter(|(k, g)| *g && !takes.contains(k))
            .map(|(k, _)| *k)
            .collect()
    }

    /// The same operation with the P4 names of program `c` translated to its IR objects:
    /// tables, their actions (a DirectCounter's entry index appended to the arguments, the
    /// entry's place from `places`), registers and counters (whose thread is found when
    /// `gress` is not given). Errors name the key and the unknown name.
    fn with_p4_names(&self, c: &Compiled, places: &mut Places) -> Result<ControlToml, String> {
        let mut out = self.clone();
        if let Some(name) = &self.table {
            let list = |names: Vec<&str>| names.join(", ");
            let t = c.table(name).ok_or_else(|| {
                format!(
                    "table: no table `{name}` in the P4 program (its tables: {})",
                    list(c.tables.iter().map(|t| t.p4_name.as_str()).collect())
                )
            })?;
            if self.key.len() != t.keys.len() {
                return Err(format!(
                    "key: table `{}` has {} keys, {} given",
                    t.p4_name,
                    t.keys.len(),
                    self.key.len()
                ));
            }
            // A value wider than its key was refused only when the operation landed, after
            // the whole run.
            for (i, k) in t.keys.iter().enumerate() {
                let limit = if k.bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << k.bits) - 1
                };
                let given = [
                    Some(("key", self.key[i])),
                    self.masks
                        .as_ref()
                        .and_then(|m| m.get(i).map(|&v| ("masks", v))),
                ];
                for (what, v) in given.into_iter().flatten() {
                    if v > limit {
                        return Err(format!(
                            "{what}: {v} is wider than key `{}` of table `{}` ({} bits)",
                            k.name, t.p4_name, k.bits
                        ));
                    }
                }
            }
            out.table = Some(t.ir_name.clone());
            if let Some(a) = &self.action {
                let short = a.rsplit('.').next().unwrap_or(a);
                let Some((_, ir)) = t.actions.iter().find(|x| x.0 == short) else {
                    return Err(format!(
                        "action: table `{}` has no action `{a}` (its actions: {})",
                        t.p4_name,
                        list(t.actions.iter().map(|x| x.0.as_str()).collect())
                    ));
                };
                let base = ir.split('@').next().unwrap_or(ir);
                let params = c
                    .actions
                    .iter()
                    .find(|x| x.ir_name == base)
                    .map_or(0, |x| x.params.len());
                if self.args.len() != params {
                    return Err(format!(
                        "args: action `{a}` takes {params} arguments, {} given",
                        self.args.len()
                    ));
                }
                out.action = Some(ir.clone());
                if c.takes_entry_index(ir) {
                    let ir_table = c.program.tables.iter().find(|x| x.name == t.ir_name);
                    let consts = ir_table.map_or(0, |x| x.entries.len());
                    let keys = places.entry(t.ir_name.clone()).or_default();
                    let place = match keys.iter().position(|k| k == &self.key) {
                        Some(p) => p,
                        None => {
                            keys.push(self.key.clone());
                            keys.len() - 1
                        }
                    };
                    out.args.push((consts + place) as u64);
                }
            }
        }
        if let Some(name) = &self.register {
            let ir = c
                .register(name)
                .or_else(|| c.counter(name).map(|k| k.register.as_str()))
                .ok_or_else(|| {
                    let names: Vec<&str> = c
                        .registers
                        .iter()
                        .map(|r| r.0.as_str())
                        .chain(c.counters.iter().map(|k| k.p4_name.as_str()))
                        .collect();
                    format!(
                        "register: no register or counter `{name}` in the P4 program (its \
                         registers and counters: {})",
                        names.join(", ")
                    )
                })?;
            let runs_in = match c.register_gress(ir) {
                Gress::Ingress => "ingress",
                Gress::Egress => "egress",
            };
            match self.gress.as_deref() {
                None => out.gress = Some(runs_in.to_string()),
                // A write into the other gress's copy was accepted and never read.
                Some(g) if (g == "ingress" || g == "egress") && g != runs_in => {
                    return Err(format!(
                        "gress: register `{name}` is used in {runs_in} (its RegisterActions run \
                         there), so a write in {g} would reach a copy nothing reads"
                    ))
                }
                Some(_) => {}
            }
            out.register = Some(ir.to_string());
        }
        Ok(out)
    }

    /// The operation and its cycle, or the problem.
    fn op(&self, clock: Clock, end_ns: u64) -> Result<(Cycle, ControlOp), String> {
        if let Some(k) = self.stray_keys().first() {
            return Err(format!("{k}: op `{}` does not take it", self.op));
        }
        let need = |v: Option<&dyn std::fmt::Debug>, name: &str| match v {
            Some(_) => Ok(()),
            None => Err(format!("{name}: op `{}` needs it", self.op)),
        };
        let key = || -> Result<Vec<KeyValue>, String> {
            match &self.masks {
                None => Ok(self
                    .key
                    .iter()
                    .map(|&value| KeyValue { value, mask: None })
                    .collect()),
                Some(m) if m.len() == self.key.len() => Ok(self
                    .key
                    .iter()
                    .zip(m)
                    .map(|(&value, &mask)| KeyValue {
                        value,
                        mask: Some(mask),
                    })
                    .collect()),
                Some(m) => Err(format!(
                    "masks: {} masks for {} key values",
                    m.len(),
                    self.key.len()
                )),
            }
        };
        let entry = || -> Result<Entry, String> {
            let action = self
                .action
                .as_ref()
                .ok_or_else(|| format!("action: op `{}` needs it", self.op))?;
            Ok(Entry {
                key: key()?,
                action: ActionCall::new(action, &self.args),
                members: Vec::new(),
            })
        };
        let table = || -> Result<String, String> {
            need(self.table.as_ref().map(|t| t as _), "table")?;
            Ok(self.table.clone().unwrap_or_default())
        };
        let op = match self.op.as_str() {
            "add_entry" => ControlOp::AddEntry {
                pipe: self.pipe,
                table: table()?,
                entry: entry()?,
            },
            "modify_entry" => ControlOp::ModifyEntry {
                pipe: self.pipe,
                table: table()?,
                entry: entry()?,
            },
            "delete_entry" => ControlOp::DeleteEntry {
                pipe: self.pipe,
                table: table()?,
                key: key()?,
            },
            "write_register" => {
                need(self.register.as_ref().map(|r| r as _), "register")?;
                need(self.index.as_ref().map(|i| i as _), "index")?;
                need(self.value.as_ref().map(|v| v as _), "value")?;
                let gress = match self.gress.as_deref() {
                    None | Some("ingress") => Gress::Ingress,
                    Some("egress") => Gress::Egress,
                    Some(g) => {
                        return Err(format!("gress: `{g}` is not `ingress` or `egress`"))
                    }
                };
                ControlOp::WriteRegister {
                    pipe: self.pipe.unwrap_or(0),
                    gress,
                    register: self.register.clone().unwrap_or_default(),
                    index: self.index.unwrap_or(0),
                    value: self.value.unwrap_or(0),
                }
            }
            "port_down" => {
                need(self.port.as_ref().map(|p| p as _), "port")?;
                ControlOp::PortDown {
                    port: self.port.unwrap_or(0),
                }
            }
            other => {
                return Err(format!(
                    "op: `{other}` is not add_entry, modify_entry, delete_entry, write_register or port_down"
                ))
            }
        };
        Ok((ns_to_cycles_key(clock, "at_ns", self.at_ns, end_ns)?, op))
    }
}

/// `[[mirror_session]]`: a mirror session every switch has.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct MirrorSessionToml {
    id: u8,
    /// A port index of the switch (front-panel ports, then recirculation ports).
    port: usize,
    #[serde(default)]
    qid: u8,
    truncate_bytes: Option<u32>,
}

/// `[[pktgen]]`: a packet-generator application every switch runs: a one-shot timer
/// (`at_ns`), a periodic one (`period_ns`, from `start_ns`) or a port going down
/// (`port_down`, a port index), `payload_hex` after the pktgen header.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct PktgenToml {
    pipe: usize,
    app: usize,
    at_ns: Option<u64>,
    period_ns: Option<u64>,
    port_down: Option<usize>,
    start_ns: Option<u64>,
    #[serde(default = "one")]
    batches: u16,
    #[serde(default = "one")]
    packets_per_batch: u16,
    #[serde(default)]
    packet_gap_ns: u64,
    #[serde(default)]
    batch_gap_ns: u64,
    payload_hex: String,
}

fn one() -> u16 {
    1
}

/// The control-plane set-up of a scenario, checked as far as it can be without a chip.
#[derive(Clone, Debug, Default)]
pub struct ControlSetup {
    pub mirror_sessions: Vec<(u8, MirrorSession)>,
    /// (pipe, application, configuration).
    pub pktgen: Vec<(usize, usize, PktgenApp)>,
    /// Operations at a cycle.
    pub ops: Vec<(Cycle, ControlOp)>,
}

impl ControlSetup {
    /// The set-up the keys describe; times in ns rounded up to cycles of `clock`, none after
    /// `end_ns` (the run's end). Errors name the key (`pktgen[k].at_ns: ...`).
    pub(crate) fn new(
        sessions: &[MirrorSessionToml],
        apps: &[PktgenToml],
        control: &[ControlToml],
        p4: Option<&Compiled>,
        clock: Clock,
        end_ns: u64,
    ) -> Result<ControlSetup, String> {
        let mut places = Places::new();
        let ops = control
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let named = match p4 {
                    Some(p) => c.with_p4_names(p, &mut places),
                    None => Ok(c.clone()),
                };
                named
                    .and_then(|c| c.op(clock, end_ns))
                    .map_err(|e| format!("control[{k}].{e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut mirror_sessions: Vec<(u8, MirrorSession)> = Vec::new();
        for (k, s) in sessions.iter().enumerate() {
            if let Some(j) = mirror_sessions.iter().position(|(id, _)| *id == s.id) {
                return Err(format!(
                    "mirror_session[{k}].id: session {} is already mirror_session[{j}]",
                    s.id
                ));
            }
            if s.truncate_bytes.is_some_and(|t| t < 60) {
                return Err(format!(
                    "mirror_session[{k}].truncate_bytes: {} is below the 60-byte minimum frame",
                    s.truncate_bytes.unwrap_or(0)
                ));
            }
            mirror_sessions.push((
                s.id,
                MirrorSession {
                    port: s.port,
                    qid: s.qid,
                    truncate_bytes: s.truncate_bytes,
                },
            ));
        }
        let mut pktgen: Vec<(usize, usize, PktgenApp)> = Vec::new();
        for (k, a) in apps.iter().enumerate() {
            let key = |name: &str| format!("pktgen[{k}].{name}");
            let cycles = |name: &str, ns| ns_to_cycles_key(clock, &key(name), ns, end_ns);
            if let Some(j) = pktgen
                .iter()
                .position(|(p, x, _)| (*p, *x) == (a.pipe, a.app))
            {
                return Err(format!(
                    "{}: pipe {} application {} is already pktgen[{j}]",
                    key("app"),
                    a.pipe,
                    a.app
                ));
            }
            if a.app >= crate::chip::PKTGEN_APPLICATIONS {
                return Err(format!(
                    "{}: {} is not an application (a pipe has 0..={})",
                    key("app"),
                    a.app,
                    crate::chip::PKTGEN_APPLICATIONS - 1
                ));
            }
            if a.start_ns.is_some() && a.period_ns.is_none() {
                return Err(format!(
                    "{}: only a periodic timer (period_ns) has a start",
                    key("start_ns")
                ));
            }
            let trigger = match (a.at_ns, a.period_ns, a.port_down) {
                (Some(at), None, None) => PktgenTrigger::OneShot {
                    at: cycles("at_ns", at)?,
                },
                (None, Some(period), None) => {
                    let period = cycles("period_ns", period)?;
                    if period == 0 {
                        return Err(format!("{}: must be above 0", key("period_ns")));
                    }
                    PktgenTrigger::Periodic {
                        start: cycles("start_ns", a.start_ns.unwrap_or(0))?,
                        period,
                    }
                }
                (None, None, Some(port)) => PktgenTrigger::PortDown { port },
                _ => {
                    return Err(format!(
                        "pktgen[{k}]: give exactly one of at_ns (one-shot), period_ns and port_down"
                    ))
                }
            };
            let burst = a.batches as u64 * a.packets_per_batch as u64;
            if burst > MAX_PKTGEN_BURST {
                return Err(format!(
                    "{}: {} batches of {} packets is {burst} packets a firing; at most \
                     {MAX_PKTGEN_BURST}",
                    key("packets_per_batch"),
                    a.batches,
                    a.packets_per_batch
                ));
            }
            let payload = parse_hex(&key("payload_hex"), a.payload_hex.trim())?;
            let max = crate::capture::MAX_FRAME_BYTES - crate::chip::PKTGEN_HEADER_BYTES;
            if payload.len() > max {
                return Err(format!(
                    "{}: {} bytes; with the {}-byte pktgen header a frame carries at most {max} \
                     (9216 B on the wire with the FCS)",
                    key("payload_hex"),
                    payload.len(),
                    crate::chip::PKTGEN_HEADER_BYTES
                ));
            }
            pktgen.push((
                a.pipe,
                a.app,
                PktgenApp {
                    trigger,
                    batches: a.batches,
                    packets_per_batch: a.packets_per_batch,
                    packet_gap: cycles("packet_gap_ns", a.packet_gap_ns)?,
                    batch_gap: cycles("batch_gap_ns", a.batch_gap_ns)?,
                    payload,
                },
            ));
        }
        Ok(ControlSetup {
            mirror_sessions,
            pktgen,
            ops,
        })
    }

    /// Gives `chip` the sessions and applications (before the run). A session or an
    /// application the chip already has (a scheme's own) is refused, not replaced, and a
    /// session's queue must be one of its port's.
    pub fn apply(&self, chip: &mut Chip) -> Result<(), String> {
        for (k, (id, s)) in self.mirror_sessions.iter().enumerate() {
            if chip.mirror_session(*id).is_some() {
                return Err(format!(
                    "mirror_session[{k}].id: session {id} is the scheme's own (pick another id)"
                ));
            }
            let ports = t2_testbench::Node::port_count(chip);
            if s.port < ports {
                let queues = chip.tm().queue_count(s.port);
                if s.qid as usize >= queues {
                    return Err(format!(
                        "mirror_session[{k}].qid: {} is not a queue of port {} (0..={})",
                        s.qid,
                        s.port,
                        queues - 1
                    ));
                }
            }
            chip.set_mirror_session(*id, Some(*s))
                .map_err(|e| format!("mirror_session[{k}]: {e}"))?;
        }
        for (k, (pipe, app, a)) in self.pktgen.iter().enumerate() {
            if chip.pktgen_app(*pipe, *app).is_some() {
                return Err(format!(
                    "pktgen[{k}].app: pipe {pipe} application {app} is the scheme's own (pick \
                     another app)"
                ));
            }
            chip.set_pktgen_app(0, *pipe, *app, Some(a.clone()))
                .map_err(|e| format!("pktgen[{k}]: {e}"))?;
        }
        for (k, (at, op)) in self.ops.iter().enumerate() {
            chip.schedule(*at, op.clone())
                .map_err(|e| format!("control[{k}]: {e}"))?;
        }
        Ok(())
    }
}
