//! `t2sim compare` (one scenario file under several schemes side by side) and the main job,
//! `t2sim` with no arguments (every shipped scheme on the built-in default network).

use super::emit;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;
use t2sim::scenario::{ScenarioFile, ScenarioText};
use t2sim::schemes;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The scenario file (TOML; it must not set `program`, `[queues]` or the transport's
    /// congestion and pause keys, which each scheme brings).
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    /// Schemes to compare, comma-separated (default: the file's `[compare] schemes`, else
    /// every scheme in `t2sim schemes` order).
    #[arg(long, value_delimiter = ',')]
    pub schemes: Vec<String>,
    /// A scheme parameter, SCHEME.PARAM=VALUE (repeatable).
    #[arg(long = "set", value_name = "SCHEME.PARAM=VALUE")]
    pub settings: Vec<String>,
    /// Folder for compare.csv, compare.json, the plots and per-scheme results.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Runs at once, one per thread (default: every core; the output is the same whatever
    /// the number).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Run the comparison once per seed (replacing the file's `seed`), comma-separated, and
    /// add each figure's mean and 95% interval over them; with --out, each seed's results go
    /// to DIR/seed{S}/ and the statistics to DIR/compare_seeds.csv.
    #[arg(long, value_delimiter = ',', value_name = "S1,S2,...")]
    pub seeds: Vec<u64>,
}

/// Runs a comparison: tables to standard output, files to --out.
pub fn compare(args: &CompareArgs) -> Result<(), String> {
    // The command's schemes, else the file's [compare], else every scheme; --set over
    // [compare.params].
    let file = ScenarioFile::load(&args.scenario)?
        .compare
        .unwrap_or_default();
    let names = if !args.schemes.is_empty() {
        args.schemes.clone()
    } else if !file.0.is_empty() {
        file.0
    } else {
        schemes::default_comparison_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    // The file's parameters of schemes the command leaves out do not apply.
    let mut settings = file.1;
    settings.retain(|scheme, _| names.contains(scheme));
    for (scheme, values) in t2sim::study::compare::scheme_settings(&args.settings)? {
        settings.entry(scheme).or_default().extend(values);
    }
    let started = Instant::now();
    let source = ScenarioText::read(&args.scenario)?;
    let threads = args
        .threads
        .map_or_else(t2sim::study::parallel::default_threads, usize::from);
    if !args.seeds.is_empty() {
        return compare_over_seeds(args, &source, &names, &settings, threads, started);
    }
    if let Some(dir) = &args.out {
        t2sim::scenario::out_dir::prepare_comparison(dir, &names, &source.shown)?;
    }
    let c = t2sim::study::compare::compare_on(&source, &names, &settings, threads, |name| {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!("t2sim: compare: running {name}");
        }
    })?;
    let mut text = c.text();
    if let Some(dir) = &args.out {
        for f in c.write(dir)? {
            text += &format!("wrote            {f}\n");
        }
        t2sim::scenario::out_dir::finish(dir)?;
    }
    emit(&text);
    eprintln!(
        "t2sim: compared {} schemes in {:.1} s wall",
        c.runs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `compare --seeds`: the comparison once per seed, then the figures over the seeds.
fn compare_over_seeds(
    args: &CompareArgs,
    source: &ScenarioText,
    names: &[String],
    settings: &t2sim::schemes::SchemeSettings,
    threads: usize,
    started: Instant,
) -> Result<(), String> {
    if let Some(dir) = &args.out {
        t2sim::scenario::out_dir::prepare(dir, "--out", &source.shown)?;
        for seed in &args.seeds {
            let sub = dir.join(format!("seed{seed}"));
            t2sim::scenario::out_dir::prepare_comparison(&sub, names, &source.shown)?;
        }
    }
    let over = t2sim::study::compare::OverSeeds::run(
        source,
        names,
        settings,
        &args.seeds,
        threads,
        |seed, name| {
            if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                eprintln!("t2sim: compare: seed {seed}: running {name}");
            }
        },
    )?;
    let mut text = over.text();
    if let Some(dir) = &args.out {
        for f in over.write(dir)? {
            text += &format!("wrote            {f}\n");
        }
        for seed in &args.seeds {
            t2sim::scenario::out_dir::finish(&dir.join(format!("seed{seed}")))?;
        }
        t2sim::scenario::out_dir::finish(dir)?;
    }
    emit(&text);
    eprintln!(
        "t2sim: compared {} schemes over {} seeds in {:.1} s wall",
        names.len(),
        args.seeds.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The main job, `t2sim` with no arguments: every shipped scheme on the built-in default
/// network (`scenarios/default.toml`), with each scheme's fit on the chip.
pub fn default_comparison() -> Result<(), String> {
    let source = ScenarioText {
        text: include_str!("../../scenarios/default.toml").to_string(),
        shown: "scenarios/default.toml (built in)".to_string(),
        base: PathBuf::from("."),
    };
    let names: Vec<String> = schemes::default_comparison_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let started = Instant::now();
    let c = t2sim::study::compare::compare(&source, &names, &Default::default(), |_| {})?;
    let mut text =
        String::from("t2sim: every shipped scheme on one small network, judged side by side\n");
    text += &c.text();
    text += "fit on Tofino2 (t2sim report --scheme NAME for the whole report)\n";
    for r in &c.runs {
        let f = &r.fit;
        text += &format!(
            "  {:<13} {}: stages {}, SRAM {:.1}%, stateful {:.1}%, MAU {} cycles{}{}\n",
            r.scheme,
            f.verdict(),
            f.stages_used,
            f.sram_percent,
            f.stateful_percent,
            f.mau_cycles,
            if f.recirculates { ", recirculates" } else { "" },
            if f.mirrors { ", mirrors" } else { "" },
        );
    }
    text +=
        "more: t2sim compare --scenario FILE, t2sim run (one chip at line rate), t2sim --help\n";
    emit(&text);
    eprintln!(
        "t2sim: compared {} schemes in {:.1} s wall",
        c.runs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
