//! Workloads: flow sizes from data-center CDF files, arrival processes, incast and fixed
//! flows, turned into a deterministic list of flows.
//!
//! CDF files come in the formats of `data/workloads/README.md`: `size cdf` pairs, one a
//! line, separated by blanks or a comma, with the CDF in percent (the last point is 100) or
//! as a fraction (the last point is 1); an optional first line with a single number (Homa's
//! mean size, kept for reference); sizes in bytes or in packets ([`SizeUnit`]). Two sampling
//! conventions are offered because the source simulators differ ([`Sampling`]).
//!
//! Load ([`LoadOn`]) is a share of one of two capacities. On host links (the default, HPCC's
//! traffic generator's definition): all hosts together offer `load x host rate x hosts`. On
//! the core (BFC's definition, "X% load on the core links", as its ns-3 artifact computes it
//! in `scratch/nsdifinal.cc`: flow rate = core links x link rate x load, with the core links
//! the ToR-spine links counted once, 64 in its 8 x 8 leaf-spine): all hosts together offer
//! `load x core capacity`, whatever share of the flows crosses the core. Load counts flow
//! payload bytes only.
//!
//! Arrivals ([`ArrivalScope`]): each host starts flows as its own Poisson (or log-normal)
//! process with its share of the rate (the default), or one process for the whole network
//! starts every flow, from a uniform source to a uniform other destination (BFC's artifact).
//! Gaps are sampled as floats (sampling needs it) and turned into integer cycles by a
//! fixed-point accumulator (1/65536 cycle), so rounding never biases the rate.

use crate::rng::Rng;
use std::fmt;
use std::path::{Path, PathBuf};
use t2_clock::{Clock, Cycle};

/// How a file's size column is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeUnit {
    Bytes,
    /// Sizes are packets of this many payload bytes (Homa's DCTCP files; Homa uses 1460).
    Packets(u64),
}

/// How a size is drawn from the CDF points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Linear interpolation of size between neighbouring points (HPCC, BFC).
    Linear,
    /// The smallest listed size whose CDF is at least u (Homa).
    Step,
}

/// A CDF file that cannot be used, naming the file, the line and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    pub file: PathBuf,
    /// 1-based line, when one line is at fault.
    pub line: Option<usize>,
    pub problem: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{} line {l}: {}", self.file.display(), self.problem),
            None => write!(f, "{}: {}", self.file.display(), self.problem),
        }
    }
}

impl std::error::Error for WorkloadError {}

/// A flow-size distribution: points (size in bytes, cumulative probability in [0, 1]).
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// In file order. Probabilities never decrease; sizes may (BFC's `w4.txt` does).
    points: Vec<(f64, f64)>,
    /// The mean written on the file's first line (Homa files), in bytes.
    pub stated_mean: Option<f64>,
}

impl SizeCdf {
    /// Reads a CDF file.
    pub fn load(path: &Path, unit: SizeUnit) -> Result<SizeCdf, WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError {
            file: path.to_path_buf(),
            line: None,
            problem: format!("cannot read: {e}"),
        })?;
        SizeCdf::parse(path, &text, unit)
    }

    /// Parses the text of a CDF file; `path` only names it in errors.
    pub fn parse(path: &Path, text: &str, unit: SizeUnit) -> Result<SizeCdf, WorkloadError> {
        let err = |line: Option<usize>, problem: String| WorkloadError {
            file: path.to_path_buf(),
            line,
            problem,
        };
        let scale = match unit {
            SizeUnit::Bytes => 1.0,
            SizeUnit::Packets(0) => return Err(err(None, "packets of 0 bytes".into())),
            SizeUnit::Packets(b) => b as f64,
        };
        let mut stated_mean = None;
        let mut raw: Vec<(f64, f64, usize)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let number = |s: &str| -> Result<f64, WorkloadError> {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| err(Some(n), format!("`{s}` is not a non-negative number")))
            };
            match fields.as_slice() {
                [mean] if raw.is_empty() && stated_mean.is_none() => {
                    stated_mean = Some(number(mean)? * scale)
                }
                [size, cdf] => {
                    let bytes = number(size)? * scale;
                    // A flow's bytes are counted in 32 bits: a larger size cannot be sent
                    // (and sampled from, it made no flows at all).
                    if bytes > u32::MAX as f64 {
                        return Err(err(
                            Some(n),
                            format!(
                                "size `{size}` is {bytes:e} B, above a flow's {} B",
                                u32::MAX
                            ),
                        ));
                    }
                    raw.push((bytes, number(cdf)?, n))
                }
                _ => return Err(err(Some(n), format!("expected `size cdf`, found `{line}`"))),
            }
        }
        let Some(&(_, last, _)) = raw.last() else {
            return Err(err(None, "no `size cdf` points".into()));
        };
        // The last point says whether the column is in percent or a fraction.
        let divisor = if (last - 100.0).abs() < 1e-6 {
            100.0
        } else if (last - 1.0).abs() < 1e-6 {
            1.0
        } else {
            return Err(err(
                None,
                format!(
                    "the CDF ends at {last}, not at 1 or 100 (a file without its tail cannot be sampled)"
                ),
            ));
        };
        let mut points = Vec::with_capacity(raw.len());
        let mut prev = 0.0;
        for (size, cdf, n) in raw {
            let p = cdf / divisor;
            if p + 1e-12 < prev {
                return Err(err(
                    Some(n),
                    format!("the CDF decreases (from {} to {cdf})", prev * divisor),
                ));
            }
            if p > 1.0 + 1e-9 {
                return Err(err(
                    Some(n),
                    format!("CDF value {cdf} is above the last one"),
                ));
            }
            prev = p;
            points.push((size, p.min(1.0)));
        }
        if let Some(last) = points.last_mut() {
            last.1 = 1.0;
        }
        Ok(SizeCdf {
            points,
            stated_mean,
        })
    }

    /// The exact mean size in bytes under a sampling convention (before rounding to whole
    /// bytes).
    pub fn mean(&self, sampling: Sampling) -> f64 {
        let mut sum = 0.0;
        let mut prev: Option<(f64, f64)> = None;
        for &(s, c) in &self.points {
            let (ps, pc) = prev.unwrap_or((s, 0.0));
            sum += match sampling {
                Sampling::Step => s * (c - pc),
                Sampling::Linear => (s + ps) / 2.0 * (c - pc),
            };
            prev = Some((s, c));
        }
        sum
    }

    /// The size, in whole bytes (at least 1), at cumulative probability `u` in [0, 1).
    pub fn quantile(&self, u: f64, sampling: Sampling) -> u64 {
        // First point whose probability is at least u.
        let i = self.points.partition_point(|&(_, c)| c < u);
        let i = i.min(self.points.len() - 1);
        let (s, c) = self.points[i];
        let size = match sampling {
            Sampling::Step => s,
            Sampling::Linear if i == 0 => s,
            Sampling::Linear => {
                let (ps, pc) = self.points[i - 1];
                if c > pc {
                    ps + (u - pc) / (c - pc) * (s - ps)
                } else {
                    s
                }
            }
        };
        (size.round() as u64).max(1)
    }

    pub fn sample(&self, rng: &mut Rng, sampling: Sampling) -> u64 {
        self.quantile(rng.unit(), sampling)
    }

    /// The largest size listed, in bytes.
    pub fn max_size(&self) -> u64 {
        self.points.iter().map(|p| p.0).fold(0.0, f64::max).round() as u64
    }
}

/// How the gap between a host's flow starts is distributed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process).
    Poisson,
    /// Log-normal gaps with this shape (BFC uses sigma = 2).
    LogNormal { sigma: f64 },
}

/// Which capacity `load` is a share of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadOn {
    /// The hosts' links: `load x host rate x hosts`.
    #[default]
    Host,
    /// The oversubscribed fabric's core links, counted once each ([`HostSet::core_bps`]):
    /// `load x core capacity`, as BFC's artifact sets its flow rate.
    Core,
}

/// Who draws the arrival process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalScope {
    /// Every host draws its own gaps, at its share of the rate.
    #[default]
    PerHost,
    /// One process for the network; each flow's source and destination are uniform (the
    /// destination among the other hosts), as in BFC's artifact.
    Global,
}

/// One flow to run: `size_bytes` of payload from host `src` to host `dst`, starting at
/// cycle `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowSpec {
    pub start: Cycle,
    pub id: u32,
    pub src: usize,
    pub dst: usize,
    pub size_bytes: u64,
}

/// Background traffic: flows drawn from a CDF at a target load.
#[derive(Clone, Debug)]
pub struct CdfTraffic {
    pub cdf: SizeCdf,
    pub sampling: Sampling,
    pub arrivals: Arrivals,
    /// Offered load as a fraction of the capacity `load_on` names, in (0, 1].
    pub load: f64,
    pub load_on: LoadOn,
    pub scope: ArrivalScope,
}

/// Incast: every `period` cycles from `first`, `degree` distinct random hosts each start a
/// flow of `size_bytes` to one random receiver (not among them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incast {
    pub degree: usize,
    pub size_bytes: u64,
    pub first: Cycle,
    pub period: Cycle,
}

/// Everything that makes flows in a run.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub background: Option<CdfTraffic>,
    pub incast: Option<Incast>,
    /// Flows given one by one (their `id`s are reassigned).
    pub fixed: Vec<FlowSpec>,
}

/// The hosts a workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostSet {
    pub hosts: usize,
    pub host_bps: u64,
    pub clock: Clock,
    /// The capacity of the core, b/s: its links (counted once, one direction) times their
    /// rate; `None` for a network without one (one switch). `LoadOn::Core` needs it.
    pub core_bps: Option<u64>,
}

/// Fixed-point fraction bits of the arrival accumulator.
const GAP_FRACTION_BITS: u32 = 16;

/// The stream of the one network-wide arrival process (per-host processes use 1 + host).
const GLOBAL_ARRIVALS_STREAM: u64 = 0x61_0ba1;

/// A gap in cycles as a fixed-point count of 2^-16 cycles.
fn fixed_point(gap: f64) -> u128 {
    (gap * (1u64 << GAP_FRACTION_BITS) as f64).round() as u128
}

impl Workload {
    /// The flows whose start lies in `0..duration`, sorted by start then id, ids from 0 in
    /// that order. Fails when the workload cannot run on these hosts.
    pub fn generate(
        &self,
        hosts: HostSet,
        duration: Cycle,
        rng: &Rng,
    ) -> Result<Vec<FlowSpec>, String> {
        if hosts.hosts < 2 {
            return Err(format!(
                "a workload needs at least 2 hosts, not {}",
                hosts.hosts
            ));
        }
        let mut flows = Vec::new();
        let too_many = || format!("the workload starts more than {MAX_FLOWS} flows");
        if let Some(bg) = &self.background {
            if !(bg.load > 0.0 && bg.load <= 1.0) {
                return Err(format!("load {} is outside (0, 1]", bg.load));
            }
            if let Arrivals::LogNormal { sigma } = bg.arrivals {
                if !(sigma > 0.0 && sigma.is_finite()) {
                    return Err(format!("log-normal sigma {sigma} must be above 0"));
                }
            }
            let mean_bytes = bg.cdf.mean(bg.sampling);
            let hz = hosts.clock.hz as f64;
            // The mean gap in cycles of one host's process (per host) or of the network's
            // (global): mean bits / rate, with the rate that process carries.
            let mean_gap = match (bg.load_on, bg.scope) {
                (LoadOn::Host, ArrivalScope::PerHost) => {
                    mean_bytes * 8.0 * hz / (bg.load * hosts.host_bps as f64)
                }
                (LoadOn::Host, ArrivalScope::Global) => {
                    mean_bytes * 8.0 * hz / (bg.load * hosts.host_bps as f64 * hosts.hosts as f64)
                }
                (LoadOn::Core, scope) => {
                    let Some(core) = hosts.core_bps.filter(|&c| c > 0) else {
                        return Err("load on the core needs a network with core links".into());
                    };
                    let total = bg.load * core as f64;
                    match scope {
                        ArrivalScope::PerHost => mean_bytes * 8.0 * hz * hosts.hosts as f64 / total,
                        ArrivalScope::Global => mean_bytes * 8.0 * hz / total,
                    }
                }
            };
            let gap = |r: &mut Rng| match bg.arrivals {
                Arrivals::Poisson => r.exponential(mean_gap),
                Arrivals::LogNormal { sigma } => r.log_normal(mean_gap, sigma),
            };
            let other = |r: &mut Rng, src: usize| {
                let dst = r.below(hosts.hosts as u64 - 1) as usize;
                dst + usize::from(dst >= src)
            };
            match bg.scope {
                ArrivalScope::PerHost => {
                    for src in 0..hosts.hosts {
                        let mut r = rng.fork(1 + src as u64);
                        let mut at_fixed: u128 = 0;
                        loop {
                            at_fixed += fixed_point(gap(&mut r));
                            let start = (at_fixed >> GAP_FRACTION_BITS) as u64;
                            if start >= duration {
                                break;
                            }
                            if flows.len() >= MAX_FLOWS {
                                return Err(too_many());
                            }
                            let dst = other(&mut r, src);
                            flows.push(FlowSpec {
                                start,
                                id: 0,
                                src,
                                dst,
                                size_bytes: bg.cdf.sample(&mut r, bg.sampling),
                            });
                        }
                    }
                }
                ArrivalScope::Global => {
                    let mut r = rng.fork(GLOBAL_ARRIVALS_STREAM);
                    let mut at_fixed: u128 = 0;
                    loop {
                        at_fixed += fixed_point(gap(&mut r));
                        let start = (at_fixed >> GAP_FRACTION_BITS) as u64;
                        if start >= duration {
                            break;
                        }
                        if flows.len() >= MAX_FLOWS {
                            return Err(too_many());
                        }
                        let src = r.below(hosts.hosts as u64) as usize;
                        let dst = other(&mut r, src);
                        flows.push(FlowSpec {
                            start,
                            id: 0,
                            src,
                            dst,
                            size_bytes: bg.cdf.sample(&mut r, bg.sampling),
                        });
                    }
                }
            }
        }
        if let Some(inc) = self.incast {
            if inc.degree == 0 || inc.degree >= hosts.hosts {
                return Err(format!(
                    "incast degree {} must be in 1..{} (one host receives)",
                    inc.degree, hosts.hosts
                ));
            }
            if inc.period == 0 || inc.size_bytes == 0 {
                return Err("incast period and size must be above 0".into());
            }
            let mut r = rng.fork(0x1ca5);
            let mut at = inc.first;
            while at < duration {
                let dst = r.below(hosts.hosts as u64) as usize;
                // A partial Fisher-Yates shuffle of the other hosts picks the senders.
                let mut others: Vec<usize> = (0..hosts.hosts).filter(|&h| h != dst).collect();
                if flows.len() + inc.degree > MAX_FLOWS {
                    return Err(too_many());
                }
                for k in 0..inc.degree {
                    let j = k + r.below((others.len() - k) as u64) as usize;
                    others.swap(k, j);
                    flows.push(FlowSpec {
                        start: at,
                        id: 0,
                        src: others[k],
                        dst,
                        size_bytes: inc.size_bytes,
                    });
                }
                at += inc.period;
            }
        }
        for f in &self.fixed {
            if f.src >= hosts.hosts || f.dst >= hosts.hosts || f.src == f.dst {
                return Err(format!(
                    "fixed flow {} -> {}: hosts must differ and be below {}",
                    f.src, f.dst, hosts.hosts
                ));
            }
            if f.size_bytes == 0 {
                return Err(format!("fixed flow {} -> {} has size 0", f.src, f.dst));
            }
            if f.start < duration {
                flows.push(*f);
            }
        }
        flows.sort_by_key(|f| (f.start, f.src, f.dst, f.size_bytes));
        for (i, f) in flows.iter_mut().enumerate() {
            f.id = i as u32;
        }
        Ok(flows)
    }
}

/// The most flows a workload generates (40 bytes each as specs); more is an error, not an
/// allocation that grows without bound. Running them is bounded further by the caller
/// (a scenario file runs at most 1,000,000).
pub const MAX_FLOWS: usize = 4_000_000;

/// The load the flows offer: payload bits over `duration` divided by the hosts' capacity.
pub fn offered_load(flows: &[FlowSpec], hosts: HostSet, duration: Cycle) -> f64 {
    let bits: f64 = flows.iter().map(|f| f.size_bytes as f64 * 8.0).sum();
    let seconds = duration as f64 / hosts.clock.hz as f64;
    bits / (seconds * hosts.host_bps as f64 * hosts.hosts as f64)
}

/// The load the flows that cross the core offer to it: their payload bits over `duration`
/// divided by the core's capacity (`None` without a core). `crosses(src, dst)` says whether
/// a flow's path goes through the core. Under `LoadOn::Core` this is below the target by
/// the share of flows that stay under one switch, as in BFC's artifact, whose flow rate
/// counts every flow against the core.
pub fn offered_core_load(
    flows: &[FlowSpec],
    hosts: HostSet,
    duration: Cycle,
    crosses: impl Fn(usize, usize) -> bool,
) -> Option<f64> {
    let core = hosts.core_bps.filter(|&c| c > 0)?;
    let bits: f64 = flows
        .iter()
        .filter(|f| crosses(f.src, f.dst))
        .map(|f| f.size_bytes as f64 * 8.0)
        .sum();
    let seconds = duration as f64 / hosts.clock.hz as f64;
    Some(bits / (seconds * core as f64))
}

/// The workload CDF files kept in the repository (`data/workloads/`, copies of the public
/// files listed in its README), found from a crate's manifest directory: the repository root
/// is its first ancestor holding `Cargo.lock`.
pub fn workloads_dir(manifest_dir: &Path) -> Option<PathBuf> {
    manifest_dir
        .ancestors()
        .find(|d| d.join("Cargo.lock").exists())
        .map(|root| root.join("data/workloads"))
        .filter(|d| d.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        workloads_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
            .expect("data/workloads in the repository")
    }

    #[test]
    fn every_workload_file_the_readme_lists_is_in_the_repository() {
        // The tests, scenarios and docs need nothing beside the checkout: every file of the
        // README's table is in data/workloads/, and the scenarios name only those.
        let dir = dir();
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        let listed: Vec<&str> = readme
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        assert_eq!(listed.len(), 15, "{listed:?}");
        for f in &listed {
            assert!(dir.join(f).is_file(), "{f} is not in {}", dir.display());
        }
        let scenarios = dir.join("../../scenarios");
        for e in std::fs::read_dir(&scenarios).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            for l in text.lines().filter(|l| l.starts_with("cdf")) {
                let path = l.split('"').nth(1).unwrap();
                assert!(path.starts_with("../data/workloads/"), "{l}");
                assert!(scenarios.join(path).is_file(), "{l}");
            }
        }
    }

    /// (file, unit, linear mean, step mean) from the README's table; DCTCP from its header.
    fn files() -> Vec<(&'static str, SizeUnit, f64, f64)> {
        let b = SizeUnit::Bytes;
        vec![
            ("WebSearch_distribution.txt", b, 1_711_250.0, 2_434_900.0),
            ("FbHdp_distribution.txt", b, 120_421.0, 183_897.0),
            ("GoogleRPC2008.txt", b, 2_890.0, 2_927.0),
            ("Google_AllRPC.txt", b, 2_890.0, 2_927.0),
            ("AliStorage2019.txt", b, 40_870.0, 67_050.0),
            ("W3.txt", b, 2_907.0, 2_944.0),
            ("w4.txt", b, 121_849.0, 127_797.0),
            ("Facebook_HadoopDist_All.txt", b, 121_849.0, 127_797.0),
            ("Google_SearchRPC.txt", b, 423.0, 441.0),
            ("datamining.csv", b, 5_040_000.0, 7_860_000.0),
            ("websearch.csv", b, 1_490_000.0, 1_876_000.0),
            (
                "FB_Hadoop_Inter_Rack_FlowCDF.csv",
                b,
                3_420_000.0,
                4_870_000.0,
            ),
            (
                "DCTCP_MsgSizeDist.txt",
                SizeUnit::Packets(1460),
                f64::NAN,
                1744.70 * 1460.0,
            ),
        ]
    }

    #[test]
    fn exact_means_match_the_readme() {
        for (file, unit, linear, step) in files() {
            let cdf = SizeCdf::load(&dir().join(file), unit).unwrap();
            let (l, s) = (cdf.mean(Sampling::Linear), cdf.mean(Sampling::Step));
            if !linear.is_nan() {
                assert!(
                    (l / linear - 1.0).abs() < 0.002,
                    "{file}: linear {l} vs {linear}"
                );
            }
            assert!((s / step - 1.0).abs() < 0.002, "{file}: step {s} vs {step}");
            if let Some(m) = cdf.stated_mean {
                assert!(
                    (s / m - 1.0).abs() < 0.001,
                    "{file}: step {s} vs header {m}"
                );
            }
        }
    }

    #[test]
    fn sampled_means_within_one_percent_over_a_million_samples() {
        let mut report = Vec::new();
        for (k, (file, unit, linear, step)) in files().into_iter().enumerate() {
            let cdf = SizeCdf::load(&dir().join(file), unit).unwrap();
            for (sampling, expected) in [(Sampling::Linear, linear), (Sampling::Step, step)] {
                if expected.is_nan() {
                    continue;
                }
                let n = 1_000_000u64;
                // Plain draws: reported, not asserted. The heavy-tailed files (a few flows
                // of 1000x the mean) cannot pin the mean to 1% in 10^6 plain draws.
                let mut rng = Rng::new(1000 + k as u64);
                let plain: u128 = (0..n).map(|_| cdf.sample(&mut rng, sampling) as u128).sum();
                let plain = plain as f64 / n as f64 / expected - 1.0;
                // Stratified draws (one uniform in each of n equal slices of [0, 1)) test
                // the same quantile function with the variance of the tail removed.
                let sum: u128 = (0..n)
                    .map(|i| {
                        let u = (i as f64 + rng.unit()) / n as f64;
                        cdf.quantile(u, sampling) as u128
                    })
                    .sum();
                let mean = sum as f64 / n as f64;
                let err = mean / expected - 1.0;
                report.push(format!(
                    "{file} {sampling:?}: {mean:.0} vs {expected:.0} ({:+.3}%; plain draws {:+.3}%)",
                    err * 100.0,
                    plain * 100.0
                ));
                assert!(err.abs() < 0.01, "{}", report.last().unwrap());
            }
        }
        println!("{}", report.join("\n"));
    }

    #[test]
    fn quantiles_follow_each_convention() {
        let text = "0 0\n100 50\n300 100\n";
        let cdf = SizeCdf::parse(Path::new("t"), text, SizeUnit::Bytes).unwrap();
        assert_eq!(cdf.quantile(0.25, Sampling::Linear), 50);
        assert_eq!(cdf.quantile(0.75, Sampling::Linear), 200);
        assert_eq!(cdf.quantile(0.25, Sampling::Step), 100);
        assert_eq!(cdf.quantile(0.75, Sampling::Step), 300);
        assert_eq!(
            cdf.quantile(0.0, Sampling::Linear),
            1,
            "sizes are at least 1 byte"
        );
        assert_eq!(cdf.mean(Sampling::Linear), 125.0);
        assert_eq!(cdf.mean(Sampling::Step), 200.0);
    }

    #[test]
    fn every_format_parses() {
        let p = Path::new("x");
        let pct = SizeCdf::parse(p, "0 0\n10 100\n", SizeUnit::Bytes).unwrap();
        let frac = SizeCdf::parse(p, "0 0.0\n10 1.0", SizeUnit::Bytes).unwrap();
        let csv = SizeCdf::parse(p, "0,0\r\n10,1\r\n", SizeUnit::Bytes).unwrap();
        assert_eq!(pct, frac);
        assert_eq!(frac, csv);
        let homa = SizeCdf::parse(p, "5.0\n0 0\n10 1\n", SizeUnit::Packets(2)).unwrap();
        assert_eq!(homa.stated_mean, Some(10.0));
        assert_eq!(homa.quantile(0.99, Sampling::Step), 20);
    }

    #[test]
    fn bad_files_name_the_file_and_line() {
        let p = Path::new("bad.txt");
        let e = SizeCdf::parse(p, "0 0\n10 x\n", SizeUnit::Bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad.txt line 2: `x` is not a non-negative number"
        );
        let e = SizeCdf::parse(p, "0 0\n10 60\n20 50\n30 100\n", SizeUnit::Bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad.txt line 3: the CDF decreases (from 60 to 50)"
        );
        let e = SizeCdf::parse(p, "0 0\n1 2 3\n", SizeUnit::Bytes).unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = SizeCdf::parse(p, "0 0\n10 0.47\n", SizeUnit::Bytes).unwrap_err();
        assert!(e.to_string().contains("ends at 0.47"), "{e}");
        let e = SizeCdf::parse(p, "", SizeUnit::Bytes).unwrap_err();
        assert_eq!(e.to_string(), "bad.txt: no `size cdf` points");
        let e = SizeCdf::load(Path::new("/no/such/file"), SizeUnit::Bytes).unwrap_err();
        assert!(
            e.to_string().starts_with("/no/such/file: cannot read"),
            "{e}"
        );
        // Homa's memcached file stops at 0.47: its tail is a formula, not data.
        let kv = SizeCdf::load(
            &dir().join("FacebookKeyValueMsgSizeDist.txt"),
            SizeUnit::Bytes,
        );
        assert!(kv.is_err());
    }

    fn hosts() -> HostSet {
        HostSet {
            hosts: 16,
            host_bps: 100_000_000_000,
            clock: Clock::tofino2(),
            core_bps: Some(4 * 100_000_000_000),
        }
    }

    #[test]
    fn offered_load_within_two_percent_of_target() {
        for (file, arrivals, load, ms) in [
            ("WebSearch_distribution.txt", Arrivals::Poisson, 0.5, 2000),
            (
                "AliStorage2019.txt",
                Arrivals::LogNormal { sigma: 2.0 },
                0.3,
                500,
            ),
            ("FbHdp_distribution.txt", Arrivals::Poisson, 0.7, 100),
        ] {
            let cdf = SizeCdf::load(&dir().join(file), SizeUnit::Bytes).unwrap();
            let w = Workload {
                background: Some(CdfTraffic {
                    cdf,
                    sampling: Sampling::Linear,
                    arrivals,
                    load,
                    load_on: LoadOn::Host,
                    scope: ArrivalScope::PerHost,
                }),
                ..Workload::default()
            };
            let duration = Clock::tofino2().ns_to_cycles_ceil(ms * 1_000_000);
            let flows = w.generate(hosts(), duration, &Rng::new(3)).unwrap();
            let got = offered_load(&flows, hosts(), duration);
            println!(
                "{file} {arrivals:?} load {load}: {got:.4} over {} flows",
                flows.len()
            );
            assert!((got / load - 1.0).abs() < 0.02, "{file}: {got} vs {load}");
            assert!(flows.iter().all(|f| f.src != f.dst && f.start < duration));
            assert!(flows.windows(2).all(|p| p[0].start <= p[1].start));
        }
    }

    #[test]
    fn core_load_and_one_global_process_offer_what_they_say() {
        // 16 hosts of 100 Gb/s, a core of 4 x 100 Gb/s: load 0.5 on the core is 200 Gb/s of
        // flows in all, 0.125 of the hosts' 1.6 Tb/s, whoever draws the arrivals.
        let cdf = SizeCdf::load(&dir().join("FbHdp_distribution.txt"), SizeUnit::Bytes).unwrap();
        let duration = Clock::tofino2().ns_to_cycles_ceil(200 * 1_000_000);
        let mut per_scope = Vec::new();
        for scope in [ArrivalScope::PerHost, ArrivalScope::Global] {
            let w = Workload {
                background: Some(CdfTraffic {
                    cdf: cdf.clone(),
                    sampling: Sampling::Linear,
                    arrivals: Arrivals::Poisson,
                    load: 0.5,
                    load_on: LoadOn::Core,
                    scope,
                }),
                ..Workload::default()
            };
            let flows = w.generate(hosts(), duration, &Rng::new(5)).unwrap();
            // The flow count pins the rate (Poisson: about 1/sqrt(n) = 0.5% off at n = 4e4);
            // the bytes, heavy-tailed, wander more (5% here), but a wrong capacity (x4 for
            // the core's 4 links, x16 for the hosts) would be far outside.
            let expected = 0.5 * 400e9 * 0.2 / (cdf.mean(Sampling::Linear) * 8.0);
            let n = flows.len() as f64;
            assert!(
                (n / expected - 1.0).abs() < 0.02,
                "{scope:?}: {n} flows vs {expected}"
            );
            let got = offered_load(&flows, hosts(), duration);
            assert!((got / 0.125 - 1.0).abs() < 0.08, "{scope:?}: {got}");
            // Every flow is counted against the core when all cross it.
            let core = offered_core_load(&flows, hosts(), duration, |_, _| true).unwrap();
            assert!((core / got - 4.0).abs() < 1e-9, "{scope:?}: core {core}");
            let none = offered_core_load(&flows, hosts(), duration, |_, _| false).unwrap();
            assert_eq!(none, 0.0);
            // Sources cover every host, and each host's share is about 1/16 of the flows.
            let mut per_src = [0usize; 16];
            for f in &flows {
                per_src[f.src] += 1;
                assert_ne!(f.src, f.dst);
            }
            let n = flows.len() as f64;
            assert!(per_src
                .iter()
                .all(|&c| (c as f64 / n - 1.0 / 16.0).abs() < 0.01));
            assert_eq!(flows, w.generate(hosts(), duration, &Rng::new(5)).unwrap());
            per_scope.push(flows);
        }
        assert_ne!(
            per_scope[0], per_scope[1],
            "the two processes draw differently"
        );
        // Load on the core without one is an error, not a silent host load.
        let mut w = Workload {
            background: Some(CdfTraffic {
                cdf,
                sampling: Sampling::Linear,
                arrivals: Arrivals::Poisson,
                load: 0.5,
                load_on: LoadOn::Core,
                scope: ArrivalScope::Global,
            }),
            ..Workload::default()
        };
        let single = HostSet {
            core_bps: None,
            ..hosts()
        };
        assert_eq!(
            w.generate(single, duration, &Rng::new(5)).unwrap_err(),
            "load on the core needs a network with core links"
        );
        // Host load with one global process offers the same as per-host processes.
        if let Some(bg) = w.background.as_mut() {
            bg.load_on = LoadOn::Host;
        }
        let flows = w.generate(single, duration, &Rng::new(5)).unwrap();
        let got = offered_load(&flows, single, duration);
        assert!((got / 0.5 - 1.0).abs() < 0.02, "global host load {got}");
    }

    #[test]
    fn incast_and_fixed_flows() {
        let w = Workload {
            background: None,
            incast: Some(Incast {
                degree: 4,
                size_bytes: 64_000,
                first: 100,
                period: 1000,
            }),
            fixed: vec![FlowSpec {
                start: 5,
                id: 99,
                src: 0,
                dst: 1,
                size_bytes: 7,
            }],
        };
        let flows = w.generate(hosts(), 3000, &Rng::new(1)).unwrap();
        assert_eq!(flows.len(), 1 + 3 * 4);
        assert_eq!(
            flows[0],
            FlowSpec {
                start: 5,
                id: 0,
                src: 0,
                dst: 1,
                size_bytes: 7
            }
        );
        for event in flows[1..].chunks(4) {
            let dst = event[0].dst;
            let mut srcs: Vec<usize> = event.iter().map(|f| f.src).collect();
            srcs.sort();
            srcs.dedup();
            assert_eq!(srcs.len(), 4);
            assert!(event.iter().all(|f| f.dst == dst && f.src != dst));
        }
        assert_eq!(flows, w.generate(hosts(), 3000, &Rng::new(1)).unwrap());
        let bad = Workload {
            incast: Some(Incast {
                degree: 16,
                ..w.incast.unwrap()
            }),
            ..Workload::default()
        };
        assert!(bad.generate(hosts(), 3000, &Rng::new(1)).is_err());
    }
}
