//! Scenario-file keys for the control plane: `[[mirror_session]]` and `[[pktgen]]` tables,
//! given to every switch when the network is built (docs/testbench.md). Errors name the key.

use crate::chip::{Chip, MirrorSession, PktgenApp, PktgenTrigger};
use serde::Deserialize;
use t2_clock::Clock;

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
/// (`at_ns`) or a periodic one (`period_ns`, from `start_ns`), `payload_hex` after the pktgen
/// header.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct PktgenToml {
    pipe: usize,
    app: usize,
    at_ns: Option<u64>,
    period_ns: Option<u64>,
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
}

impl ControlSetup {
    /// The set-up the keys describe; times in ns rounded up to cycles of `clock`.
    pub(crate) fn new(
        sessions: &[MirrorSessionToml],
        apps: &[PktgenToml],
        clock: Clock,
    ) -> Result<ControlSetup, String> {
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
            let trigger = match (a.at_ns, a.period_ns) {
                (Some(at), None) => PktgenTrigger::OneShot { at: cycles(at) },
                (None, Some(period)) => PktgenTrigger::Periodic {
                    start: cycles(a.start_ns),
                    period: cycles(period),
                },
                _ => return bad("give exactly one of at_ns (one-shot) and period_ns".into()),
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
        Ok(())
    }
}
