//! Congestion schemes, one folder each, registered by name in [`SCHEMES`].
//!
//! A scheme is what a comparison holds fixed per run: the program every switch runs (built
//! from the scheme's parameters and the port speed), the egress queues of every switch port,
//! and what the hosts do (their transport's congestion control and the host features of
//! `t2_testbench::host_feature` they run: which pause frames they honour, how they tag
//! frames, whether they resend bounced packets). The command line (`report --scheme`), the
//! scenario files (`scheme = "dctcp"`, `[scheme_params]`) and comparisons find a scheme here
//! by its name. Adding a scheme is a new folder and one line in [`SCHEMES`].

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock};
use t2_pipeline::ir::Program;
use t2_testbench::transport::{Congestion, WindowAlgorithm};
use t2_testbench::{FeatureSpec, TransportConfig};
use t2_tm::QueueConfig;

use crate::chip::params::Tofino2Params;
use crate::scenario::host_keys::HostKey;
use crate::scenario::results::{BounceReport, PauseKind};
use crate::scenario::topology::{IdealRule, ShapeKind};

pub mod bfc;
pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_pfc;
pub mod droptail;
pub mod hpcc;
pub mod mice_elephant;
pub mod pabo;
pub mod pias;
pub mod slytherin;

/// Every scheme, by name.
pub static SCHEMES: &[&Scheme] = &[
    &droptail::SCHEME,
    &dctcp::SCHEME,
    &slytherin::SCHEME,
    &pabo::SCHEME,
    &pias::SCHEME,
    &mice_elephant::SCHEME,
    &mice_elephant::HYBRID,
    &mice_elephant::PFC_ONLY,
    &mice_elephant::QCN_ONLY,
    &bfc::SCHEME,
    &dctcp_pfc::SCHEME,
    &dcqcn::SCHEME,
    &hpcc::SCHEME,
];

/// The `[transport]` keys of scenario files that turn on a scheme's host feature without
/// the scheme, in the order their features are called (after PFC's `honour_pfc`).
pub static HOST_KEYS: &[HostKey] = &[
    mice_elephant::qcn::scenario::HOST_KEY,
    bfc::host::HOST_KEY,
    pabo::host::HOST_KEY,
];

/// The window algorithms of the schemes' TCP hosts, by the name `transport.congestion`
/// gives them (besides the transport's own `fixed` and `reno`).
pub static WINDOWS: &[WindowAlgorithm] = &[dctcp::host::WINDOW];

/// The topologies the schemes bring, by the name `topology.kind` gives them (besides the
/// built-in ones).
pub static SHAPES: &[&ShapeKind] = &[&pabo::topology::TREE];

/// The ideal-FCT rules the schemes bring, by the name `output.ideal` gives them (besides
/// `plain_forwarding` and `scheme_pipeline`).
pub static IDEALS: &[&IdealRule] = &[&bfc::ideal::ARTIFACT];

/// The schemes' own pause frames, counted in the results beside PFC's (at most
/// [`crate::scenario::MAX_PAUSE_KINDS`]).
pub static PAUSES: &[PauseKind] = &[bfc::host::PAUSE_KIND];

/// How the schemes whose switches send frames back toward their sources report it.
pub static BOUNCES: &[BounceReport] = &[pabo::host::BOUNCE_REPORT];

/// A scheme: its name, what it is, its parameters and how to build it.
#[derive(Debug)]
pub struct Scheme {
    pub name: &'static str,
    /// One line: what the switches and hosts do.
    pub summary: &'static str,
    /// The scheme's page under `docs/`.
    pub doc: &'static str,
    pub params: &'static [Param],
    /// The setup for a network whose ports all run at `target.link_bps`.
    pub build: fn(&SchemeParams, &Target) -> Setup,
    /// The programs shipped under `programs/`, with their file names (built from the
    /// default parameters at 100 Gb/s; a test keeps the files in step).
    pub shipped: fn() -> Vec<(&'static str, Program)>,
}

/// A scheme's switch program in P4, built into the binary: its path in the source tree (the
/// name its errors and `t2sim report --p4` use) and its text.
#[derive(Clone, Copy, Debug)]
pub struct P4Source {
    pub path: &'static str,
    pub text: &'static str,
}

/// `src/schemes/common.p4`: the headers, parsers, deparsers and host-route forwarding every
/// scheme's P4 program includes.
pub const COMMON_P4: P4Source = P4Source {
    path: "src/schemes/common.p4",
    text: include_str!("common.p4"),
};

impl P4Source {
    /// The program compiled with `defines` (`NAME=VALUE`, as `-D` gives them), named after
    /// its file as every P4 program is (`dctcp.p4` is program `dctcp`). The sources are the
    /// binary's own, so this panics (with the file, line and column) only for a bug in a
    /// shipped program, which the tests rule out by compiling every one across its
    /// parameter range, or when the machine has no `cpp` (the message says how to install
    /// it; `docs/p4.md`).
    pub fn compile(&self, defines: &[String]) -> Program {
        self.compiled(defines).program
    }

    /// [`P4Source::compile`], with the control-plane names (tables and actions by their P4
    /// names) that a scheme needs to install entries computed from its parameters
    /// ([`install`]).
    pub fn compiled(&self, defines: &[String]) -> t2_pipeline::p4::Compiled {
        self.compiled_with(&[], defines)
    }

    /// [`P4Source::compiled`] for a program that also includes the held files `includes`
    /// (`pfc_qcn.p4` includes `mice_elephant.p4`).
    pub fn compiled_with(
        &self,
        includes: &[P4Source],
        defines: &[String],
    ) -> t2_pipeline::p4::Compiled {
        // A sweep builds a scheme at every point, mostly with the same parameters: compile
        // each (program, defines) once per process rather than run cpp every time.
        type Cache = Mutex<HashMap<(&'static str, Vec<String>), t2_pipeline::p4::Compiled>>;
        static COMPILED: OnceLock<Cache> = OnceLock::new();
        let key = (self.path, defines.to_vec());
        let cache = COMPILED.get_or_init(Default::default);
        if let Some(c) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return c.clone();
        }
        let mut files = vec![(self.path, self.text), (COMMON_P4.path, COMMON_P4.text)];
        files.extend(includes.iter().map(|i| (i.path, i.text)));
        let opts = t2_pipeline::p4::Options {
            include_dirs: Vec::new(),
            defines: defines.to_vec(),
        };
        let name = t2_pipeline::p4::program_name(std::path::Path::new(self.path));
        let compiled = match t2_pipeline::p4::compile_held(self.path, &files, &opts, &name) {
            Ok(c) => c,
            Err(e) => panic!("a shipped scheme program does not compile: {e}"),
        };
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, compiled.clone());
        compiled
    }
}

/// Installs exact-match entries into table `table` of `program` (compiled as `c`), as a
/// control plane does, by P4 names: each entry is its key values, the P4 name of its
/// action and the action's arguments. The names are the shipped program's own, so a wrong
/// one is a bug, and panics naming it.
pub fn install<'a>(
    c: &t2_pipeline::p4::Compiled,
    program: &mut Program,
    table: &str,
    entries: impl IntoIterator<Item = (Vec<u64>, &'a str, Vec<u64>)>,
) {
    let exact = entries.into_iter().map(|(key, action, args)| {
        let key = key
            .iter()
            .map(|&value| t2_pipeline::ir::KeyValue { value, mask: None })
            .collect();
        (key, action, args)
    });
    install_keys(c, program, table, exact);
}

/// [`install`] with each key value given whole (a ternary entry's value and mask), as the
/// control plane adds ternary entries: in priority order, the first matching wins.
pub fn install_keys<'a>(
    c: &t2_pipeline::p4::Compiled,
    program: &mut Program,
    table: &str,
    entries: impl IntoIterator<Item = (Vec<t2_pipeline::ir::KeyValue>, &'a str, Vec<u64>)>,
) {
    let info = c
        .table(table)
        .unwrap_or_else(|| panic!("{}: no table `{table}`", program.name));
    let ir = program
        .tables
        .iter_mut()
        .find(|t| t.name == info.ir_name)
        .expect("a table the compiler names is in its program");
    for (key, action, args) in entries {
        let (_, action_ir) = info
            .actions
            .iter()
            .find(|(p4, _)| p4 == action)
            .unwrap_or_else(|| panic!("table `{table}` has no action `{action}`"));
        ir.entries.push(t2_pipeline::ir::Entry {
            key,
            action: t2_pipeline::ir::ActionCall::new(action_ir, &args),
            members: Vec::new(),
        });
    }
}

/// Parameter overrides by scheme name (`SCHEME -> PARAM -> value`).
pub type SchemeSettings = BTreeMap<String, BTreeMap<String, f64>>;

/// A tunable of a scheme: its default, its range and what it means.
#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    /// Only whole numbers.
    pub integer: bool,
    /// Meaning and unit, and where the default comes from.
    pub doc: &'static str,
}

/// What a scheme is built for.
pub struct Target<'a> {
    pub params: &'a Tofino2Params,
    /// Speed of every port, NIC and link, b/s.
    pub link_bps: u64,
    /// Whether destinations have equal-cost paths (leaf-spine with several spines,
    /// fat-tree): the host-route table then needs an action selector ([`with_ecmp`]).
    pub multipath: bool,
}

/// `program` with an action selector on its `ipv4_host` table (and on `ipv4_source`, the way
/// back toward a source, when it has one) over the 5-tuple (1024 groups of up to 16 members),
/// so that the chip installs a destination's equal-cost routes as one group and each flow
/// keeps one path; the program is renamed `<name>` with
/// `_switch` replaced by `_ecmp` (or `_ecmp` added).
pub fn with_ecmp(mut program: Program) -> Program {
    program.name = match program.name.strip_suffix("_switch") {
        Some(stem) => format!("{stem}_ecmp"),
        None => format!("{}_ecmp", program.name),
    };
    assert!(
        program
            .tables
            .iter()
            .any(|t| t.name == crate::chip::pipes::ROUTE_TABLE),
        "a scheme's program has ipv4_host"
    );
    for table in program.tables.iter_mut().filter(|t| {
        t.name == crate::chip::pipes::ROUTE_TABLE || t.name == crate::chip::pipes::SOURCE_TABLE
    }) {
        table.selector = Some(t2_pipeline::ir::Selector {
            inputs: t2_pipeline::blocks::FIVE_TUPLE
                .iter()
                .map(|f| f.to_string())
                .collect(),
            groups: 1024,
            max_members: 16,
        });
    }
    program
}

impl Target<'_> {
    /// `program` as it must be for this target: with ECMP when paths are many.
    pub fn routed(&self, program: Program) -> Program {
        if self.multipath {
            with_ecmp(program)
        } else {
            program
        }
    }
}

/// The parameters of one scheme, every one set (defaults filled in, ranges checked).
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeParams {
    values: BTreeMap<&'static str, f64>,
}

impl SchemeParams {
    /// The value of `name`, which must be one of the scheme's own parameters.
    pub fn get(&self, name: &str) -> f64 {
        *self
            .values
            .get(name)
            .unwrap_or_else(|| panic!("a scheme asked for `{name}`, which it does not declare"))
    }

    /// A whole-number parameter (checked as such when the parameters were resolved).
    pub fn int(&self, name: &str) -> u64 {
        self.get(name) as u64
    }

    /// `name = value` pairs in name order, for result files.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.values.iter().map(|(k, v)| (*k, *v))
    }
}

/// What every switch and host of a run does under a scheme.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The program every switch runs; its `ipv4_host` table gets the routes.
    pub program: Program,
    /// Every switch port's egress queues; `None` keeps the TM's default carving.
    pub port_queues: Option<Vec<QueueConfig>>,
    pub hosts: Hosts,
    /// The TM's PFC settings on every switch; `None` keeps the scenario's (`tm.pfc_*`).
    pub pfc: Option<Pfc>,
    /// `(session, bytes)`: mirror session `session` of every switch sends its copies, cut
    /// to `bytes`, to pipe 0's recirculation port (where a program turns them into control
    /// frames and routes them back into the network, as QCN's CNMs are); `None`: nothing.
    pub recirculation_mirror: Option<(u8, u32)>,
    /// What every switch needs beyond its program and queues (mirror sessions, pktgen
    /// applications, control-plane entries that depend on the switch's ports); `None` for
    /// schemes that need nothing more.
    pub chip: Option<ChipSetup>,
}

/// PFC as a scheme sets it on every switch's TM: which classes are lossless and the
/// per-(ingress port, class) thresholds, in 176-byte cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pfc {
    /// Bit `c` for class `c`.
    pub lossless_classes: u8,
    pub xoff_cells: u32,
    pub xon_cells: u32,
    pub headroom_cells: u32,
    /// The dynamic threshold in place of `xoff_cells`/`xon_cells`
    /// (`t2_tm::TmParams::pfc_dynamic_per_mille`); `None`: the static ones.
    pub dynamic_per_mille: Option<u32>,
    /// With `Some(k)`, the headroom is sized from the network's links instead of
    /// `headroom_cells`: `k` one-way link delays of bytes at the link's rate, in cells rounded
    /// up (the HPCC ns-3 artifact's `rate * delay / 8 * 3`, `scratch/third.cc`: k = 3).
    pub headroom_link_delays: Option<u32>,
}

impl Pfc {
    /// Writes these settings into `tm` (a headroom sized from the links keeps
    /// `headroom_cells`: [`Pfc::apply_on_links`] knows the links).
    pub fn apply(&self, tm: &mut t2_tm::TmParams) {
        tm.pfc_lossless_classes = self.lossless_classes;
        tm.pfc_xoff_cells = self.xoff_cells;
        tm.pfc_xon_cells = self.xon_cells;
        tm.pfc_headroom_cells = self.headroom_cells;
        tm.pfc_dynamic_per_mille = self.dynamic_per_mille;
    }

    /// Writes these settings into `tm` for a network whose links run at `link_bps` with
    /// `link_delay_ns` of propagation delay.
    pub fn apply_on_links(&self, tm: &mut t2_tm::TmParams, link_bps: u64, link_delay_ns: u64) {
        self.apply(tm);
        if let Some(k) = self.headroom_link_delays {
            tm.pfc_headroom_cells = headroom_cells(k, link_bps, link_delay_ns, tm.cell_bytes);
        }
    }
}

/// `delays` one-way delays of `link_delay_ns` at `link_bps`, in cells of `cell_bytes`
/// rounded up: the headroom a lossless group needs for what is in flight when it pauses.
pub fn headroom_cells(delays: u32, link_bps: u64, link_delay_ns: u64, cell_bytes: u32) -> u32 {
    let bytes = link_bps as u128 * link_delay_ns as u128 * delays as u128 / 8 / 1_000_000_000;
    bytes
        .div_ceil(cell_bytes.max(1) as u128)
        .min(u32::MAX as u128) as u32
}

/// A scheme's per-switch set-up, run on every switch after the network is built and
/// before the run.
#[derive(Clone, Copy, Debug)]
pub struct ChipSetup {
    /// Period of the scheme's periodic control frames, cycles (passed to `apply`).
    pub refresh_cycles: u64,
    pub apply: fn(&mut crate::Chip, u64) -> Result<(), String>,
}

impl ChipSetup {
    /// Sets up `chip`.
    pub fn apply_to(&self, chip: &mut crate::Chip) -> Result<(), String> {
        (self.apply)(chip, self.refresh_cycles)
    }
}

/// What the hosts do under a scheme: their part of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    pub congestion: Congestion,
    /// The scheme's host side: the features (`t2_testbench::host_feature`) every TCP host
    /// runs, one instance per host, called in this order (e.g. `pfc::spec()` to honour PFC,
    /// `pias::spec(tags)` to tag by bytes sent). A new scheme's host behaviour is a feature
    /// module of its own, named here.
    pub features: Vec<FeatureSpec>,
    /// The loss recovery the scheme's hosts run; `None` keeps the scenario's (a scenario's
    /// own `transport.recovery` wins either way).
    pub recovery: Option<t2_testbench::Recovery>,
    /// RDMA-style NICs in place of the TCP transport (DCQCN's); their packet size and
    /// retransmission timer are the scenario's `transport.mss` and `transport.rto_us`. They
    /// honour PFC by their own `honour_pfc`, not by `features`.
    pub rdma: Option<t2_testbench::rdma::RdmaConfig>,
}

impl Hosts {
    /// Fixed-window senders with no feature: the hosts of a scheme that lives in the
    /// switches alone.
    pub const PLAIN: Hosts = Hosts {
        congestion: Congestion::Fixed,
        features: Vec::new(),
        recovery: None,
        rdma: None,
    };

    /// Sets the transport's congestion control to the scheme's, and `features` (the
    /// scenario's own, from its `[transport]`) to the scheme's: a feature of a kind the
    /// scenario sets keeps the scenario's settings (its `[transport.qcn]` wins over the
    /// scheme's QCN defaults), and one the scheme does not name stays, after the scheme's.
    pub fn apply(&self, transport: &mut TransportConfig, features: &mut Vec<FeatureSpec>) {
        transport.congestion = self.congestion;
        let own = std::mem::take(features);
        for spec in &self.features {
            let mine = own.iter().find(|o| o.kind() == spec.kind());
            features.push(mine.unwrap_or(spec).clone());
        }
        for spec in own {
            if !features.iter().any(|f| f.kind() == spec.kind()) {
                features.push(spec);
            }
        }
        if let Some(r) = self.recovery {
            transport.recovery = r;
        }
    }

    /// The RDMA-style NICs the hosts have in place of the TCP transport, if the scheme's
    /// hosts are such NICs: the scheme's, with the packet size and retransmission timer of
    /// `transport` (the scenario's `transport.mss` and `transport.rto_us`).
    pub fn nic(&self, transport: &TransportConfig) -> Option<t2_testbench::rdma::RdmaConfig> {
        self.rdma.clone().map(|r| t2_testbench::rdma::RdmaConfig {
            mtu: transport.mss,
            rto: transport.rto,
            ..r
        })
    }
}

/// How a scheme's program sits on the chip: the verdict and the few figures a comparison
/// shows beside its results (the whole report is `t2sim report --scheme NAME`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    pub fits: bool,
    /// Why not, when it does not fit.
    pub reason: Option<String>,
    /// Stages holding at least one unit.
    pub stages_used: usize,
    /// SRAM used over all stages, percent of the pipe's.
    pub sram_percent: f64,
    /// Register arrays' RAMs, percent of the pipe's SRAM.
    pub stateful_percent: f64,
    /// Ingress + egress MAU cycles.
    pub mau_cycles: u32,
    /// Whether any table recirculates or mirrors packets.
    pub recirculates: bool,
    pub mirrors: bool,
}

impl Fit {
    /// Places `program` under Tofino2's budgets with `params`.
    pub fn of(program: &Program, params: &Tofino2Params) -> Result<Fit, String> {
        let (report, headroom) = crate::headroom::feasibility(program, params)
            .map_err(|e| format!("{}: {e}", program.name))?;
        let total = |name: &str| {
            report
                .totals
                .iter()
                .find(|a| a.resource == name)
                .map_or(0.0, |a| a.percent)
        };
        Ok(Fit {
            fits: report.fits,
            reason: report.failure.as_ref().map(|f| f.to_string()),
            stages_used: report.stages.iter().filter(|s| !s.units.is_empty()).count(),
            sram_percent: total("sram"),
            stateful_percent: report.stateful.rams.percent,
            mau_cycles: report.latency.iter().map(|l| l.mau_cycles).sum(),
            recirculates: !headroom.recirculating_tables.is_empty(),
            mirrors: !headroom.mirroring_tables.is_empty(),
        })
    }

    /// `fits` or `does not fit (reason)`.
    pub fn verdict(&self) -> String {
        match &self.reason {
            None if self.fits => "fits".to_string(),
            None => "does not fit".to_string(),
            Some(r) => format!("does not fit ({r})"),
        }
    }
}

/// The scheme called `name`; the error lists the ones there are.
pub fn find(name: &str) -> Result<&'static Scheme, String> {
    SCHEMES
        .iter()
        .copied()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no scheme `{name}` (schemes: {})", names().join(", ")))
}

/// The names of every scheme, in registration order.
pub fn names() -> Vec<&'static str> {
    SCHEMES.iter().map(|s| s.name).collect()
}

/// The lossless baselines of BFC's and HPCC's evaluations (RDMA-style NICs, PFC with the
/// dynamic threshold). They are schemes like the others, but the no-argument comparison
/// leaves them out: their papers ran them in a buffer and on links of their own
/// (`scenarios/compare_lossless.toml` runs them).
pub const LOSSLESS_BASELINES: &[&str] = &["dctcp-pfc", "dcqcn", "hpcc"];

/// The schemes the no-argument comparison runs (and `compare` when neither the command nor
/// the file names any): every scheme but the [`LOSSLESS_BASELINES`], in registration order.
pub fn default_comparison_names() -> Vec<&'static str> {
    names()
        .into_iter()
        .filter(|n| !LOSSLESS_BASELINES.contains(n))
        .collect()
}

impl Scheme {
    /// The parameters with `overrides` applied over the defaults. Errors name the
    /// parameter and the problem: unknown name, not a whole number, out of range.
    pub fn resolve(&self, overrides: &BTreeMap<String, f64>) -> Result<SchemeParams, String> {
        for name in overrides.keys() {
            if !self.params.iter().any(|p| p.name == name) {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(format!(
                    "{name}: scheme {} has no such parameter (it has: {})",
                    self.name,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
        let mut values = BTreeMap::new();
        for p in self.params {
            let v = overrides.get(p.name).copied().unwrap_or(p.default);
            if !v.is_finite() || v < p.min || v > p.max {
                return Err(format!(
                    "{}: {v} is outside {}..={} ({})",
                    p.name, p.min, p.max, p.doc
                ));
            }
            if p.integer && v.fract() != 0.0 {
                return Err(format!("{}: {v} is not a whole number", p.name));
            }
            values.insert(p.name, v);
        }
        // One PFC class's thresholds, wherever a scheme has them: XON at most XOFF, and a
        // buffer above XOFF (its headroom at least one 176-byte cell), as the parameter file
        // requires of the chip's own (`Tofino2Params::validate`).
        if let (Some(&xoff), Some(&xon), Some(&buffer)) = (
            values.get("pfc_xoff_bytes"),
            values.get("pfc_xon_bytes"),
            values.get("pfc_buffer_bytes"),
        ) {
            if xon > xoff {
                return Err(format!(
                    "pfc_xon_bytes: {xon} is above pfc_xoff_bytes ({xoff}): a class resumes \
                     below the threshold that paused it"
                ));
            }
            if (buffer / 176.0).floor() <= (xoff / 176.0).floor() {
                return Err(format!(
                    "pfc_buffer_bytes: {buffer} leaves no headroom above pfc_xoff_bytes \
                     ({xoff}): the buffer is XOFF plus at least one 176-byte cell"
                ));
            }
        }
        // A marking ramp, wherever a scheme has one (DCQCN's): Kmax above Kmin.
        if let (Some(&kmin), Some(&kmax)) = (
            values.get("kmin_bytes_per_gbps"),
            values.get("kmax_bytes_per_gbps"),
        ) {
            if kmax <= kmin {
                return Err(format!(
                    "kmax_bytes_per_gbps: {kmax} is not above kmin_bytes_per_gbps ({kmin}): \
                     the marking ramp runs from Kmin up to Kmax"
                ));
            }
        }
        // MLFQ demotion thresholds, wherever a scheme has them (PIAS's): each above the one
        // before, as a flow is demoted past them in turn.
        let thresholds: Vec<(&str, f64)> = pias::THRESHOLD_PARAMS
            .iter()
            .filter_map(|&name| values.get(name).map(|&v| (name, v)))
            .collect();
        for pair in thresholds.windows(2) {
            let ((before, low), (name, v)) = (pair[0], pair[1]);
            if v <= low {
                return Err(format!(
                    "{name}: {v} is not above {before} ({low}): a flow is demoted past the \
                     thresholds in turn, so each is above the one before"
                ));
            }
        }
        Ok(SchemeParams { values })
    }

    /// The setup with the default parameters.
    pub fn default_setup(&self, target: &Target) -> Setup {
        let params = self
            .resolve(&BTreeMap::new())
            .expect("a scheme's defaults are inside its ranges");
        (self.build)(&params, target)
    }

    /// A page of text: the scheme, its parameters with defaults and ranges.
    pub fn describe(&self) -> String {
        let mut s = format!("{}: {} (docs: {})\n", self.name, self.summary, self.doc);
        for p in self.params {
            let _ = writeln!(
                s,
                "  {} = {} ({}..={}) {}",
                p.name, p.default, p.min, p.max, p.doc
            );
        }
        s
    }
}

/// Parses `name=value` settings (as `--set` gives them) into overrides; errors name the
/// setting.
pub fn parse_settings(settings: &[String]) -> Result<BTreeMap<String, f64>, String> {
    let mut out = BTreeMap::new();
    for s in settings {
        let Some((name, value)) = s.split_once('=') else {
            return Err(format!("--set {s}: expected NAME=VALUE"));
        };
        let v: f64 = value
            .trim()
            .parse()
            .map_err(|_| format!("--set {s}: `{}` is not a number", value.trim()))?;
        if out.insert(name.trim().to_string(), v).is_some() {
            return Err(format!("--set {s}: `{}` is set twice", name.trim()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenarios_own_qcn_parameters_win_over_the_schemes() {
        use crate::schemes::mice_elephant::qcn::{host as qcn, QcnParams};
        use t2_testbench::host_feature::pfc;
        let clock = t2_clock::Clock::tofino2();
        let standard = QcnParams::standard(clock);
        let hosts = Hosts {
            features: vec![pfc::spec(), qcn::spec(standard)],
            ..Hosts::PLAIN
        };
        // No `[transport.qcn]`: the scheme's reaction points.
        let mut transport = TransportConfig::fixed(64_000, 1_000);
        let mut features = Vec::new();
        hosts.apply(&mut transport, &mut features);
        assert_eq!(features, [pfc::spec(), qcn::spec(standard)]);
        // The scenario's own parameters stay, in the scheme's place for them.
        let own = QcnParams {
            timer: 2_250_000,
            ..standard
        };
        assert_ne!(qcn::spec(own), qcn::spec(standard));
        let mut features = vec![qcn::spec(own)];
        hosts.apply(&mut transport, &mut features);
        assert_eq!(features, [pfc::spec(), qcn::spec(own)]);
        // A scheme without QCN leaves the scenario's as it is.
        let mut features = vec![qcn::spec(own)];
        Hosts::PLAIN.apply(&mut transport, &mut features);
        assert_eq!(features, [qcn::spec(own)]);
    }

    #[test]
    fn names_are_unique_and_found() {
        let mut names = names();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
        for name in names {
            assert_eq!(find(name).unwrap().name, name);
        }
        assert_eq!(
            find("nope").unwrap_err(),
            format!("no scheme `nope` (schemes: {})", super::names().join(", "))
        );
    }

    #[test]
    fn defaults_resolve_and_bad_overrides_are_named() {
        for s in SCHEMES {
            s.resolve(&BTreeMap::new()).unwrap();
        }
        let dctcp = find("dctcp").unwrap();
        let set = |k: &str, v: f64| BTreeMap::from([(k.to_string(), v)]);
        assert_eq!(
            dctcp.resolve(&set("k", 1.0)).unwrap_err(),
            "k: scheme dctcp has no such parameter (it has: k_cells)"
        );
        assert!(dctcp
            .resolve(&set("k_cells", 2.5))
            .unwrap_err()
            .starts_with("k_cells: 2.5 is not a whole number"));
        assert!(dctcp
            .resolve(&set("k_cells", -1.0))
            .unwrap_err()
            .starts_with("k_cells: -1 is outside"));
        assert_eq!(
            dctcp.resolve(&set("k_cells", 80.0)).unwrap().int("k_cells"),
            80
        );
    }

    #[test]
    fn settings_parse_with_named_errors() {
        let ok = parse_settings(&["k_cells=80".into(), " theta = 0.5".into()]).unwrap();
        assert_eq!(ok["k_cells"], 80.0);
        assert_eq!(ok["theta"], 0.5);
        assert_eq!(
            parse_settings(&["k_cells".into()]).unwrap_err(),
            "--set k_cells: expected NAME=VALUE"
        );
        assert_eq!(
            parse_settings(&["k_cells=x".into()]).unwrap_err(),
            "--set k_cells=x: `x` is not a number"
        );
    }
}
