//! `t2sim sweep` and `t2sim sweep-merge`: a scenario file at every point of a grid over its
//! keys, sharded or not, and the join of shards.

use super::{emit, wrote};
use clap::Args;
use std::path::PathBuf;
use t2sim::scenario::ScenarioText;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The scenario file (TOML).
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    /// A key of the file and its values, KEY=V1,V2,... (repeatable; the first varies
    /// slowest), e.g. workload.load=0.3,0.5 or scheme=droptail,dctcp.
    #[arg(long = "grid", value_name = "KEY=V1,V2,...", required = true)]
    pub grid: Vec<String>,
    /// Run only the points whose number is I-1 modulo N.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Folder for sweep.csv and sweep.json (default: the CSV to standard output).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Runs at once, one per thread (default: every core; the output is the same whatever
    /// the number).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Folder for the merged sweep.csv and sweep.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The shards' folders.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// Checks, before anything runs, that `--out` can be the folder written at the end: a file
/// there was found only after the whole sweep, as `File exists (os error 17)`.
/// The sweep's own folder is also created then (a merge's only when it has rows to write).
fn out_folder(dir: &std::path::Path, context: &str, create: bool) -> Result<(), String> {
    let bad = |problem: String| format!("{context}--out: {}: {problem}", dir.display());
    if dir.exists() && !dir.is_dir() {
        return Err(bad("is a file, not a folder".into()));
    }
    if create {
        std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create the folder: {e}")))?;
    }
    Ok(())
}

pub fn sweep(args: &SweepArgs) -> Result<(), String> {
    let grid = args
        .grid
        .iter()
        .map(|g| t2sim::study::sweep::Axis::parse(g))
        .collect::<Result<Vec<_>, _>>()?;
    let shard = args
        .shard
        .as_deref()
        .map(t2sim::study::sweep::parse_shard)
        .transpose()?;
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let source = ScenarioText::read(&args.scenario)?;
    if let Some(dir) = &args.out {
        out_folder(dir, &format!("{}: ", source.shown), true)?;
    }
    let threads = args
        .threads
        .map_or_else(t2sim::study::parallel::default_threads, usize::from);
    let s = t2sim::study::sweep::sweep_on(&source, &grid, shard, threads, |n, total, point| {
        if terminal {
            eprintln!("t2sim: sweep: point {}/{total}: {point}", n + 1);
        }
    })?;
    match &args.out {
        Some(dir) => emit(&wrote(&s.write(dir)?)),
        None => emit(&s.csv()),
    }
    Ok(())
}

pub fn sweep_merge(args: &MergeArgs) -> Result<(), String> {
    out_folder(&args.out, "", false)?;
    let dirs: Vec<&std::path::Path> = args.shards.iter().map(|d| d.as_path()).collect();
    let s = t2sim::study::sweep::merge(&dirs)?;
    emit(&wrote(&s.write(&args.out)?));
    Ok(())
}
