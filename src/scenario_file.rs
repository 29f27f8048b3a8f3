//! Scenario files: a TOML description of a run (topology, transport, workload, duration,
//! seed, outputs), checked with errors that name the file, the key and the problem, then
//! built, run and summarized (terminal text, `summary.json`, `flows.csv`, `links.csv`).
//!
//! The format is documented in docs/testbench.md; `scenarios/` holds examples. Unknown keys
//! are errors. Paths in the file (CDF files, parameter files) are relative to the file.

use crate::chip::Chip;
use crate::params::Tofino2Params;
use crate::scenario::WaveRequest;
use crate::schemes::{self, SchemeParams, SchemeSettings};
use crate::topology::{Shape, Topology, TopologySpec};
use crate::trace::DEFAULT_TRACE;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use t2_clock::Cycle;
use t2_pipeline::ir::Program;
use t2_testbench::metrics::{self, BucketStats, Drops, FlowRecord, Reordering};
use t2_testbench::qcn::QcnParams;
use t2_testbench::transport::{Congestion, TransportHost};
use t2_testbench::workload::{
    self, Arrivals, CdfTraffic, FlowSpec, HostSet, Incast, Sampling, SizeCdf, SizeUnit, Workload,
};
use t2_testbench::{Rng, Stepping, TransportConfig};
use t2_tm::QueueConfig;
use t2_waves::TraceFilter;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FileScenario {
    name: Option<String>,
    seed: u64,
    /// Flows start within this time.
    duration_us: u64,
    /// Extra time after `duration_us` for started flows to finish (default 0).
    #[serde(default)]
    drain_us: u64,
    #[serde(default)]
    step_every_cycle: bool,
    /// A JSON parameter file (see `t2sim params`).
    params: Option<PathBuf>,
    /// A JSON program every switch runs (see `programs/`); its `ipv4_host` table gets the
    /// host routes. Default: the built-in IPv4 forwarding.
    program: Option<PathBuf>,
    /// A scheme by name (`t2sim schemes` lists them): its program, queues and host
    /// behaviour, in place of `program`, `[queues]` and `[transport]`'s congestion and
    /// pause/bounce keys.
    scheme: Option<String>,
    /// The scheme's parameters (`[scheme_params]`; TOML cannot make `scheme` both a name
    /// and a table). Unset ones keep the scheme's defaults.
    scheme_params: Option<BTreeMap<String, f64>>,
    /// What `t2sim compare` runs this file under when the command names no schemes.
    compare: Option<CompareToml>,
    topology: TopologyToml,
    #[serde(default)]
    transport: TransportToml,
    workload: WorkloadToml,
    /// Every switch port's egress queues (default: the TM's default carving).
    queues: Option<QueuesToml>,
    #[serde(default)]
    output: OutputToml,
}

/// `[compare]`: the schemes a comparison of this file runs, and their parameters.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct CompareToml {
    schemes: Vec<String>,
    /// `[compare.params.SCHEME]`: parameters of a compared scheme.
    #[serde(default)]
    params: SchemeSettings,
}

/// `[queues]`: how many queues every switch port has, and how the listed ones are scheduled
/// (the others keep `QueueConfig::default()`: priority 0, weight 1, no rates, pool 0).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct QueuesToml {
    count: usize,
    #[serde(default)]
    queue: Vec<QueueToml>,
}

/// `[[queues.queue]]`: one queue's scheduling and limits; rates in Mb/s.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct QueueToml {
    id: usize,
    priority: Option<u8>,
    weight: Option<u16>,
    min_rate_mbps: Option<u64>,
    max_rate_mbps: Option<u64>,
    burst_bytes: Option<u32>,
    limit_cells: Option<u32>,
    pfc_priority: Option<u8>,
    app_pool: Option<u8>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct TopologyToml {
    kind: String,
    hosts: Option<usize>,
    hosts_per_side: Option<usize>,
    leaves: Option<usize>,
    spines: Option<usize>,
    hosts_per_leaf: Option<usize>,
    k: Option<usize>,
    hosts_per_edge: Option<usize>,
    #[serde(default = "default_gbps")]
    link_gbps: u64,
    #[serde(default = "default_delay")]
    link_delay_ns: u64,
    /// Limit on every egress queue of every chip, in 176-byte cells.
    queue_limit_cells: Option<u32>,
}

fn default_gbps() -> u64 {
    100
}

fn default_delay() -> u64 {
    1000
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum CongestionToml {
    Fixed,
    Dctcp,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct TransportToml {
    /// Default `fixed` (or the scheme's).
    congestion: Option<CongestionToml>,
    #[serde(default = "default_mss")]
    mss: u64,
    #[serde(default = "default_window")]
    window_bytes: u64,
    #[serde(default = "default_rto")]
    rto_us: u64,
    /// NICs stop sending while a PFC frame pauses their class (default false).
    honour_pfc: Option<bool>,
    /// Hosts send again a data frame a switch bounced back to them (PABO; default false).
    resend_bounced: Option<bool>,
    /// NICs give each flow its own queue index and honour BFC pause bitmaps (default false).
    honour_bfc_pause: Option<bool>,
    /// QCN reaction points at the NICs, when the table is present.
    qcn: Option<QcnToml>,
}

/// `[transport.qcn]`: every key optional; the defaults are the standard QCN values
/// (`t2_testbench::qcn::QcnParams::standard`).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct QcnToml {
    gd_denominator: Option<u64>,
    byte_counter_bytes: Option<u64>,
    timer_us: Option<u64>,
    fast_recovery_stages: Option<u32>,
    r_ai_mbps: Option<u64>,
    r_hai_mbps: Option<u64>,
    min_rate_mbps: Option<u64>,
}

impl QcnToml {
    /// The parameters, checked against NICs of `link_bps`; errors name the key.
    fn params(&self, clock: t2_clock::Clock, link_bps: u64) -> Result<QcnParams, String> {
        let std = QcnParams::standard(clock);
        let mbps = |key: &str, v: Option<u64>, default: u64| match v {
            None => Ok(default),
            Some(m) => m
                .checked_mul(1_000_000)
                .ok_or_else(|| format!("transport.qcn.{key}: {m} is too large")),
        };
        let timer = match self.timer_us {
            None => std.timer,
            Some(0) => return Err("transport.qcn.timer_us: must be above 0".into()),
            Some(us) if us > 10_000_000 => {
                return Err(format!(
                    "transport.qcn.timer_us: {us} is above 10,000,000 (10 s)"
                ))
            }
            Some(us) => clock.ns_to_cycles_ceil(us * 1000),
        };
        let p = QcnParams {
            gd_denominator: self.gd_denominator.unwrap_or(std.gd_denominator),
            byte_counter_bytes: self.byte_counter_bytes.unwrap_or(std.byte_counter_bytes),
            timer,
            fast_recovery_stages: self
                .fast_recovery_stages
                .unwrap_or(std.fast_recovery_stages),
            r_ai_bps: mbps("r_ai_mbps", self.r_ai_mbps, std.r_ai_bps)?,
            r_hai_bps: mbps("r_hai_mbps", self.r_hai_mbps, std.r_hai_bps)?,
            min_rate_bps: mbps("min_rate_mbps", self.min_rate_mbps, std.min_rate_bps)?,
        };
        // Rates are given in Mb/s here, so name that key rather than the b/s field.
        if p.min_rate_bps > link_bps || p.min_rate_bps == 0 {
            return Err(format!(
                "transport.qcn.min_rate_mbps: {} is outside 1..={} (the link rate)",
                p.min_rate_bps / 1_000_000,
                link_bps / 1_000_000
            ));
        }
        p.validate("transport", link_bps)?;
        Ok(p)
    }
}

fn default_mss() -> u64 {
    1000
}
fn default_window() -> u64 {
    100_000
}
fn default_rto() -> u64 {
    100
}

impl Default for TransportToml {
    fn default() -> TransportToml {
        TransportToml {
            congestion: None,
            mss: default_mss(),
            window_bytes: default_window(),
            rto_us: default_rto(),
            honour_pfc: None,
            resend_bounced: None,
            honour_bfc_pause: None,
            qcn: None,
        }
    }
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum SamplingToml {
    Linear,
    Step,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum ArrivalsToml {
    Poisson,
    LogNormal,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct WorkloadToml {
    /// A CDF file, relative to the scenario file.
    cdf: Option<PathBuf>,
    /// Sizes in the file are packets of this many bytes (Homa's DCTCP files: 1460).
    size_unit_packets: Option<u64>,
    sampling: Option<SamplingToml>,
    /// Offered load per host, (0, 1].
    load: Option<f64>,
    arrivals: Option<ArrivalsToml>,
    sigma: Option<f64>,
    incast: Option<IncastToml>,
    #[serde(default)]
    flows: Vec<FlowToml>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct IncastToml {
    degree: usize,
    size_bytes: u64,
    period_us: u64,
    #[serde(default)]
    first_us: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FlowToml {
    src: usize,
    dst: usize,
    size_bytes: u64,
    #[serde(default)]
    start_ns: u64,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct OutputToml {
    /// Where to write results (overridden by `--out`); none: terminal only.
    dir: Option<PathBuf>,
    /// Upper bounds of the flow-size buckets, bytes.
    buckets: Option<Vec<u64>>,
    /// Sample every chip's egress queue depths this often (`queues.csv`); none: no samples.
    queue_sample_ns: Option<u64>,
    /// A VCD dump of one switch (relative to this file), with a GTKWave save file beside it.
    vcd: Option<PathBuf>,
    /// Which signals (comma-separated globs, as `t2sim run --trace`; default: the default
    /// trace set).
    trace: Option<String>,
    /// The switch to trace (default 0).
    trace_switch: Option<usize>,
}

/// The largest transport window, bytes (1 GiB).
pub const MAX_WINDOW_BYTES: u64 = 1 << 30;

/// The most flows a workload may generate (each keeps its outcome until the end).
pub const MAX_FLOWS: u64 = workload::MAX_FLOWS as u64;

/// The most queue-depth samples a run may take (each visits every queue of every chip).
pub const MAX_QUEUE_SAMPLES: u64 = 100_000;

/// Sets dotted `key` in `table` to `value`, making tables on the way; a key that runs
/// through a value that is not a table is an error.
fn set_key(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("not a dotted key".into());
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
    pub name: String,
    pub seed: u64,
    pub duration: Cycle,
    pub drain: Cycle,
    pub topology: TopologySpec,
    pub workload: Workload,
    pub out_dir: Option<PathBuf>,
    pub buckets: Vec<u64>,
    /// Queue-depth sampling period, ns (`output.queue_sample_ns`).
    pub queue_sample_ns: Option<u64>,
    /// Every switch port's queues (`[queues]`), if the file sets them.
    pub port_queues: Option<Vec<QueueConfig>>,
    /// Waves of one switch (`output.vcd`), and which switch.
    pub waves: Option<(WaveRequest, usize)>,
    /// The scheme the file names, with its parameters.
    pub scheme: Option<(String, SchemeParams)>,
    /// `[compare]`: the schemes to compare (checked names) and their parameters.
    pub compare: Option<(Vec<String>, SchemeSettings)>,
}

/// The queues `[queues]` describes, checked; errors name the key.
fn port_queues(q: &QueuesToml, params: &Tofino2Params) -> Result<Vec<QueueConfig>, String> {
    let min = params.tm.default_queues_per_port as usize;
    let max = params.tm.queues_per_port_group as usize;
    if !(min..=max).contains(&q.count) {
        return Err(format!(
            "queues.count: {} is outside {min}..={max} (a port's share of its group may be less: \
             the chip says so when it is built)",
            q.count
        ));
    }
    let mut queues = vec![QueueConfig::default(); q.count];
    let mut seen = vec![false; q.count];
    for (k, t) in q.queue.iter().enumerate() {
        let key = format!("queues.queue[{k}]");
        if t.id >= q.count {
            return Err(format!(
                "{key}.id: {} is not a queue of {} (0..={})",
                t.id,
                q.count,
                q.count - 1
            ));
        }
        if std::mem::replace(&mut seen[t.id], true) {
            return Err(format!("{key}.id: queue {} is listed twice", t.id));
        }
        let d = QueueConfig::default();
        let mbps = |m: Option<u64>| m.map(|m| m.saturating_mul(1_000_000));
        let c = QueueConfig {
            priority: t.priority.unwrap_or(d.priority),
            weight: t.weight.unwrap_or(d.weight),
            min_rate_bps: mbps(t.min_rate_mbps),
            max_rate_bps: mbps(t.max_rate_mbps),
            burst_bytes: t.burst_bytes.unwrap_or(d.burst_bytes),
            limit_cells: t.limit_cells,
            pfc_priority: t.pfc_priority,
            app_pool: t.app_pool.unwrap_or(d.app_pool),
        };
        c.validate().map_err(|e| format!("{key}: {e}"))?;
        queues[t.id] = c;
    }
    Ok(queues)
}

/// One egress queue's depth at a sample time (only non-empty queues are listed).
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSample {
    pub time_ns: u64,
    /// Index of the switch (`switch{i}`).
    pub switch: usize,
    pub port: usize,
    pub queue: usize,
    pub depth_cells: u32,
}

/// Pause frames one node sent and received. Chips send and receive PFC; hosts receive PFC
/// (only when honouring it; otherwise such frames count as foreign) and BFC pause frames
/// (with `honour_bfc_pause`).
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PauseCounts {
    pub pfc_sent: u64,
    pub pfc_received: u64,
    pub bfc_received: u64,
}

/// The results of a run, as written to `summary.json`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RunResults {
    pub name: String,
    pub seed: u64,
    pub hosts: usize,
    pub switches: usize,
    pub duration_cycles: Cycle,
    pub end_cycle: Cycle,
    pub flows: usize,
    pub completed: usize,
    pub offered_load: f64,
    pub buckets: Vec<BucketStats>,
    /// Drops by reason over the whole network.
    pub drops: Drops,
    /// The same drops by where they happened (`switch{i}`, `host{i}`, `network`), places
    /// with none left out.
    pub drops_by_node: BTreeMap<String, Drops>,
    pub timeouts: u64,
    pub retransmitted_segments: u64,
    pub duplicate_segments: u64,
    pub reordered_segments: u64,
    pub mean_reorder_entropy: f64,
    /// Frames the hosts put on links, and where each one is at the end.
    pub frames: FrameCensus,
    /// Queue-depth sampling period, ns, if sampled.
    pub queue_sample_ns: Option<u64>,
    /// Pause frames by node (`switch{i}`, `host{i}`), nodes with none left out.
    pub pause_frames: BTreeMap<String, PauseCounts>,
    /// Packets the switches' recirculation ports fed back into their ingress.
    pub recirculated: u64,
    /// Signals in the VCD dump, when `output.vcd` asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traced_signals: Option<usize>,
    #[serde(skip)]
    pub queue_samples: Vec<QueueSample>,
    #[serde(skip)]
    pub records: Vec<FlowRecord>,
    #[serde(skip)]
    pub reorder_entropy: BTreeMap<u32, f64>,
    #[serde(skip)]
    pub links: Vec<LinkRow>,
}

/// Where every frame the hosts sent is: received by a host, dropped (counted with a reason),
/// inside a chip, or on a link. `unaccounted` must be 0.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameCensus {
    pub sent: u64,
    pub received: u64,
    pub dropped: u64,
    pub inside_chips: u64,
    pub on_links: u64,
    pub unaccounted: i64,
}

/// One direction of one link: what left `node` port `port`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct LinkRow {
    pub node: String,
    pub port: usize,
    pub frames: u64,
    pub bytes: u64,
    pub gbps: f64,
}

impl ScenarioFile {
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
        let raw: FileScenario = if overrides.is_empty() {
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
        ScenarioFile::check(raw, shown, &source.base)
    }

    fn check(raw: FileScenario, shown: &str, base: &Path) -> Result<ScenarioFile, String> {
        let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
        let mut params = match &raw.params {
            Some(p) => Tofino2Params::from_json_file(&base.join(p))
                .map_err(|e| format!("{shown}: params: {e}"))?,
            None => Tofino2Params::default(),
        };
        if let (Some(name), Some(_)) = (&raw.scheme, &raw.program) {
            return bad(
                "program",
                format!("scheme {name} sets it; remove one of the two"),
            );
        }
        let program = match &raw.program {
            None => None,
            Some(p) => {
                let path = base.join(p);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{shown}: program: {}: {e}", path.display()))?;
                Some(
                    Program::from_json(&text)
                        .map_err(|e| format!("{shown}: program: {}: {e}", path.display()))?,
                )
            }
        };
        let t = &raw.topology;
        if let Some(cells) = t.queue_limit_cells {
            params.tm.queue_limit_cells = Some(cells);
            if let Err(e) = params.validate() {
                return bad("topology.queue_limit_cells", e.problem);
            }
        }
        let port_queues = match &raw.queues {
            Some(q) => Some(port_queues(q, &params).map_err(|e| format!("{shown}: {e}"))?),
            None => None,
        };
        let clock = params.clock();
        if raw.duration_us == 0 || raw.duration_us > 10_000_000 {
            return bad(
                "duration_us",
                format!("{} is outside 1..=10000000", raw.duration_us),
            );
        }
        if raw.drain_us > 10_000_000 {
            return bad("drain_us", format!("{} is above 10000000", raw.drain_us));
        }
        // Which topology keys each kind takes.
        let given: [(&str, Option<usize>); 7] = [
            ("hosts", t.hosts),
            ("hosts_per_side", t.hosts_per_side),
            ("leaves", t.leaves),
            ("spines", t.spines),
            ("hosts_per_leaf", t.hosts_per_leaf),
            ("k", t.k),
            ("hosts_per_edge", t.hosts_per_edge),
        ];
        let wants: &[&str] = match t.kind.as_str() {
            "single_chip" => &["hosts"],
            "dumbbell" => &["hosts_per_side"],
            "leaf_spine" => &["leaves", "spines", "hosts_per_leaf"],
            "fat_tree" => &["k"],
            "pabo_tree" => &["hosts_per_edge"],
            other => {
                return bad(
                    "topology.kind",
                    format!(
                        "`{other}` is not one of single_chip, dumbbell, leaf_spine, fat_tree, pabo_tree"
                    ),
                )
            }
        };
        for (key, value) in given {
            match (wants.contains(&key), value) {
                (true, None) => {
                    return bad(
                        &format!("topology.{key}"),
                        format!("missing (kind {} needs it)", t.kind),
                    )
                }
                (false, Some(_)) => {
                    return bad(
                        &format!("topology.{key}"),
                        format!("not used by kind {}", t.kind),
                    )
                }
                _ => {}
            }
        }
        let v = |key: &str| {
            given
                .iter()
                .find(|g| g.0 == key)
                .and_then(|g| g.1)
                .unwrap_or(0)
        };
        let shape = match t.kind.as_str() {
            "single_chip" => Shape::SingleChip { hosts: v("hosts") },
            "dumbbell" => Shape::Dumbbell {
                hosts_per_side: v("hosts_per_side"),
            },
            "leaf_spine" => Shape::LeafSpine {
                leaves: v("leaves"),
                spines: v("spines"),
                hosts_per_leaf: v("hosts_per_leaf"),
            },
            "fat_tree" => Shape::FatTree { k: v("k") },
            _ => Shape::PaboTree {
                hosts_per_edge: v("hosts_per_edge"),
            },
        };
        let Some(link_bps) = t.link_gbps.checked_mul(1_000_000_000) else {
            return bad(
                "topology.link_gbps",
                format!("{} is too large", t.link_gbps),
            );
        };
        let tr = &raw.transport;
        let max_mss = 9216 - t2_testbench::transport::SEGMENT_OVERHEAD;
        if !(1..=max_mss).contains(&tr.mss) {
            return bad(
                "transport.mss",
                format!("{} is outside 1..={max_mss} (a 9216 B frame)", tr.mss),
            );
        }
        if !(tr.mss..=MAX_WINDOW_BYTES).contains(&tr.window_bytes) {
            return bad(
                "transport.window_bytes",
                format!(
                    "{} is outside {}..={MAX_WINDOW_BYTES} (at least one segment)",
                    tr.window_bytes, tr.mss
                ),
            );
        }
        if !(1..=10_000_000).contains(&tr.rto_us) {
            return bad(
                "transport.rto_us",
                format!("{} is outside 1..=10000000 (10 s)", tr.rto_us),
            );
        }
        let rto = clock.ns_to_cycles_ceil(tr.rto_us * 1000);
        let mut transport = TransportConfig {
            mss: tr.mss,
            window_bytes: tr.window_bytes,
            rto,
            max_rto: rto.saturating_mul(64),
            congestion: match tr.congestion.unwrap_or(CongestionToml::Fixed) {
                CongestionToml::Fixed => Congestion::Fixed,
                CongestionToml::Dctcp => Congestion::Dctcp,
            },
            honour_pfc: tr.honour_pfc.unwrap_or(false),
            resend_bounced: tr.resend_bounced.unwrap_or(false),
            honour_bfc_pause: tr.honour_bfc_pause.unwrap_or(false),
            qcn: match &tr.qcn {
                None => None,
                Some(q) => Some(
                    q.params(clock, link_bps)
                        .map_err(|e| format!("{shown}: {e}"))?,
                ),
            },
        };
        let (program, port_queues, scheme) = match &raw.scheme {
            None => {
                if raw.scheme_params.is_some() {
                    return bad("scheme_params", "needs scheme, the scheme they set".into());
                }
                (program, port_queues, None)
            }
            Some(name) => {
                let scheme = schemes::find(name).map_err(|e| format!("{shown}: scheme: {e}"))?;
                for (key, set) in [
                    ("program", raw.program.is_some()),
                    ("queues", raw.queues.is_some()),
                    ("transport.congestion", tr.congestion.is_some()),
                    ("transport.honour_pfc", tr.honour_pfc.is_some()),
                    ("transport.resend_bounced", tr.resend_bounced.is_some()),
                    ("transport.honour_bfc_pause", tr.honour_bfc_pause.is_some()),
                ] {
                    if set {
                        return bad(key, format!("scheme {name} sets it; remove one of the two"));
                    }
                }
                let values = scheme
                    .resolve(&raw.scheme_params.clone().unwrap_or_default())
                    .map_err(|e| format!("{shown}: scheme_params.{e}"))?;
                let setup = (scheme.build)(
                    &values,
                    &schemes::Target {
                        params: &params,
                        link_bps,
                        multipath: match shape {
                            Shape::LeafSpine { spines, .. } => spines > 1,
                            Shape::FatTree { .. } => true,
                            _ => false,
                        },
                    },
                );
                setup.hosts.apply(&mut transport);
                (
                    Some(setup.program),
                    setup.port_queues,
                    Some((scheme.name.to_string(), values)),
                )
            }
        };
        transport
            .validate("transport")
            .map_err(|e| format!("{shown}: {e}"))?;
        let compare = match &raw.compare {
            None => None,
            Some(c) => {
                if c.schemes.is_empty() {
                    return bad("compare.schemes", "names no scheme".into());
                }
                for (i, name) in c.schemes.iter().enumerate() {
                    schemes::find(name)
                        .map_err(|e| format!("{shown}: compare.schemes[{i}]: {e}"))?;
                    if c.schemes[..i].contains(name) {
                        return bad(
                            &format!("compare.schemes[{i}]"),
                            format!("{name} is named twice"),
                        );
                    }
                }
                for (name, values) in &c.params {
                    if !c.schemes.contains(name) {
                        return bad(
                            &format!("compare.params.{name}"),
                            "not a compared scheme".into(),
                        );
                    }
                    schemes::find(name)
                        .expect("checked above")
                        .resolve(values)
                        .map_err(|e| format!("{shown}: compare.params.{name}.{e}"))?;
                }
                Some((c.schemes.clone(), c.params.clone()))
            }
        };
        let w = &raw.workload;
        let background = match &w.cdf {
            None => {
                for (key, set) in [
                    ("size_unit_packets", w.size_unit_packets.is_some()),
                    ("sampling", w.sampling.is_some()),
                    ("load", w.load.is_some()),
                    ("arrivals", w.arrivals.is_some()),
                    ("sigma", w.sigma.is_some()),
                ] {
                    if set {
                        return bad(&format!("workload.{key}"), "needs workload.cdf".into());
                    }
                }
                None
            }
            Some(file) => {
                let unit = w
                    .size_unit_packets
                    .map_or(SizeUnit::Bytes, SizeUnit::Packets);
                let cdf = SizeCdf::load(&base.join(file), unit)
                    .map_err(|e| format!("{shown}: workload.cdf: {e}"))?;
                let Some(load) = w.load else {
                    return bad(
                        "workload.load",
                        "missing (a CDF workload needs a load)".into(),
                    );
                };
                if !(load > 0.0 && load <= 1.0) {
                    return bad("workload.load", format!("{load} is outside (0, 1]"));
                }
                let arrivals = match (w.arrivals.unwrap_or(ArrivalsToml::Poisson), w.sigma) {
                    (ArrivalsToml::Poisson, None) => Arrivals::Poisson,
                    (ArrivalsToml::Poisson, Some(_)) => {
                        return bad(
                            "workload.sigma",
                            "only log_normal arrivals take sigma".into(),
                        )
                    }
                    (ArrivalsToml::LogNormal, Some(sigma)) if sigma > 0.0 && sigma < 10.0 => {
                        Arrivals::LogNormal { sigma }
                    }
                    (ArrivalsToml::LogNormal, Some(sigma)) => {
                        return bad("workload.sigma", format!("{sigma} is outside (0, 10)"))
                    }
                    (ArrivalsToml::LogNormal, None) => {
                        return bad(
                            "workload.sigma",
                            "missing (log_normal arrivals need it)".into(),
                        )
                    }
                };
                Some(CdfTraffic {
                    cdf,
                    sampling: match w.sampling.unwrap_or(SamplingToml::Linear) {
                        SamplingToml::Linear => Sampling::Linear,
                        SamplingToml::Step => Sampling::Step,
                    },
                    arrivals,
                    load,
                })
            }
        };
        let us = |x: u64| clock.ns_to_cycles_ceil(x.saturating_mul(1000));
        let incast = w.incast.as_ref().map(|i| Incast {
            degree: i.degree,
            size_bytes: i.size_bytes,
            first: us(i.first_us),
            period: us(i.period_us),
        });
        let fixed = w
            .flows
            .iter()
            .map(|f| FlowSpec {
                start: clock.ns_to_cycles_ceil(f.start_ns),
                id: 0,
                src: f.src,
                dst: f.dst,
                size_bytes: f.size_bytes,
            })
            .collect();
        let buckets = raw
            .output
            .buckets
            .clone()
            .unwrap_or_else(|| metrics::DEFAULT_BUCKETS.to_vec());
        if buckets.windows(2).any(|p| p[0] >= p[1]) || buckets.first() == Some(&0) {
            return bad(
                "output.buckets",
                "bounds must be above 0 and increasing".into(),
            );
        }
        let o = &raw.output;
        if o.vcd.is_none() && (o.trace.is_some() || o.trace_switch.is_some()) {
            let key = if o.trace.is_some() {
                "output.trace"
            } else {
                "output.trace_switch"
            };
            return bad(key, "needs output.vcd, the dump to write".into());
        }
        let waves = match &o.vcd {
            None => None,
            Some(vcd) => {
                let filter = TraceFilter::parse(o.trace.as_deref().unwrap_or(DEFAULT_TRACE))
                    .map_err(|e| format!("{shown}: output.trace: {e}"))?;
                let request = WaveRequest {
                    vcd: base.join(vcd),
                    filter,
                };
                Some((request, o.trace_switch.unwrap_or(0)))
            }
        };
        if let Some(ns) = raw.output.queue_sample_ns {
            if ns == 0 {
                return bad("output.queue_sample_ns", "must be above 0".into());
            }
            let run_ns = (raw.duration_us + raw.drain_us).saturating_mul(1000);
            let samples = run_ns / ns + 1;
            if samples > MAX_QUEUE_SAMPLES {
                return bad(
                    "output.queue_sample_ns",
                    format!(
                        "{ns} ns over a {run_ns} ns run takes {samples} samples; at most {MAX_QUEUE_SAMPLES}"
                    ),
                );
            }
        }
        let topology = TopologySpec {
            shape,
            params,
            link_bps,
            link_delay_ns: t.link_delay_ns,
            transport,
            stepping: if raw.step_every_cycle {
                Stepping::EveryCycle
            } else {
                Stepping::Jump
            },
            program,
        };
        // Every size against the chip and t2sim's bounds, before anything is built.
        if let Err(e) = topology.check() {
            let keys: Vec<String> = e
                .keys
                .split(", ")
                .map(|k| match k {
                    "params" => k.to_string(),
                    _ => format!("topology.{k}"),
                })
                .collect();
            return bad(&keys.join(", "), e.problem);
        }
        let size = topology.check().expect("checked above");
        let hosts = size.hosts;
        if let Some(i) = &w.incast {
            if i.degree == 0 || i.degree >= hosts {
                return bad(
                    "workload.incast.degree",
                    format!(
                        "{} is outside 1..={} (senders into one of the {hosts} hosts)",
                        i.degree,
                        hosts - 1
                    ),
                );
            }
            if i.size_bytes == 0 {
                return bad("workload.incast.size_bytes", "must be above 0".into());
            }
            if !(1..=10_000_000).contains(&i.period_us) {
                return bad(
                    "workload.incast.period_us",
                    format!("{} is outside 1..=10000000", i.period_us),
                );
            }
            let rounds = raw
                .duration_us
                .saturating_sub(i.first_us)
                .div_ceil(i.period_us);
            let flows = rounds.saturating_mul(i.degree as u64);
            if flows > MAX_FLOWS {
                return bad(
                    "workload.incast",
                    format!(
                        "{rounds} rounds of {} flows are {flows} flows; at most {MAX_FLOWS}",
                        i.degree
                    ),
                );
            }
        }
        for (k, f) in w.flows.iter().enumerate() {
            for (key, h) in [("src", f.src), ("dst", f.dst)] {
                if h >= hosts {
                    return bad(
                        &format!("workload.flows[{k}].{key}"),
                        format!(
                            "host {h} is not one of the {hosts} hosts (0..={})",
                            hosts - 1
                        ),
                    );
                }
            }
            if f.src == f.dst {
                return bad(
                    &format!("workload.flows[{k}].dst"),
                    format!("host {} sends to itself", f.src),
                );
            }
            if f.size_bytes == 0 {
                return bad(
                    &format!("workload.flows[{k}].size_bytes"),
                    "must be above 0".into(),
                );
            }
        }
        if w.flows.len() as u64 > MAX_FLOWS {
            return bad(
                "workload.flows",
                format!("{} flows; at most {MAX_FLOWS}", w.flows.len()),
            );
        }
        if let Some(bg) = &background {
            // The expected flow count: hosts x duration / mean gap.
            let mean_bytes = bg.cdf.mean(bg.sampling);
            let seconds = raw.duration_us as f64 / 1e6;
            let expected = hosts as f64 * seconds * bg.load * link_bps as f64 / (mean_bytes * 8.0);
            if expected > MAX_FLOWS as f64 / 2.0 {
                return bad(
                    "workload.load",
                    format!(
                        "{} hosts at load {} for {} us start about {expected:.0} flows of {mean_bytes:.0} B on average; at most {} (shorten duration_us or lower the load)",
                        hosts, bg.load, raw.duration_us, MAX_FLOWS / 2
                    ),
                );
            }
        }
        if let Some((_, switch)) = &waves {
            if *switch >= size.switches {
                return bad(
                    "output.trace_switch",
                    format!(
                        "{switch}, but the topology has {} switches (0..={})",
                        size.switches,
                        size.switches - 1
                    ),
                );
            }
        }
        Ok(ScenarioFile {
            source: shown.to_string(),
            name: raw.name.clone().unwrap_or_else(|| shown.to_string()),
            seed: raw.seed,
            duration: us(raw.duration_us),
            drain: us(raw.drain_us),
            topology,
            workload: Workload {
                background,
                incast,
                fixed,
            },
            out_dir: raw.output.dir.map(|d| base.join(d)),
            buckets,
            queue_sample_ns: raw.output.queue_sample_ns,
            port_queues,
            waves,
            scheme,
            compare,
        })
    }

    /// Builds the network: the topology, with `[queues]` given to every switch port.
    pub fn build(&self) -> Result<Topology, String> {
        let mut topo = self.topology.build()?;
        if let Some(queues) = &self.port_queues {
            for &c in &topo.chips {
                let chip = topo.net.node_mut::<Chip>(c);
                for port in 0..t2_testbench::Node::port_count(chip) {
                    chip.set_port_queues(port, queues)
                        .map_err(|e| format!("queues: {e}"))?;
                }
            }
        }
        if let Some((w, switch)) = &self.waves {
            let chips = topo.chips.len();
            let &chip = topo.chips.get(*switch).ok_or_else(|| {
                format!(
                    "output.trace_switch: {switch}, but the topology has {chips} switches (0..={})",
                    chips - 1
                )
            })?;
            w.start(topo.net.node_mut::<Chip>(chip))?;
        }
        Ok(topo)
    }

    /// Builds the network, runs it, and measures.
    pub fn run(&self) -> Result<RunResults, String> {
        self.run_inner()
            .map_err(|e| format!("{}: {e}", self.source))
    }

    fn run_inner(&self) -> Result<RunResults, String> {
        let mut topo = self.build()?;
        let clock = self.topology.params.clock();
        let hosts = HostSet {
            hosts: topo.hosts.len(),
            host_bps: self.topology.link_bps,
            clock,
        };
        let flows = self
            .workload
            .generate(hosts, self.duration, &Rng::new(self.seed))
            .map_err(|e| format!("workload: {e}"))?;
        topo.add_flows(&flows)?;
        let end = self.duration + self.drain;
        // Run in slices so that a run whose flows are all done stops early. Queue samples
        // are taken at k x queue_sample_ns (rounded up to a cycle, so they never drift) on
        // the way; stopping the kernel there changes nothing (it is exact at any stop).
        let slice = clock.ns_to_cycles_ceil(crate::progress::SLICE_NS).max(1);
        let mut progress = crate::progress::Progress::new(clock, end);
        let mut now = 0;
        let mut samples = Vec::new();
        let mut k = 0u64;
        while now < end {
            let stop = (now + slice).min(end);
            if let Some(ns) = self.queue_sample_ns {
                while clock.ns_to_cycles_ceil(k * ns) <= stop {
                    topo.net.run_until(clock.ns_to_cycles_ceil(k * ns));
                    sample_queues(&topo, k * ns, &mut samples);
                    k += 1;
                }
            }
            now = stop;
            topo.net.run_until(now);
            progress.update(now);
            if now >= self.duration && all_done(&topo) {
                break;
            }
        }
        progress.finish();
        let mut results = self.measure(&topo, &flows, now);
        results.queue_samples = samples;
        if let Some((w, switch)) = &self.waves {
            let chip = topo.net.node_mut::<Chip>(topo.chips[*switch]);
            results.traced_signals = Some(w.finish(chip, now, clock.hz)?);
        }
        Ok(results)
    }

    fn measure(&self, topo: &Topology, flows: &[FlowSpec], end: Cycle) -> RunResults {
        let clock = self.topology.params.clock();
        let mut records = Vec::with_capacity(flows.len());
        let (mut timeouts, mut retransmitted, mut duplicates) = (0, 0, 0);
        for &h in &topo.hosts {
            let host = topo.net.node::<TransportHost>(h);
            duplicates += host.duplicate_segments();
            for o in host.outcomes() {
                timeouts += o.timeouts;
                retransmitted += o.retransmitted_segments;
                records.push(FlowRecord {
                    id: o.spec.id,
                    src: o.spec.src,
                    dst: o.spec.dst,
                    size_bytes: o.spec.size_bytes,
                    start: o.spec.start,
                    finish: o.finish,
                    ideal: topo.ideal_fct(&o.spec),
                });
            }
        }
        records.sort_by_key(|r| r.id);
        let mut reorder_entropy = BTreeMap::new();
        let mut reordered = 0;
        for r in &records {
            let receiver = topo.net.node::<TransportHost>(topo.hosts[r.dst]);
            if let Some(a) = receiver.arrivals(r.id) {
                let ro = Reordering::of(a);
                reordered += ro.displaced();
                reorder_entropy.insert(r.id, ro.entropy);
            }
        }
        let mut drops = Drops::default();
        let mut drops_by_node: BTreeMap<String, Drops> = BTreeMap::new();
        let mut count = |node: String, reason: String, n: u64| {
            if n > 0 {
                drops.add(&reason, n);
                drops_by_node.entry(node).or_default().add(&reason, n);
            }
        };
        let mut links = Vec::new();
        for (i, &c) in topo.chips.iter().enumerate() {
            let chip = topo.net.node::<Chip>(c);
            for (cause, n) in &chip.counters().drops {
                count(format!("switch{i}"), format!("chip.{cause}"), *n);
            }
            for p in 0..t2_testbench::Node::port_count(chip) {
                let tx = topo.net.link_tx(c, p);
                links.push(LinkRow {
                    node: format!("switch{i}"),
                    port: p,
                    frames: tx.frames,
                    bytes: tx.bytes,
                    gbps: metrics::rate_bps(tx.bytes, end, clock) / 1e9,
                });
            }
        }
        for (i, &h) in topo.hosts.iter().enumerate() {
            let tx = topo.net.link_tx(h, 0);
            links.push(LinkRow {
                node: format!("host{i}"),
                port: 0,
                frames: tx.frames,
                bytes: tx.bytes,
                gbps: metrics::rate_bps(tx.bytes, end, clock) / 1e9,
            });
            count(
                format!("host{i}"),
                "host.foreign_frame".into(),
                topo.net.node::<TransportHost>(h).foreign(),
            );
        }
        count(
            "network".into(),
            "network.unlinked_port".into(),
            topo.net.unlinked_drops(),
        );
        let hosts = HostSet {
            hosts: topo.hosts.len(),
            host_bps: self.topology.link_bps,
            clock,
        };
        let entropies: Vec<f64> = reorder_entropy.values().copied().collect();
        let mut frames = FrameCensus {
            on_links: topo.net.frames_on_links() as u64,
            dropped: drops.total(),
            ..FrameCensus::default()
        };
        for &h in &topo.hosts {
            let host = topo.net.node::<TransportHost>(h);
            frames.sent += host.frames_sent() - host.frames_on_nic();
            frames.received += host.frames_received() - host.foreign();
        }
        for &c in &topo.chips {
            frames.inside_chips += topo.net.node::<Chip>(c).packets_inside();
        }
        frames.unaccounted = frames.sent as i64
            - (frames.received + frames.dropped + frames.inside_chips + frames.on_links) as i64;
        let recirculated = topo
            .chips
            .iter()
            .map(|&c| topo.net.node::<Chip>(c).counters().recirculated)
            .sum();
        let mut pause_frames = BTreeMap::new();
        for (i, &c) in topo.chips.iter().enumerate() {
            let k = topo.net.node::<Chip>(c).counters();
            let n = PauseCounts {
                pfc_sent: k.pfc_xoff_sent + k.pfc_xon_sent,
                pfc_received: k.pfc_frames_received,
                bfc_received: 0,
            };
            if n != PauseCounts::default() {
                pause_frames.insert(format!("switch{i}"), n);
            }
        }
        for (i, &h) in topo.hosts.iter().enumerate() {
            let host = topo.net.node::<TransportHost>(h);
            let n = PauseCounts {
                pfc_sent: 0,
                pfc_received: host.pfc_frames(),
                bfc_received: host.bfc_frames(),
            };
            if n != PauseCounts::default() {
                pause_frames.insert(format!("host{i}"), n);
            }
        }
        RunResults {
            name: self.name.clone(),
            seed: self.seed,
            hosts: topo.hosts.len(),
            switches: topo.chips.len(),
            duration_cycles: self.duration,
            end_cycle: end,
            flows: records.len(),
            completed: records.iter().filter(|r| r.finish.is_some()).count(),
            offered_load: workload::offered_load(flows, hosts, self.duration),
            buckets: metrics::by_bucket(&records, &self.buckets),
            drops,
            drops_by_node,
            timeouts,
            retransmitted_segments: retransmitted,
            duplicate_segments: duplicates,
            reordered_segments: reordered,
            frames,
            pause_frames,
            recirculated,
            traced_signals: None,
            queue_sample_ns: self.queue_sample_ns,
            queue_samples: Vec::new(),
            mean_reorder_entropy: if entropies.is_empty() {
                0.0
            } else {
                entropies.iter().sum::<f64>() / entropies.len() as f64
            },
            records,
            reorder_entropy,
            links,
        }
    }
}

/// Appends the depth of every non-empty egress queue of every chip's front-panel ports.
fn sample_queues(t: &Topology, time_ns: u64, out: &mut Vec<QueueSample>) {
    for (switch, &c) in t.chips.iter().enumerate() {
        let chip = t.net.node::<Chip>(c);
        let tm = chip.tm();
        for port in 0..t2_testbench::Node::port_count(chip) {
            for queue in 0..tm.queue_count(port) {
                let depth_cells = tm.queue_stats(port, queue).depth_cells;
                if depth_cells > 0 {
                    out.push(QueueSample {
                        time_ns,
                        switch,
                        port,
                        queue,
                        depth_cells,
                    });
                }
            }
        }
    }
}

fn all_done(t: &Topology) -> bool {
    t.hosts
        .iter()
        .all(|&h| t.net.node::<TransportHost>(h).all_done())
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}

impl RunResults {
    /// The terminal summary.
    pub fn text(&self, clock: t2_clock::Clock) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "scenario         {} (seed {})", self.name, self.seed);
        let _ = writeln!(
            s,
            "network          {} hosts, {} switches",
            self.hosts, self.switches
        );
        let _ = writeln!(
            s,
            "simulated        {} ns (flows start in the first {} ns)",
            clock.format_ns(self.end_cycle),
            clock.format_ns(self.duration_cycles)
        );
        let _ = writeln!(
            s,
            "flows            {} completed of {}, offered load {:.3}",
            self.completed, self.flows, self.offered_load
        );
        let _ = writeln!(
            s,
            "retransmission   {} timeouts, {} segments resent, {} duplicates received",
            self.timeouts, self.retransmitted_segments, self.duplicate_segments
        );
        let _ = writeln!(
            s,
            "reordering       {} segments displaced, mean entropy {:.4}",
            self.reordered_segments, self.mean_reorder_entropy
        );
        let f = &self.frames;
        let _ = writeln!(
            s,
            "frames           {} sent = {} received + {} dropped + {} in chips + {} on links ({} unaccounted)",
            f.sent, f.received, f.dropped, f.inside_chips, f.on_links, f.unaccounted
        );
        let _ = writeln!(s, "drops            {}", self.drops.total());
        for (reason, n) in &self.drops.0 {
            let _ = writeln!(s, "  {reason:<30} {n}");
        }
        for (node, d) in &self.drops_by_node {
            let by: Vec<String> = d.0.iter().map(|(r, n)| format!("{r} {n}")).collect();
            let _ = writeln!(s, "  at {node:<27} {}", by.join(", "));
        }
        let _ = writeln!(
            s,
            "slowdown by size  flows  done    mean     p50     p95     p99"
        );
        for b in &self.buckets {
            let label = match (b.lower, b.upper) {
                (0, None) => "all".to_string(),
                (lo, None) => format!(">= {lo} B"),
                (lo, Some(hi)) => format!("{lo}..{hi} B"),
            };
            let _ = writeln!(
                s,
                "  {label:<16} {:>5} {:>5} {:>7} {:>7} {:>7} {:>7}",
                b.flows,
                b.completed,
                opt(b.mean_slowdown),
                opt(b.p50_slowdown),
                opt(b.p95_slowdown),
                opt(b.p99_slowdown)
            );
        }
        s
    }

    /// Writes `summary.json`, `flows.csv` and `links.csv` into `dir`, and `queues.csv` when
    /// queue depths were sampled.
    pub fn write(&self, dir: &Path, clock: t2_clock::Clock) -> Result<(), String> {
        let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let json = serde_json::to_string_pretty(self).expect("results serialize");
        let p = dir.join("summary.json");
        std::fs::write(&p, json + "\n").map_err(|e| io(&p, e))?;
        let mut csv = String::from(
            "id,src,dst,size_bytes,start_cycle,finish_cycle,fct_cycles,ideal_cycles,slowdown,throughput_gbps,reorder_entropy\n",
        );
        for r in &self.records {
            let cell = |v: Option<String>| v.unwrap_or_default();
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{},{},{},{}",
                r.id,
                r.src,
                r.dst,
                r.size_bytes,
                r.start,
                cell(r.finish.map(|f| f.to_string())),
                cell(r.fct().map(|f| f.to_string())),
                r.ideal,
                cell(r.slowdown().map(|x| format!("{x:.4}"))),
                cell(r.throughput_bps(clock).map(|x| format!("{:.4}", x / 1e9))),
                cell(self.reorder_entropy.get(&r.id).map(|x| format!("{x:.6}"))),
            );
        }
        let p = dir.join("flows.csv");
        std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
        let mut csv = String::from("node,port,frames,bytes,gbps\n");
        for l in &self.links {
            let _ = writeln!(
                csv,
                "{},{},{},{},{:.4}",
                l.node, l.port, l.frames, l.bytes, l.gbps
            );
        }
        let p = dir.join("links.csv");
        std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
        if self.queue_sample_ns.is_some() {
            // Rows at multiples of the period; a queue without a row was empty then.
            let mut csv = String::from("time_ns,node,port,queue,depth_cells\n");
            for q in &self.queue_samples {
                let _ = writeln!(
                    csv,
                    "{},switch{},{},{},{}",
                    q.time_ns, q.switch, q.port, q.queue, q.depth_cells
                );
            }
            let p = dir.join("queues.csv");
            std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
        }
        Ok(())
    }
}
