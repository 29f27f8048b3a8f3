//! Parameter sweeps: a scenario file run at every point of a grid over any of its keys
//! (`workload.load`, `seed`, `scheme`, `scheme_params.k_cells`, ...), one row of figures per
//! point, in one table.
//!
//! Points are numbered in grid order (the first `--grid` varies slowest). A shard `I/N` runs
//! the points whose number is `I - 1` modulo `N`, so N machines (a Slurm job array, GNU
//! parallel) share a sweep with nothing to coordinate; `merge` joins their folders into
//! exactly the files one unsharded run writes (`sweep.csv`, `sweep.json`), byte for byte.

use crate::scenario::{ScenarioFile, ScenarioText};
use crate::schemes::Fit;
use crate::study::compare::{csv_cells, csv_header, Figures};
use crate::study::stats::{csv_fields as split_csv, mean_table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One key of the grid and its values, as given (`workload.load=0.3,0.5`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub key: String,
    /// The values as written; each is read as a TOML value, or as a string if it is none.
    pub values: Vec<String>,
}

impl Axis {
    /// `KEY=V1,V2,...`; errors name the argument.
    pub fn parse(arg: &str) -> Result<Axis, String> {
        let Some((key, values)) = arg.split_once('=') else {
            return Err(format!("--grid {arg}: expected KEY=V1,V2,..."));
        };
        let key = key.trim();
        let segments = key.split('.').count();
        if segments > crate::scenario::MAX_KEY_SEGMENTS {
            let head: String = key.chars().take(40).collect();
            return Err(format!(
                "--grid {head}...: the key has {segments} segments; a scenario's keys have at \
                 most {}",
                crate::scenario::MAX_KEY_SEGMENTS
            ));
        }
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!("--grid {arg}: `{key}` is not a dotted key"));
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(format!("--grid {arg}: an empty value"));
        }
        Ok(Axis {
            key: key.to_string(),
            values,
        })
    }
}

/// A value as TOML: `0.5`, `7`, `true`, `"x"`, or else the bare text as a string.
fn toml_value(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// What a sweep was: the grid, how many points, and which shard this is.
/// A key it does not know is an error (a hand-edited or foreign file), not ignored.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SweepInfo {
    pub scenario: String,
    pub grid: Vec<Axis>,
    pub points: usize,
    /// `[I, N]` for a shard; absent for a whole sweep (and a merged one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<[usize; 2]>,
    /// FNV-1a (64-bit, hex) of the scenario file's text: shards of one sweep ran the same
    /// file, not only one of the same name (empty in a sweep.json from before it was kept).
    #[serde(default)]
    pub scenario_fnv1a: String,
}

/// FNV-1a, 64 bits, of `text`, as 16 hex digits: a fixed, documented hash (unlike std's)
/// so that sweep.json files from different builds compare.
pub fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The fields of one CSV line (quotes as `csv_field` writes them), or `None` if a quote is
/// left open.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) if out.last().is_some_and(String::is_empty) => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut()?.push('"');
            }
            ('"', true) => quoted = false,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut()?.push(c),
        }
    }
    (!quoted).then_some(out)
}

/// The values of point `n` of `grid` (the last axis varies fastest, as `points` lists them).
fn point_values(grid: &[Axis], mut n: usize) -> Vec<&str> {
    let mut v: Vec<&str> = grid
        .iter()
        .rev()
        .map(|a| {
            let len = a.values.len().max(1);
            let i = n % len;
            n /= len;
            a.values.get(i).map_or("", String::as_str)
        })
        .collect();
    v.reverse();
    v
}

/// `I/N` with 1 <= I <= N; errors name the argument.
pub fn parse_shard(arg: &str) -> Result<[usize; 2], String> {
    let bad = || format!("--shard {arg}: expected I/N with 1 <= I <= N");
    let (i, n) = arg.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || i > n {
        return Err(bad());
    }
    Ok([i, n])
}

/// The grid's points in order: each is one value per axis.
fn points(grid: &[Axis]) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = vec![vec![]];
    for axis in grid {
        out = out
            .into_iter()
            .flat_map(|p| {
                axis.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v.as_str());
                    q
                })
            })
            .collect();
    }
    out
}

/// Most points a sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// A sweep's rows: point number and CSV line.
pub struct Sweep {
    pub info: SweepInfo,
    pub header: String,
    pub rows: Vec<(usize, String)>,
}

/// One point of a sweep: its number, its values (one per axis), the overrides they make and
/// how they are shown.
struct Point<'a> {
    n: usize,
    values: &'a [&'a str],
    overrides: Vec<(String, toml::Value)>,
    shown: String,
}

/// Runs the points of `grid` that belong to `shard` (all without one), on every core (see
/// [`sweep_on`]). `each` hears of every point as it starts (number, total, the overrides).
pub fn sweep(
    source: &ScenarioText,
    grid: &[Axis],
    shard: Option<[usize; 2]>,
    each: impl Fn(usize, usize, &str) + Sync,
) -> Result<Sweep, String> {
    sweep_on(
        source,
        grid,
        shard,
        crate::study::parallel::default_threads(),
        each,
    )
}

/// [`sweep`] on up to `threads` threads, one point's run each (a file that writes a dump or
/// captures runs its points one after another, since they would write the same files).
/// Every point's file is checked before any point runs. The result does not depend on
/// `threads`.
pub fn sweep_on(
    source: &ScenarioText,
    grid: &[Axis],
    shard: Option<[usize; 2]>,
    threads: usize,
    each: impl Fn(usize, usize, &str) + Sync,
) -> Result<Sweep, String> {
    if grid.is_empty() {
        return Err("a sweep needs at least one --grid KEY=V1,V2,...".into());
    }
    for (i, a) in grid.iter().enumerate() {
        if grid[..i].iter().any(|b| b.key == a.key) {
            return Err(format!("--grid {}: the key is given twice", a.key));
        }
    }
    let total = grid
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| format!("the grid has more than {MAX_POINTS} points"))?;
    let all = points(grid);
    let mut header = String::from("point");
    for a in grid {
        let _ = write!(header, ",{}", a.key);
    }
    // This shard's points, each checked.
    let mut mine = Vec::new();
    for (n, values) in all.iter().enumerate() {
        if let Some([i, k]) = shard {
            if n % k != i - 1 {
                continue;
            }
        }
        let overrides: Vec<(String, toml::Value)> = grid
            .iter()
            .zip(values)
            .map(|(a, v)| (a.key.clone(), toml_value(v)))
            .collect();
        let shown: Vec<String> = grid
            .iter()
            .zip(values)
            .map(|(a, v)| format!("{} = {v}", a.key))
            .collect();
        let shown = shown.join(", ");
        ScenarioFile::from_text(source, &overrides)
            .map_err(|e| format!("point {n} ({shown}): {e}"))?;
        mine.push(Point {
            n,
            values,
            overrides,
            shown,
        });
    }
    let plain = ScenarioFile::from_text(source, &[])?;
    let threads = if plain.waves.is_some() || plain.pcap.is_some() {
        1
    } else {
        threads
    };
    // Runs side by side, and the cores they leave over split each run's network (as big as
    // the file's; a grid over the topology's size changes it, which this does not weigh).
    let (at_once, per_run) =
        crate::study::parallel::share_threads(threads, mine.len(), plain.threads_worth_using());
    let run_point = |_: usize, p: &Point| -> Result<(usize, String, String), String> {
        let (n, shown) = (p.n, &p.shown);
        each(n, total, shown);
        let mut scenario = ScenarioFile::from_text(source, &p.overrides)
            .map_err(|e| format!("point {n} ({shown}): {e}"))?;
        scenario.set_threads(per_run);
        // A point's dump and captures go into its own folder (`point{n}/`), never into one
        // file another point writes too.
        if scenario.waves.is_some() || scenario.pcap.is_some() {
            scenario
                .set_own_folder(&format!("point{n}"))
                .map_err(|e| format!("point {n} ({shown}): {e}"))?;
        }
        let fit = match &scenario.scheme {
            Some(_) => Some(Fit::of(
                scenario
                    .topology
                    .program
                    .as_ref()
                    .expect("a scheme brings a program"),
                &scenario.topology.params,
            )?),
            None => None,
        };
        let results = scenario.run()?;
        let figures = Figures::of(&results, scenario.topology.params.clock());
        let mut line = n.to_string();
        for v in p.values {
            let _ = write!(line, ",{}", csv_field(v));
        }
        let _ = write!(line, ",{}", csv_cells(fit.as_ref(), &figures));
        Ok((n, line, csv_header(&figures.buckets)))
    };
    let done = crate::study::parallel::map_in_order(&mine, at_once, run_point)
        .into_iter()
        .collect::<Result<Vec<_>, String>>()?;
    let bucket_header = done.first().map(|(_, _, h)| h.clone());
    let rows: Vec<(usize, String)> = done.into_iter().map(|(n, line, _)| (n, line)).collect();
    // A shard with no points still writes a header: the figures' columns are the file's
    // buckets, which a dry load gives.
    let figures_header = match bucket_header {
        Some(h) => h,
        None => {
            let empty = t2_testbench::metrics::by_bucket(&[], &plain.buckets);
            csv_header(&empty)
        }
    };
    let _ = write!(header, ",{figures_header}");
    Ok(Sweep {
        info: SweepInfo {
            scenario: source.shown.clone(),
            grid: grid.to_vec(),
            points: total,
            shard,
            scenario_fnv1a: fnv1a(&source.text),
        },
        header,
        rows,
    })
}

/// A value as a CSV field (quoted if it has a comma or a quote).
fn csv_field(v: &str) -> String {
    if v.contains([',', '"']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

impl Sweep {
    /// `sweep.csv`: the header, then the rows in point order.
    pub fn csv(&self) -> String {
        let mut s = format!("{}\n", self.header);
        for (_, line) in &self.rows {
            s.push_str(line);
            s.push('\n');
        }
        s
    }

    /// Writes `sweep.csv` and `sweep.json` into `dir`, and `sweep_seeds.csv` (each figure's
    /// mean and 95% interval over the seeds, [`over_seeds`]) when a whole sweep's
    /// grid has a `seed` axis of two or more values; returns the files written.
    pub fn write(&self, dir: &Path) -> Result<Vec<String>, String> {
        let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let csv = dir.join("sweep.csv");
        std::fs::write(&csv, self.csv()).map_err(|e| io(&csv, e))?;
        let json = dir.join("sweep.json");
        let text = serde_json::to_string_pretty(&self.info).expect("sweep info serializes");
        std::fs::write(&json, text + "\n").map_err(|e| io(&json, e))?;
        let mut written = vec![csv.display().to_string(), json.display().to_string()];
        let seeds = self.info.grid.iter().find(|a| a.key == "seed");
        if self.info.shard.is_none() && seeds.is_some_and(|a| a.values.len() > 1) {
            let p = dir.join("sweep_seeds.csv");
            std::fs::write(&p, over_seeds(self)?).map_err(|e| io(&p, e))?;
            written.push(p.display().to_string());
        }
        Ok(written)
    }

    /// Reads a folder `write` wrote.
    pub fn read(dir: &Path) -> Result<Sweep, String> {
        let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
        let json = dir.join("sweep.json");
        let text = std::fs::read_to_string(&json).map_err(|e| io(&json, e))?;
        let info: SweepInfo = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a sweep's sweep.json: {e}", json.display()))?;
        let csv = dir.join("sweep.csv");
        let text = std::fs::read_to_string(&csv).map_err(|e| io(&csv, e))?;
        let mut lines = text.lines();
        let header = lines
            .next()
            .ok_or_else(|| format!("{}: empty", csv.display()))?
            .to_string();
        // What sweep.json claims is checked before anything is sized from it.
        let bad_json = |key: &str, problem: String| format!("{}: {key}: {problem}", json.display());
        if info.points > MAX_POINTS {
            return Err(bad_json(
                "points",
                format!("{} is above the {MAX_POINTS}-point limit", info.points),
            ));
        }
        let grid_points = info
            .grid
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
            .filter(|&n| n <= MAX_POINTS);
        if grid_points != Some(info.points) {
            return Err(bad_json(
                "points",
                format!(
                    "{} is not the number of points of its grid ({})",
                    info.points,
                    grid_points.map_or("more than the limit".to_string(), |n| n.to_string())
                ),
            ));
        }
        if let Some([i, k]) = info.shard {
            if i == 0 || i > k {
                return Err(bad_json(
                    "shard",
                    format!("[{i}, {k}] is not I/N with 1 <= I <= N"),
                ));
            }
        }
        let columns = csv_fields(&header).map_or(0, |h| h.len());
        let mut rows: Vec<(usize, String)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, line) in lines.enumerate() {
            let bad = |problem: String| format!("{}: line {}: {problem}", csv.display(), i + 2);
            let fields = csv_fields(line).ok_or_else(|| bad("a quote is not closed".into()))?;
            let n: usize = fields
                .first()
                .and_then(|p| p.parse().ok())
                .filter(|&n| n < info.points)
                .ok_or_else(|| bad(format!("no point number below {}", info.points)))?;
            if fields.len() != columns {
                return Err(bad(format!(
                    "{} fields; the header has {columns} (a cut or damaged row)",
                    fields.len()
                )));
            }
            let want = point_values(&info.grid, n);
            for (a, (got, want)) in info.grid.iter().zip(fields[1..].iter().zip(&want)) {
                if got != want {
                    return Err(bad(format!(
                        "point {n} has {} = {got}, but the grid's point {n} has {want}",
                        a.key
                    )));
                }
            }
            if let Some([s, k]) = info.shard {
                if n % k != s - 1 {
                    return Err(bad(format!("point {n} is not one of shard {s}/{k}'s")));
                }
            }
            if !seen.insert(n) {
                return Err(bad(format!("point {n} is listed twice")));
            }
            rows.push((n, line.to_string()));
        }
        Ok(Sweep { info, header, rows })
    }
}

/// Joins shard folders into one sweep: the same grid and header in each, every point
/// exactly once. The result equals an unsharded run's.
pub fn merge(dirs: &[&Path]) -> Result<Sweep, String> {
    let Some(first) = dirs.first() else {
        return Err("merge needs the shards' folders".into());
    };
    let base = Sweep::read(first)?;
    let mut rows: BTreeMap<usize, String> = BTreeMap::new();
    for dir in dirs {
        let s = Sweep::read(dir)?;
        let same = |a: &SweepInfo, b: &SweepInfo| {
            a.scenario == b.scenario && a.grid == b.grid && a.points == b.points
        };
        if !same(&s.info, &base.info) || s.header != base.header {
            return Err(format!(
                "{}: a different sweep than {} (scenario, grid or columns differ)",
                dir.display(),
                first.display()
            ));
        }
        if s.info.scenario_fnv1a != base.info.scenario_fnv1a {
            return Err(format!(
                "{}: sweep.json: scenario_fnv1a: {} ran a different file named {} than {} ({})",
                dir.display(),
                s.info.scenario_fnv1a,
                s.info.scenario,
                first.display(),
                base.info.scenario_fnv1a
            ));
        }
        for (n, line) in s.rows {
            if rows.insert(n, line).is_some() {
                return Err(format!(
                    "{}: point {n} is also in another shard",
                    dir.display()
                ));
            }
        }
    }
    let missing: Vec<String> = (0..base.info.points)
        .filter(|n| !rows.contains_key(n))
        .map(|n| n.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "points missing from the shards: {}",
            missing.join(", ")
        ));
    }
    Ok(Sweep {
        info: SweepInfo {
            shard: None,
            ..base.info
        },
        header: base.header,
        rows: rows.into_iter().collect(),
    })
}

/// A sweep's rows grouped over its `seed` axis: for each point of the other axes (in the
/// order of its first row), every figure column as `mean` and `ci95` over the seeds (two
/// columns each), `n` the seeds with a value. A column that is not a number in every row
/// (the fit's verdict) keeps its value when all rows agree, else is left empty. Fails
/// when the grid has no `seed` axis.
pub fn over_seeds(sweep: &Sweep) -> Result<String, String> {
    let axes = &sweep.info.grid;
    let Some(seed_axis) = axes.iter().position(|a| a.key == "seed") else {
        return Err("statistics over seeds need a --grid seed=... axis".into());
    };
    let header = split_csv(&sweep.header);
    // Columns: point, the axes, then the figures.
    let first_figure = 1 + axes.len();
    let mut groups: Vec<(Vec<String>, Vec<Vec<String>>)> = Vec::new();
    let mut at: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for (_, line) in &sweep.rows {
        let f = split_csv(line);
        if f.len() != header.len() {
            return Err(format!(
                "sweep row `{line}` has {} fields, the header {}",
                f.len(),
                header.len()
            ));
        }
        let key: Vec<String> = (0..axes.len())
            .filter(|&i| i != seed_axis)
            .map(|i| f[1 + i].clone())
            .collect();
        let i = *at.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(f);
    }
    let names: Vec<&str> = axes
        .iter()
        .filter(|a| a.key != "seed")
        .map(|a| a.key.as_str())
        .collect();
    let groups: Vec<(Vec<String>, Vec<Vec<String>>)> = groups
        .into_iter()
        .map(|(key, rows)| {
            (
                key,
                rows.into_iter()
                    .map(|r| r[first_figure..].to_vec())
                    .collect(),
            )
        })
        .collect();
    Ok(mean_table(&names, &header[first_figure..], &groups))
}
