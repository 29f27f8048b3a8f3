//! The scenario file as TOML: what each table and key is, with its default. Read by serde
//! (unknown keys are errors), then checked and turned into a [`super::ScenarioFile`] by
//! `check.rs`.

use crate::schemes::SchemeSettings;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioToml {
    /// Whether `scheme` was set by the command (a comparison, or a sweep over `scheme`)
    /// rather than by the file: the transport keys then serve the file's other schemes.
    #[serde(skip)]
    pub(super) scheme_overridden: bool,
    pub(super) name: Option<String>,
    pub(super) seed: u64,
    /// Flows start within this time.
    pub(super) duration_us: u64,
    /// Extra time after `duration_us` for started flows to finish (default 0).
    #[serde(default)]
    pub(super) drain_us: u64,
    #[serde(default)]
    pub(super) step_every_cycle: bool,
    /// A JSON parameter file (see `t2sim params`).
    pub(super) params: Option<PathBuf>,
    /// A JSON program every switch runs (see `programs/`); its `ipv4_host` table gets the
    /// host routes. Default: the built-in IPv4 forwarding.
    pub(super) program: Option<PathBuf>,
    /// With a P4 `program`: include folders for the preprocessor (cpp's `-I`), relative to
    /// the scenario file.
    #[serde(default)]
    pub(super) p4_include: Vec<PathBuf>,
    /// With a P4 `program`: preprocessor definitions `NAME` or `NAME=VALUE` (cpp's `-D`).
    #[serde(default)]
    pub(super) p4_define: Vec<String>,
    /// A scheme by name (`t2sim schemes` lists them): its program, queues and host
    /// behaviour, in place of `program`, `[queues]` and `[transport]`'s congestion and
    /// host-feature keys.
    pub(super) scheme: Option<String>,
    /// The scheme's parameters (`[scheme_params]`; TOML cannot make `scheme` both a name
    /// and a table). Unset ones keep the scheme's defaults.
    pub(super) scheme_params: Option<BTreeMap<String, f64>>,
    /// What `t2sim compare` runs this file under when the command names no schemes.
    pub(super) compare: Option<CompareToml>,
    pub(super) topology: TopologyToml,
    #[serde(default)]
    pub(super) transport: TransportToml,
    pub(super) workload: WorkloadToml,
    /// Every switch port's egress queues (default: the TM's default carving).
    pub(super) queues: Option<QueuesToml>,
    #[serde(default)]
    pub(super) output: OutputToml,
    /// `[[mirror_session]]` and `[[pktgen]]`: every switch's (`crate::scenario::control`).
    #[serde(default)]
    pub(super) mirror_session: Vec<crate::scenario::control::MirrorSessionToml>,
    #[serde(default)]
    pub(super) pktgen: Vec<crate::scenario::control::PktgenToml>,
    /// The file means some `[[control]]` operations to be refused when they land (a test of
    /// the refusal): the run lists them and still succeeds (default false: it fails).
    #[serde(default)]
    pub(super) expect_control_errors: bool,
    /// `[[control]]`: operations at a chosen time.
    #[serde(default)]
    pub(super) control: Vec<crate::scenario::control::ControlToml>,
}

/// `[compare]`: the schemes a comparison of this file runs, and their parameters.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct CompareToml {
    pub(super) schemes: Vec<String>,
    /// `[compare.params.SCHEME]`: parameters of a compared scheme.
    #[serde(default)]
    pub(super) params: SchemeSettings,
}

/// `[queues]`: how many queues every switch port has, and how the listed ones are scheduled
/// (the others keep `QueueConfig::default()`: priority 0, weight 1, no rates, pool 0).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct QueuesToml {
    pub(super) count: usize,
    #[serde(default)]
    pub(super) queue: Vec<QueueToml>,
}

/// `[[queues.queue]]`: one queue's scheduling and limits; rates in Mb/s.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct QueueToml {
    pub(super) id: usize,
    pub(super) priority: Option<u8>,
    pub(super) weight: Option<u16>,
    pub(super) min_rate_mbps: Option<u64>,
    pub(super) max_rate_mbps: Option<u64>,
    pub(super) burst_bytes: Option<u32>,
    pub(super) limit_cells: Option<u32>,
    pub(super) pfc_priority: Option<u8>,
    pub(super) app_pool: Option<u8>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct TopologyToml {
    pub(super) kind: String,
    pub(super) hosts: Option<usize>,
    pub(super) hosts_per_side: Option<usize>,
    pub(super) leaves: Option<usize>,
    pub(super) spines: Option<usize>,
    pub(super) hosts_per_leaf: Option<usize>,
    pub(super) k: Option<usize>,
    pub(super) hosts_per_edge: Option<usize>,
    #[serde(default = "default_gbps")]
    pub(super) link_gbps: u64,
    #[serde(default = "default_delay")]
    pub(super) link_delay_ns: u64,
    /// Limit on every egress queue of every chip, in 176-byte cells.
    pub(super) queue_limit_cells: Option<u32>,
    /// Every chip's shared buffer, bytes (whole cells, rounded down); default Tofino2's
    /// (`tm.buffer_cells`, docs/tofino2.md). The papers' lossless baselines ran in 12 MB.
    pub(super) buffer_bytes: Option<u64>,
}

pub(super) fn default_gbps() -> u64 {
    100
}

pub(super) fn default_delay() -> u64 {
    1000
}

/// `[transport]`. Its keys are these and the host-feature keys the schemes register
/// (`crate::schemes::HOST_KEYS`), which `features` collects for `check.rs` to check: any
/// other key is an error there.
#[derive(Deserialize, Debug)]
pub(super) struct TransportToml {
    /// `fixed` (default, or the scheme's), `reno`, or a window algorithm a scheme registers
    /// (`crate::schemes::WINDOWS`).
    #[serde(default, deserialize_with = "congestion_name")]
    pub(super) congestion: Option<String>,
    #[serde(default = "default_mss")]
    pub(super) mss: u64,
    #[serde(default = "default_window")]
    pub(super) window_bytes: u64,
    /// The initial retransmission timeout (RFC 6298 §2.1); default the minimum.
    pub(super) rto_us: Option<u64>,
    /// The lower bound of the retransmission timeout (RFC 6298 §2.4); default `rto_us`, or
    /// [`DEFAULT_MIN_RTO_US`] without it.
    pub(super) min_rto_us: Option<u64>,
    /// Loss recovery: `sack` (default), `newreno` or `go-back-n`.
    pub(super) recovery: Option<RecoveryToml>,
    /// NICs stop sending while a PFC frame pauses their class (default false).
    pub(super) honour_pfc: Option<bool>,
    /// Delayed ACKs: in-order data segments per ACK (default 1: every segment at once).
    pub(super) ack_every: Option<u32>,
    /// How long a delayed ACK waits for the next segment (default 40,000 us, Linux's).
    pub(super) delayed_ack_us: Option<u64>,
    /// Pacing at cwnd / SRTT (`TransportConfig::pacing`); default off.
    pub(super) pacing: Option<bool>,
    /// Every other key: the schemes' host-feature keys, by name.
    #[serde(flatten)]
    pub(super) features: BTreeMap<String, toml::Value>,
}

/// The keys of [`TransportToml`] besides the schemes' (for the error that names an unknown
/// one).
pub(super) const TRANSPORT_KEYS: &[&str] = &[
    "congestion",
    "mss",
    "window_bytes",
    "rto_us",
    "min_rto_us",
    "recovery",
    "honour_pfc",
    "ack_every",
    "delayed_ack_us",
    "pacing",
];

/// The names `transport.congestion` takes: the transport's own, then the schemes' window
/// algorithms.
pub(super) fn congestion_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        ["fixed", "reno"]
            .into_iter()
            .chain(crate::schemes::WINDOWS.iter().map(|w| w.name))
            .collect()
    })
}

/// The names `output.ideal` takes: the two of every run, then the schemes' rules.
pub(super) fn ideal_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        ["plain_forwarding", "scheme_pipeline"]
            .into_iter()
            .chain(crate::schemes::IDEALS.iter().map(|r| r.name))
            .collect()
    })
}

/// A string that must be one of `names`, refused as serde refuses an enum's unknown variant
/// (so the error shows its place in the file).
fn one_of<'de, D: Deserializer<'de>>(
    d: D,
    names: &'static [&'static str],
) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    if names.contains(&s.as_str()) {
        Ok(Some(s))
    } else {
        Err(serde::de::Error::unknown_variant(&s, names))
    }
}

fn congestion_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    one_of(d, congestion_names())
}

fn ideal_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    one_of(d, ideal_names())
}

pub(super) fn default_mss() -> u64 {
    1000
}
pub(super) fn default_window() -> u64 {
    100_000
}
/// The default minimum retransmission timeout, microseconds: 2 ms, the `min_rto` of the PIAS
/// authors' ns-2 artifact for PIAS and DCTCP (HKUST-SING/PIAS-NS2, `run_pias_dctcp.py`),
/// which also starts every flow's timer at it (`rtxcur_init_ = min_rto`). See
/// docs/testbench.md for the other values data-center papers used.
pub const DEFAULT_MIN_RTO_US: u64 = 2000;

/// `[transport] recovery`.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) enum RecoveryToml {
    Sack,
    Newreno,
    GoBackN,
}

impl Default for TransportToml {
    fn default() -> TransportToml {
        TransportToml {
            congestion: None,
            mss: default_mss(),
            window_bytes: default_window(),
            rto_us: None,
            min_rto_us: None,
            recovery: None,
            honour_pfc: None,
            ack_every: None,
            delayed_ack_us: None,
            pacing: None,
            features: BTreeMap::new(),
        }
    }
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(super) enum SamplingToml {
    Linear,
    Step,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(super) enum ArrivalsToml {
    Poisson,
    LogNormal,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(super) enum LoadOnToml {
    Host,
    Core,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(super) enum ArrivalProcessToml {
    PerHost,
    Global,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkloadToml {
    /// A CDF file, relative to the scenario file.
    pub(super) cdf: Option<PathBuf>,
    /// Sizes in the file are packets of this many bytes (Homa's DCTCP files: 1460).
    pub(super) size_unit_packets: Option<u64>,
    pub(super) sampling: Option<SamplingToml>,
    /// Offered load, (0, 1], as a share of the capacity `load_on` names.
    pub(super) load: Option<f64>,
    /// `host` (default: the hosts' links) or `core` (the core links, as BFC's artifact).
    pub(super) load_on: Option<LoadOnToml>,
    pub(super) arrivals: Option<ArrivalsToml>,
    /// `per_host` (default: one arrival process per host) or `global` (one for the network).
    pub(super) arrival_process: Option<ArrivalProcessToml>,
    pub(super) sigma: Option<f64>,
    pub(super) incast: Option<IncastToml>,
    #[serde(default)]
    pub(super) flows: Vec<FlowToml>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct IncastToml {
    pub(super) degree: usize,
    pub(super) size_bytes: u64,
    pub(super) period_us: u64,
    #[serde(default)]
    pub(super) first_us: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct FlowToml {
    pub(super) src: usize,
    pub(super) dst: usize,
    pub(super) size_bytes: u64,
    #[serde(default)]
    pub(super) start_ns: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct WaveGroupToml {
    pub(super) title: String,
    /// Signal patterns (as `--trace` takes them), in the order the group shows them.
    pub(super) signals: Vec<String>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputToml {
    /// Where to write results (overridden by `--out`); none: terminal only.
    pub(super) dir: Option<PathBuf>,
    /// Upper bounds of the flow-size buckets, bytes.
    pub(super) buckets: Option<Vec<u64>>,
    /// The ideal FCT slowdowns divide by: `plain_forwarding` (default), `scheme_pipeline`,
    /// or a rule a scheme registers (`crate::schemes::IDEALS`; docs/testbench.md).
    #[serde(default, deserialize_with = "ideal_name")]
    pub(super) ideal: Option<String>,
    /// Sample every chip's egress queue depths this often (`queues.csv`); none: no samples.
    pub(super) queue_sample_ns: Option<u64>,
    /// A VCD dump of one switch (relative to this file), with a GTKWave save file beside it.
    pub(super) vcd: Option<PathBuf>,
    /// Which signals (comma-separated globs, as `t2sim run --trace`; default: the default
    /// trace set).
    pub(super) trace: Option<String>,
    /// The switch to trace (default 0).
    pub(super) trace_switch: Option<usize>,
    /// Groups the save file shows first, in order: a story told in the waveform.
    #[serde(default)]
    pub(super) wave_group: Vec<WaveGroupToml>,
    /// Capture points (as `t2sim run --pcap`), written as pcapng files (docs/pcap.md).
    pub(super) pcap: Option<String>,
    /// Where the captures go (relative to this file; default: `output.dir`).
    pub(super) pcap_dir: Option<PathBuf>,
}
