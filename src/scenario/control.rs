//! Scenario-file keys for the control plane: `[[mirror_session]]`, `[[pktgen]]` and
//! `[[control]]` (operations at a chosen time) tables, given to every switch when the network
//! is built (docs/testbench.md). Errors name the key.

use crate::chip::{Chip, ControlOp, MirrorSession, PktgenApp, PktgenTrigger};
use serde::Deserialize;
use t2_clock::{Clock, Cycle};
use t2_pipeline::ir::{ActionCall, Entry, KeyValue};
use t2_pipeline::Gress;

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
    /// The operation and its cycle, or the problem.
    fn op(&self, clock: Clock) -> Result<(Cycle, ControlOp), String> {
        let need = |v: Option<&dyn std::fmt::Debug>, name: &str| match v {
            Some(_) => Ok(()),
            None => Err(format!("op `{}` needs `{name}`", self.op)),
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
                    "{} masks for {} key values",
                    m.len(),
                    self.key.len()
                )),
            }
        };
        let entry = || -> Result<Entry, String> {
            let action = self
                .action
                .as_ref()
                .ok_or_else(|| format!("op `{}` needs `action`", self.op))?;
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
                    Some(g) => return Err(format!("gress `{g}` is not `ingress` or `egress`")),
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
                    "op `{other}` is not add_entry, modify_entry, delete_entry, write_register or port_down"
                ))
            }
        };
        Ok((clock.ns_to_cycles_ceil(self.at_ns), op))
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
    #[serde(default)]
    start_ns: u64,
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
    /// The set-up the keys describe; times in ns rounded up to cycles of `clock`.
    pub(crate) fn new(
        sessions: &[MirrorSessionToml],
        apps: &[PktgenToml],
        control: &[ControlToml],
        clock: Clock,
    ) -> Result<ControlSetup, String> {
        let ops = control
            .iter()
            .enumerate()
            .map(|(k, c)| c.op(clock).map_err(|e| format!("control[{k}]: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mirror_sessions = sessions
            .iter()
            .map(|s| {
                (
                    s.id,
                    MirrorSession {
                        port: s.port,
                        qid: s.qid,
                        truncate_bytes: s.truncate_bytes,
                    },
                )
            })
            .collect();
        let mut pktgen = Vec::new();
        for (k, a) in apps.iter().enumerate() {
            let bad = |problem: String| Err(format!("pktgen[{k}]: {problem}"));
            let cycles = |ns| clock.ns_to_cycles_ceil(ns);
            let trigger = match (a.at_ns, a.period_ns, a.port_down) {
                (Some(at), None, None) => PktgenTrigger::OneShot { at: cycles(at) },
                (None, Some(period), None) => PktgenTrigger::Periodic {
                    start: cycles(a.start_ns),
                    period: cycles(period),
                },
                (None, None, Some(port)) => PktgenTrigger::PortDown { port },
                _ => {
                    return bad(
                        "give exactly one of at_ns (one-shot), period_ns and port_down".into(),
                    )
                }
            };
            let hex = a.payload_hex.trim();
            if hex.len() % 2 != 0 {
                return bad(format!(
                    "payload_hex has {} digits, not a whole number of bytes",
                    hex.len()
                ));
            }
            let payload = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|e| format!("pktgen[{k}]: payload_hex: {e}"))?;
            pktgen.push((
                a.pipe,
                a.app,
                PktgenApp {
                    trigger,
                    batches: a.batches,
                    packets_per_batch: a.packets_per_batch,
                    packet_gap: cycles(a.packet_gap_ns),
                    batch_gap: cycles(a.batch_gap_ns),
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

    /// Gives `chip` the sessions and applications (before the run).
    pub fn apply(&self, chip: &mut Chip) -> Result<(), String> {
        for (k, (id, s)) in self.mirror_sessions.iter().enumerate() {
            chip.set_mirror_session(*id, Some(*s))
                .map_err(|e| format!("mirror_session[{k}]: {e}"))?;
        }
        for (k, (pipe, app, a)) in self.pktgen.iter().enumerate() {
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
