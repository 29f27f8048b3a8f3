//! Scenario files: a TOML description of a run (topology, transport, workload, duration,
//! seed, outputs), checked with errors that name the file, the key and the problem, then
//! built, run and summarized (terminal text, `summary.json`, `flows.csv`, `links.csv`).
//!
//! The format is documented in docs/testbench.md; `scenarios/` holds examples. Unknown keys
//! are errors. Paths in the file (CDF files, parameter files) are relative to the file.
//!
//! Reading a file (here: its text, overrides of its keys, the checked [`ScenarioFile`]) is
//! apart from running it: `format.rs` is the TOML as serde reads it, `check.rs` turns that
//! into a `ScenarioFile` or an error naming the key, `run.rs` builds and steps the network
//! and measures it, and `results.rs` holds what was measured and writes it out.

mod check;
pub mod control;
mod format;
pub mod host_keys;
mod incast;
pub mod out_dir;
pub mod progress;
pub mod results;
mod run;
pub mod topology;
mod waves;

pub use incast::{
    sender_ip, Built, Census, IncastScenario, RunSummary, ScenarioError, Spread, RECEIVER_IP,
};
pub use run::{names_a_param, Prepared};
pub use waves::WaveRequest;

pub use results::{
    BounceArrivals, BounceCounts, BounceReport, FrameCensus, LinkRow, PauseCounts, PauseKind,
    QueueSample, RunResults, SwitchPasses, MAX_PAUSE_KINDS,
};

use crate::scenario::topology::TopologySpec;
use crate::schemes::{SchemeParams, SchemeSettings};
use std::path::{Path, PathBuf};
use t2_clock::Cycle;
use t2_testbench::workload::Workload;
use t2_tm::QueueConfig;

use format::ScenarioToml;

/// The largest transport window, bytes (1 GiB).
pub const MAX_WINDOW_BYTES: u64 = 1 << 30;

/// The most flows a scenario may run (each keeps about 0.9 KB of state until the end).
pub const MAX_FLOWS: u64 = 1_000_000;

/// The most queue-depth samples a run may take (each visits every queue of every chip).
pub const MAX_QUEUE_SAMPLES: u64 = 100_000;

/// The most segments a dotted key of a scenario has (`compare.params.SCHEME.KEY`). A
/// deeper override cannot name a key, and would build tables nested deep enough to
/// overflow the stack when read or dropped, so it is refused before any is made.
pub const MAX_KEY_SEGMENTS: usize = 4;

/// Sets dotted `key` in `table` to `value`, making tables on the way; a key that runs
/// through a value that is not a table is an error.
fn set_key(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("not a dotted key".into());
    }
    if parts.len() > MAX_KEY_SEGMENTS {
        return Err(format!(
            "{} segments; a scenario's keys have at most {MAX_KEY_SEGMENTS}",
            parts.len()
        ));
    }
    let mut at = table;
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = at
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        at = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{}` is not a table", parts[..=i].join(".")))?;
    }
    at.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// `key = value, ...` for an error message.
fn override_list(overrides: &[(String, toml::Value)]) -> String {
    overrides
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A scenario's text, the name errors call it by, and the folder its relative paths start
/// from.
#[derive(Clone, Debug)]
pub struct ScenarioText {
    pub text: String,
    pub shown: String,
    pub base: PathBuf,
}

impl ScenarioText {
    /// The text of the file at `path`.
    pub fn read(path: &Path) -> Result<ScenarioText, String> {
        let shown = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
        Ok(ScenarioText {
            text,
            shown,
            base: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        })
    }
}

/// A checked scenario, ready to run.
pub struct ScenarioFile {
    /// The file it was read from, as shown in errors.
    pub source: String,
    /// The parameter file (`params`) as shown in errors, if the file names one.
    pub params_file: Option<String>,
    pub name: String,
    pub seed: u64,
    pub duration: Cycle,
    pub drain: Cycle,
    pub topology: TopologySpec,
    pub workload: Workload,
    pub out_dir: Option<PathBuf>,
    pub buckets: Vec<u64>,
    /// The ideal FCT slowdowns divide by (`output.ideal`).
    pub ideal: crate::scenario::topology::IdealFct,
    /// Queue-depth sampling period, ns (`output.queue_sample_ns`).
    pub queue_sample_ns: Option<u64>,
    /// Every switch port's queues (`[queues]`), if the file sets them.
    pub port_queues: Option<Vec<QueueConfig>>,
    /// The scheme's mirror session to the recirculation port (`Setup::recirculation_mirror`).
    pub recirculation_mirror: Option<(u8, u32)>,
    /// Waves of one switch (`output.vcd`), and which switch.
    pub waves: Option<(WaveRequest, usize)>,
    /// The scheme the file names, with its parameters.
    pub scheme: Option<(String, SchemeParams)>,
    /// `[compare]`: the schemes to compare (checked names) and their parameters.
    pub compare: Option<(Vec<String>, SchemeSettings)>,
    /// Mirror sessions and pktgen applications every switch gets.
    pub control: crate::scenario::control::ControlSetup,
    /// `expect_control_errors`: operations refused when they land do not fail the run.
    pub expect_control_errors: bool,
    /// The scheme's own per-switch set-up, if it has one.
    pub scheme_chip: Option<crate::schemes::ChipSetup>,
    /// Packet captures (`output.pcap`).
    pub pcap: Option<crate::capture::PcapRequest>,
    /// Threads the run's network is split over (`Network::set_threads`; 1 unless set with
    /// [`ScenarioFile::set_threads`]). Results do not depend on it.
    threads: usize,
    /// `output.vcd` as written, and whether `output.pcap_dir` was given (for
    /// [`ScenarioFile::set_out_dir`]).
    vcd_as_written: Option<PathBuf>,
    pcap_dir_given: bool,
}

impl ScenarioFile {
    /// Runs the network on up to `threads` threads (at least 1): its switches, each with
    /// its hosts, are dealt out to partitions that advance side by side. A run with packet
    /// captures stays on one thread (a capture sees every frame in one order). Results are
    /// byte-identical whatever the number.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The most threads worth splitting this file's network over: one per two switches.
    /// Partitions wait for each other at every lookahead window, and a partition of a
    /// single switch has too little work between those waits to pay for them: on the BFC
    /// dumbbell (2 switches) two threads took 2.91 s of wall time against 1.25 s on one,
    /// while on the 4x2 leaf-spine (6 switches) they took 2.2 s against 5.2 s and on the
    /// paper's 8x8 (16 switches) 14.5 s against 37 s (docs/architecture.md, "Threads").
    pub fn threads_worth_using(&self) -> usize {
        let switches = self.topology.shape.size().map_or(1, |s| s.switches);
        (switches / 2).max(1)
    }

    /// Reads and checks a scenario file.
    pub fn load(path: &Path) -> Result<ScenarioFile, String> {
        ScenarioFile::from_text(&ScenarioText::read(path)?, &[])
    }

    /// Reads a scenario file with some of its keys set anew (see [`ScenarioFile::from_text`]).
    pub fn load_with(
        path: &Path,
        overrides: &[(String, toml::Value)],
    ) -> Result<ScenarioFile, String> {
        ScenarioFile::from_text(&ScenarioText::read(path)?, overrides)
    }

    /// Checks a scenario's text with some of its keys set anew: each override is a dotted key
    /// (`workload.load`, `scheme`, `scheme_params.k_cells`) and a TOML value, set in the
    /// file's table before it is checked, so an override is checked like the file's own
    /// keys. Sweeps and comparisons run files this way.
    pub fn from_text(
        source: &ScenarioText,
        overrides: &[(String, toml::Value)],
    ) -> Result<ScenarioFile, String> {
        let shown = &source.shown;
        let syntax = |e: toml::de::Error| {
            format!(
                "{shown}: {}",
                e.to_string().trim_end().replace('\n', "\n  ")
            )
        };
        let mut raw: ScenarioToml = if overrides.is_empty() {
            toml::from_str(&source.text).map_err(syntax)?
        } else {
            let mut table: toml::Table = toml::from_str(&source.text).map_err(syntax)?;
            for (key, value) in overrides {
                set_key(&mut table, key, value.clone())
                    .map_err(|e| format!("{shown}: {key}: {e}"))?;
            }
            table.try_into().map_err(|e: toml::de::Error| {
                format!(
                    "{shown} (with {}): {}",
                    override_list(overrides),
                    e.message()
                )
            })?
        };
        raw.scheme_overridden = overrides.iter().any(|(k, _)| k == "scheme");
        ScenarioFile::check(raw, shown, &source.base)
    }
}
