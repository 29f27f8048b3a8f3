//! Judging schemes side by side: one scenario (topology, workload, seed) run once per scheme,
//! each run's figures beside the scheme's fit on the chip, as a table for people and CSV/JSON
//! for tools, with plots (`super::plots`).
//!
//! Every run is the scenario file with `scheme` (and the scheme's `[scheme_params]`) set, so
//! the schemes see byte-for-byte the same flows: the workload is drawn from the seed before
//! any switch runs. The figures (docs/schemes.md):
//! - FCT slowdown (FCT over the ideal FCT of docs/testbench.md) p50/p99/mean per size bucket;
//! - mean throughput of completed flows (size over FCT);
//! - drops by reason, pause frames (PFC frames switches sent plus the schemes' pause frames
//!   received: BFC's), reordered segments and mean reorder entropy;
//! - PABO's bounces (CSV/JSON): share of the data frames received that had been bounced,
//!   and the most bounces of one;
//! - switch queues: the depth (cells, all queues of a port together) of every switch egress
//!   port at every sampling instant, empty ports counting as 0: its maximum and 99th
//!   percentile;
//! - the fit: verdict, stages used, SRAM and stateful share, MAU cycles, recirculation.

use crate::chip::params::Tofino2Params;
use crate::scenario::{RunResults, ScenarioFile, ScenarioText};
use crate::schemes::{self, Fit, SchemeSettings, Target};
use crate::study::stats::bucket_label;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use t2_testbench::metrics::{percentile, BucketStats};

/// Queue-depth sampling period a comparison uses when the file sets none, ns.
pub const DEFAULT_QUEUE_SAMPLE_NS: u64 = 1000;

/// One scheme's run of the scenario.
#[derive(Serialize, Debug, Clone)]
pub struct SchemeRun {
    pub scheme: String,
    /// The scheme's parameters as run.
    pub params: BTreeMap<String, f64>,
    pub fit: Fit,
    pub figures: Figures,
    pub results: RunResults,
}

/// The figures a comparison shows per scheme.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Figures {
    pub flows: usize,
    pub completed: usize,
    pub buckets: Vec<BucketStats>,
    /// Mean of size over FCT of completed flows, Gb/s.
    pub mean_flow_gbps: Option<f64>,
    pub drops: u64,
    pub pause_frames: u64,
    pub reordered_segments: u64,
    pub mean_reorder_entropy: f64,
    /// Packets recirculated by the switches.
    pub recirculated: u64,
    /// Over every (sampling instant, switch egress port), cells.
    pub max_queue_cells: Option<u64>,
    pub p99_queue_cells: Option<f64>,
    /// The switch port whose queue got deepest (`switch{i}.port{p}`).
    pub hottest_port: Option<String>,
    /// PABO: share of the data frames received that had been bounced, and the most times
    /// one was; `None` when no frame was bounced.
    pub bounced_share: Option<f64>,
    pub max_bounces: Option<u8>,
}

impl Figures {
    /// The figures of `r`, whose hosts run on a clock of `clock`.
    pub fn of(r: &RunResults, clock: t2_clock::Clock) -> Figures {
        let tputs: Vec<f64> = r
            .records
            .iter()
            .filter_map(|f| f.throughput_bps(clock))
            .collect();
        let mean_flow_gbps =
            (!tputs.is_empty()).then(|| tputs.iter().sum::<f64>() / tputs.len() as f64 / 1e9);
        let (max_queue_cells, p99_queue_cells, hottest_port) = queue_figures(r, clock);
        Figures {
            flows: r.flows,
            completed: r.completed,
            buckets: r.buckets.clone(),
            mean_flow_gbps,
            drops: r.drops.total(),
            pause_frames: r
                .pause_frames
                .values()
                .map(|p| p.pfc_sent + p.scheme_received())
                .sum(),
            reordered_segments: r.reordered_segments,
            mean_reorder_entropy: r.mean_reorder_entropy,
            recirculated: r.recirculated,
            max_queue_cells,
            p99_queue_cells,
            hottest_port,
            bounced_share: r.bounces.as_ref().map(|b| b.share()),
            max_bounces: r.bounces.as_ref().map(|b| b.bounced.max_n_p),
        }
    }
}

/// Max and p99 of port depth over every sampling instant and switch egress port (empty ones
/// as 0), and the port that got deepest; `None`s when queues were not sampled.
fn queue_figures(
    r: &RunResults,
    clock: t2_clock::Clock,
) -> (Option<u64>, Option<f64>, Option<String>) {
    let Some(period) = r.queue_sample_ns else {
        return (None, None, None);
    };
    let mut depth: BTreeMap<(u64, usize, usize), u64> = BTreeMap::new();
    for q in &r.queue_samples {
        *depth.entry((q.time_ns, q.switch, q.port)).or_insert(0) += q.depth_cells as u64;
    }
    let ports = r
        .links
        .iter()
        .filter(|l| l.node.starts_with("switch"))
        .count() as u64;
    let instants = clock.cycles_to_ns_floor(r.end_cycle) / period + 1;
    let points = (ports * instants) as usize;
    let mut values: Vec<f64> = depth.values().map(|&d| d as f64).collect();
    values.sort_by(f64::total_cmp);
    // The points with no row are empty ports: zeros below every sampled depth.
    let zeros = points.saturating_sub(values.len());
    let mut all = vec![0.0; zeros];
    all.extend(values);
    let hottest = depth
        .iter()
        .max_by_key(|(k, d)| (**d, std::cmp::Reverse(**k)))
        .map(|((_, s, p), _)| format!("switch{s}.port{p}"));
    let max = depth.values().copied().max().or(Some(0));
    (max, percentile(&all, 99.0), hottest)
}

/// A comparison: the scenario and one run per scheme, in the order asked.
#[derive(Serialize, Debug, Clone)]
pub struct Comparison {
    pub scenario: String,
    /// The clock the runs were timed by.
    #[serde(skip)]
    pub clock: t2_clock::Clock,
    pub seed: u64,
    pub hosts: usize,
    pub switches: usize,
    pub runs: Vec<SchemeRun>,
}

/// Scheme settings given as `SCHEME.PARAM=VALUE`, by scheme; errors name the setting.
pub fn scheme_settings(
    settings: &[String],
) -> Result<BTreeMap<String, BTreeMap<String, f64>>, String> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in settings {
        let Some((scheme, rest)) = s.split_once('.') else {
            return Err(format!("--set {s}: expected SCHEME.PARAM=VALUE"));
        };
        schemes::find(scheme).map_err(|e| format!("--set {s}: {e}"))?;
        out.entry(scheme.to_string())
            .or_default()
            .push(rest.to_string());
    }
    out.into_iter()
        .map(|(k, v)| {
            schemes::parse_settings(&v)
                .map(|m| (k.clone(), m))
                .map_err(|e| e.replacen("--set ", &format!("--set {k}."), 1))
        })
        .collect()
}

/// Runs the scenario `source` under each scheme of `names` (each with its `settings`
/// over its defaults and the file's `[scheme_params]`), on every core (see [`compare_on`]).
pub fn compare(
    source: &ScenarioText,
    names: &[String],
    settings: &SchemeSettings,
    each: impl Fn(&str) + Sync,
) -> Result<Comparison, String> {
    compare_on(
        source,
        names,
        settings,
        crate::study::parallel::default_threads(),
        each,
    )
}

/// [`compare`] on up to `threads` threads, one scheme's run each (a file that writes a dump
/// or captures runs its schemes one after another, since they would write the same files).
/// `each` is told when a scheme's run starts. The result does not depend on `threads`.
pub fn compare_on(
    source: &ScenarioText,
    names: &[String],
    settings: &SchemeSettings,
    threads: usize,
    each: impl Fn(&str) + Sync,
) -> Result<Comparison, String> {
    compare_seeded(source, names, settings, None, threads, each)
}

/// [`compare_on`] with the file's `seed` replaced by `seed` (when given): the comparison
/// of one seed of `t2sim compare --seeds`.
pub fn compare_seeded(
    source: &ScenarioText,
    names: &[String],
    settings: &SchemeSettings,
    seed: Option<u64>,
    threads: usize,
    each: impl Fn(&str) + Sync,
) -> Result<Comparison, String> {
    if names.is_empty() {
        return Err("no schemes to compare".into());
    }
    for (i, n) in names.iter().enumerate() {
        schemes::find(n)?;
        if names[..i].contains(n) {
            return Err(format!("scheme {n} is named twice"));
        }
    }
    for scheme in settings.keys() {
        if !names.contains(scheme) {
            return Err(format!("--set {scheme}.*: scheme {scheme} is not compared"));
        }
    }
    let seeded: Vec<(String, toml::Value)> = seed
        .map(|s| {
            let v = i64::try_from(s).map_err(|_| format!("seed {s}: above {}", i64::MAX))?;
            Ok::<_, String>(("seed".to_string(), toml::Value::Integer(v)))
        })
        .transpose()?
        .into_iter()
        .collect();
    let plain = ScenarioFile::from_text(source, &seeded)?;
    let threads = if plain.waves.is_some() || plain.pcap.is_some() {
        1
    } else {
        threads
    };
    // Runs side by side, and the cores they leave over split each run's network.
    let (at_once, per_run) =
        crate::study::parallel::share_threads(threads, names.len(), plain.threads_worth_using());
    let run_one = |_: usize, name: &String| -> Result<SchemeRun, String> {
        each(name);
        let mut overrides = seeded.clone();
        overrides.push(("scheme".to_string(), toml::Value::String(name.clone())));
        for (k, v) in settings.get(name).into_iter().flatten() {
            overrides.push((format!("scheme_params.{k}"), toml::Value::Float(*v)));
        }
        if plain.queue_sample_ns.is_none() {
            let run_ns =
                (plain.duration + plain.drain) * 1_000_000_000 / plain.topology.params.clock_hz;
            let period = DEFAULT_QUEUE_SAMPLE_NS
                .max(run_ns.div_ceil(crate::scenario::MAX_QUEUE_SAMPLES - 1));
            overrides.push((
                "output.queue_sample_ns".to_string(),
                toml::Value::Integer(period as i64),
            ));
        }
        let mut scenario = ScenarioFile::from_text(source, &overrides)?;
        scenario.set_threads(per_run);
        let (_, values) = scenario
            .scheme
            .clone()
            .expect("the scheme was set by the override");
        let program = scenario
            .topology
            .program
            .clone()
            .expect("a scheme brings a program");
        let fit = Fit::of(&program, &scenario.topology.params)?;
        let results = scenario.run()?;
        let clock = scenario.topology.params.clock();
        Ok(SchemeRun {
            scheme: name.clone(),
            params: values.iter().map(|(k, v)| (k.to_string(), v)).collect(),
            fit,
            figures: Figures::of(&results, clock),
            results,
        })
    };
    let runs = crate::study::parallel::map_in_order(names, at_once, run_one)
        .into_iter()
        .collect::<Result<Vec<SchemeRun>, String>>()?;
    let first = &runs.first().expect("at least one scheme ran").results;
    Ok(Comparison {
        scenario: first.name.clone(),
        clock: plain.topology.params.clock(),
        seed: first.seed,
        hosts: first.hosts,
        switches: first.switches,
        runs,
    })
}

/// The line that says how the figures are defined: the load the flows offered (payload
/// over the arrival window) on host links and on the core, what `load` was a share of, who
/// drew the arrivals, and the ideal FCT the slowdowns divide by. The flows are the same
/// under every scheme, so one line holds for all of them.
pub fn definitions(r: &RunResults) -> String {
    use t2_testbench::workload::{ArrivalScope, LoadOn};
    let core = r
        .offered_core_load
        .map_or(String::new(), |c| format!(", {c:.3} of the core"));
    let load_on = match r.load_on {
        LoadOn::Host => "host links",
        LoadOn::Core => "the core",
    };
    let arrivals = match r.arrival_process {
        Some(ArrivalScope::PerHost) => format!("load on {load_on}, arrivals per host; "),
        Some(ArrivalScope::Global) => format!("load on {load_on}, one arrival process; "),
        None => String::new(),
    };
    format!(
        "offered          {:.3} of host links{core}; {arrivals}slowdown over the {} ideal FCT",
        r.offered_load,
        r.ideal.name()
    )
}

fn opt1(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.2}"))
}

impl Comparison {
    /// The tables for people.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "compare          {} (seed {}): hosts {}, switches {}; the same flows under each scheme",
            self.scenario, self.seed, self.hosts, self.switches
        );
        if let Some(first) = self.runs.first() {
            let _ = writeln!(s, "{}", definitions(&first.results));
        }
        let _ = writeln!(
            s,
            "{:<13} {:<5} {:>6} {:>6} {:>5} {:>6} {:>6} {:>6} {:>7} {:>7} {:>8} {:>6} {:>7} {:>8} {:>7}",
            "scheme",
            "fit",
            "stages",
            "sram%",
            "mau",
            "flows",
            "done",
            "drops",
            "pauses",
            "recirc",
            "bounced%",
            "maxq",
            "p99q",
            "reorder",
            "gbps"
        );
        for r in &self.runs {
            let f = &r.figures;
            let _ = writeln!(
                s,
                "{:<13} {:<5} {:>6} {:>6.1} {:>5} {:>6} {:>6} {:>6} {:>7} {:>7} {:>8} {:>6} {:>7} {:>8.4} {:>7}",
                r.scheme,
                if r.fit.fits { "yes" } else { "NO" },
                r.fit.stages_used,
                r.fit.sram_percent,
                r.fit.mau_cycles,
                f.flows,
                f.completed,
                f.drops,
                f.pause_frames,
                f.recirculated,
                f.bounced_share
                    .map_or("-".to_string(), |x| format!("{:.2}", 100.0 * x)),
                f.max_queue_cells.map_or("-".to_string(), |x| x.to_string()),
                f.p99_queue_cells.map_or("-".to_string(), |x| format!("{x:.0}")),
                f.mean_reorder_entropy,
                opt1(f.mean_flow_gbps),
            );
        }
        let _ = writeln!(s, "FCT slowdown p99 (p50, mean) by flow size");
        let Some(first) = self.runs.first() else {
            return s;
        };
        let labels: Vec<String> = first.figures.buckets.iter().map(bucket_label).collect();
        let _ = write!(s, "{:<13}", "scheme");
        for l in &labels {
            let _ = write!(s, " {l:>26}");
        }
        let _ = writeln!(s);
        for r in &self.runs {
            let _ = write!(s, "{:<13}", r.scheme);
            for b in &r.figures.buckets {
                let cell = format!(
                    "{} ({}, {})",
                    opt1(b.p99_slowdown),
                    opt1(b.p50_slowdown),
                    opt1(b.mean_slowdown)
                );
                let _ = write!(s, " {cell:>26}");
            }
            let _ = writeln!(s);
        }
        for r in self.runs.iter().filter(|r| !r.fit.fits) {
            let _ = writeln!(s, "{}: {}", r.scheme, r.fit.verdict());
        }
        s
    }

    /// One CSV row per scheme: its name and parameters, then [`csv_header`]'s columns.
    pub fn csv(&self) -> String {
        let buckets = self
            .runs
            .first()
            .map_or(&[][..], |r| &r.figures.buckets[..]);
        let mut s = format!("scheme,params,{}\n", csv_header(buckets));
        for r in &self.runs {
            let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(
                s,
                "{},{},{}",
                r.scheme,
                params.join(";"),
                csv_cells(Some(&r.fit), &r.figures)
            );
        }
        s
    }

    /// Writes `compare.csv`, `compare.json`, the plots, and each scheme's own results under
    /// `DIR/<scheme>/`; returns the files written.
    pub fn write(&self, dir: &Path) -> Result<Vec<String>, String> {
        let clock = self.clock;
        let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let mut written = Vec::new();
        let p = dir.join("compare.csv");
        std::fs::write(&p, self.csv()).map_err(|e| io(&p, e))?;
        written.push(p.display().to_string());
        let p = dir.join("compare.json");
        let json = serde_json::to_string_pretty(self).expect("a comparison serializes");
        std::fs::write(&p, json + "\n").map_err(|e| io(&p, e))?;
        written.push(p.display().to_string());
        let named: Vec<(&str, &RunResults)> = self
            .runs
            .iter()
            .map(|r| (r.scheme.as_str(), &r.results))
            .collect();
        for p in crate::study::plots::pictures(&named, dir, &self.scenario)? {
            written.push(p);
        }
        for r in &self.runs {
            let sub = dir.join(&r.scheme);
            r.results.write(&sub, clock)?;
            written.push(format!("{}/", sub.display()));
        }
        Ok(written)
    }
}

/// One scenario compared under several seeds (`t2sim compare --seeds`): a [`Comparison`] per
/// seed, the same schemes in the same order in each, and each figure's mean and 95%
/// interval over the seeds (`crate::study::stats`).
#[derive(Debug, Clone)]
pub struct OverSeeds {
    pub seeds: Vec<u64>,
    pub comparisons: Vec<Comparison>,
}

impl OverSeeds {
    /// Runs `compare_seeded` once per seed of `seeds` (at least one, none twice).
    pub fn run(
        source: &ScenarioText,
        names: &[String],
        settings: &SchemeSettings,
        seeds: &[u64],
        threads: usize,
        each: impl Fn(u64, &str) + Sync,
    ) -> Result<OverSeeds, String> {
        if seeds.is_empty() {
            return Err("--seeds: no seeds given".into());
        }
        for (i, s) in seeds.iter().enumerate() {
            if seeds[..i].contains(s) {
                return Err(format!("--seeds: seed {s} is named twice"));
            }
        }
        let comparisons = seeds
            .iter()
            .map(|&seed| {
                compare_seeded(source, names, settings, Some(seed), threads, |n| {
                    each(seed, n)
                })
                .map_err(|e| format!("seed {seed}: {e}"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(OverSeeds {
            seeds: seeds.to_vec(),
            comparisons,
        })
    }

    /// Every seed's tables, then the figures over the seeds: per scheme each count's and
    /// queue's mean +- half-width, and the p99 slowdown of each size bucket likewise.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for c in &self.comparisons {
            s += &c.text();
        }
        let n = self.seeds.len();
        let interval = if n > 1 {
            format!(
                "mean +- 95% interval (Student t, {} degrees of freedom)",
                n - 1
            )
        } else {
            "one seed: the figures themselves, no interval".to_string()
        };
        let _ = writeln!(
            s,
            "over seeds       {} ({n} seeds: {}); {interval}",
            self.comparisons[0].scenario,
            self.seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        );
        let _ = writeln!(
            s,
            "{:<13} {:>15} {:>17} {:>17} {:>17} {:>17} {:>15}",
            "scheme", "done", "drops", "pauses", "maxq", "p99q", "gbps"
        );
        let first = &self.comparisons[0];
        for (i, r) in first.runs.iter().enumerate() {
            let over = |f: &dyn Fn(&Figures) -> Option<f64>, digits: usize| {
                let v: Vec<f64> = self
                    .comparisons
                    .iter()
                    .filter_map(|c| f(&c.runs[i].figures))
                    .collect();
                crate::study::stats::MeanCi::of(&v).map_or("-".to_string(), |m| m.show(digits))
            };
            let _ = writeln!(
                s,
                "{:<13} {:>15} {:>17} {:>17} {:>17} {:>17} {:>15}",
                r.scheme,
                over(&|f| Some(f.completed as f64), 1),
                over(&|f| Some(f.drops as f64), 1),
                over(&|f| Some(f.pause_frames as f64), 1),
                over(&|f| f.max_queue_cells.map(|x| x as f64), 0),
                over(&|f| f.p99_queue_cells, 0),
                over(&|f| f.mean_flow_gbps, 2),
            );
        }
        let _ = writeln!(s, "FCT slowdown p99 by flow size, over seeds");
        let labels: Vec<String> = first.runs[0]
            .figures
            .buckets
            .iter()
            .map(bucket_label)
            .collect();
        let _ = write!(s, "{:<13}", "scheme");
        for l in &labels {
            let _ = write!(s, " {l:>20}");
        }
        let _ = writeln!(s);
        for (i, r) in first.runs.iter().enumerate() {
            let _ = write!(s, "{:<13}", r.scheme);
            for b in 0..labels.len() {
                let v: Vec<f64> = self
                    .comparisons
                    .iter()
                    .filter_map(|c| c.runs[i].figures.buckets.get(b)?.p99_slowdown)
                    .collect();
                let cell =
                    crate::study::stats::MeanCi::of(&v).map_or("-".to_string(), |m| m.show(2));
                let _ = write!(s, " {cell:>20}");
            }
            let _ = writeln!(s);
        }
        s
    }

    /// `compare_seeds.csv`: one line per scheme, its parameters, the seeds, then every
    /// column of `compare.csv` as its mean and 95% half-width over the seeds.
    pub fn csv(&self) -> String {
        let tables: Vec<Vec<Vec<String>>> = self
            .comparisons
            .iter()
            .map(|c| {
                c.csv()
                    .lines()
                    .map(crate::study::stats::csv_fields)
                    .collect()
            })
            .collect();
        let header = &tables[0][0];
        let groups: Vec<(Vec<String>, Vec<Vec<String>>)> = (1..tables[0].len())
            .map(|row| {
                let key = tables[0][row][..2].to_vec();
                let rows = tables.iter().map(|t| t[row][2..].to_vec()).collect();
                (key, rows)
            })
            .collect();
        crate::study::stats::mean_table(&["scheme", "params"], &header[2..], &groups)
    }

    /// Writes each seed's comparison into `DIR/seed{S}/` (as [`Comparison::write`]) and
    /// `compare_seeds.csv`; returns the files written.
    pub fn write(&self, dir: &Path) -> Result<Vec<String>, String> {
        let mut written = Vec::new();
        for (seed, c) in self.seeds.iter().zip(&self.comparisons) {
            written.extend(c.write(&dir.join(format!("seed{seed}")))?);
        }
        let p = dir.join("compare_seeds.csv");
        std::fs::write(&p, self.csv()).map_err(|e| format!("{}: {e}", p.display()))?;
        written.push(p.display().to_string());
        Ok(written)
    }
}

/// The CSV columns of a run's fit and figures, with p50/p99/mean slowdown per bucket.
pub fn csv_header(buckets: &[BucketStats]) -> String {
    let mut s = String::from(
        "fits,stages_used,sram_percent,stateful_percent,mau_cycles,flows,completed,drops,pause_frames,recirculated,max_queue_cells,p99_queue_cells,reordered_segments,mean_reorder_entropy,mean_flow_gbps,bounced_share,max_bounces",
    );
    for b in buckets {
        let l = bucket_label(b).replace(' ', "");
        let _ = write!(s, ",p50[{l}],p99[{l}],mean[{l}]");
    }
    s
}

/// The cells under [`csv_header`] (the fit's empty when the run had no scheme).
pub fn csv_cells(fit: Option<&Fit>, f: &Figures) -> String {
    let cell = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.4}"));
    let mut s = match fit {
        Some(fit) => format!(
            "{},{},{:.1},{:.1},{}",
            fit.fits, fit.stages_used, fit.sram_percent, fit.stateful_percent, fit.mau_cycles
        ),
        None => ",,,,".to_string(),
    };
    let _ = write!(
        s,
        ",{},{},{},{},{},{},{},{},{:.6},{},{},{}",
        f.flows,
        f.completed,
        f.drops,
        f.pause_frames,
        f.recirculated,
        f.max_queue_cells.map_or(String::new(), |x| x.to_string()),
        cell(f.p99_queue_cells),
        f.reordered_segments,
        f.mean_reorder_entropy,
        cell(f.mean_flow_gbps),
        cell(f.bounced_share),
        f.max_bounces.map_or(String::new(), |x| x.to_string()),
    );
    for b in &f.buckets {
        let _ = write!(
            s,
            ",{},{},{}",
            cell(b.p50_slowdown),
            cell(b.p99_slowdown),
            cell(b.mean_slowdown)
        );
    }
    s
}

/// The fit of every shipped scheme's default program on ports of `link_bps`.
pub fn fits(params: &Tofino2Params, link_bps: u64) -> Result<Vec<(&'static str, Fit)>, String> {
    let target = Target {
        params,
        link_bps,
        multipath: false,
    };
    schemes::SCHEMES
        .iter()
        .map(|s| Ok((s.name, Fit::of(&s.default_setup(&target).program, params)?)))
        .collect()
}
