//! The `t2sim` command: its flags and the dispatch to one file per subcommand (`cli/`).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cli;

use cli::compare::{compare, default_comparison, CompareArgs};
use cli::emit;
use cli::report::{report, ReportArgs};
use cli::run::{run, RunArgs};
use cli::sweep::{sweep, sweep_merge, MergeArgs, SweepArgs};
use t2sim::schemes;
use t2sim::Tofino2Params;

/// t2sim: a cycle-accurate model of the Tofino2 switch ASIC.
///
/// With no arguments, the main job: every shipped congestion scheme on a small default
/// network (scenarios/default.toml, built in), judged side by side, with each scheme's fit
/// on the chip. With run options but no command, `run`: the default scenario of one chip, 4
/// hosts sending at 100 Gb/s line rate into one 100 Gb/s port for 100 us. The simulated
/// results go to standard output and are identical on every run; wall-clock figures go to
/// standard error.
#[derive(Parser, Debug)]
#[command(
    name = "t2sim",
    version,
    about,
    long_about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Options of `run`, also accepted without the word `run`.
    #[command(flatten)]
    run: RunArgs,
}

// Parsed once per process: the size of the `run` variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Run an incast through one chip: N senders into one receiver port.
    Run(RunArgs),
    /// Print the Tofino2 parameter set (defaults) as JSON, to edit and pass to `run --params`.
    Params,
    /// Place a program (JSON or P4, see programs/) on the MAU stages under Tofino2's budgets
    /// and print the feasibility report. Exit status: 0 report printed, 1 with --require-fit
    /// when the program does not fit, 2 when the file cannot be read or is malformed.
    Report(ReportArgs),
    /// List the congestion schemes with their parameters, defaults and ranges.
    Schemes,
    /// Run one scenario file under several schemes (the same topology, workload and seed)
    /// and print their figures side by side with each scheme's fit on the chip; with --out,
    /// also compare.csv, compare.json, SVG plots and each scheme's own results.
    Compare(CompareArgs),
    /// Run a scenario file at every point of a grid over its keys (one row of figures per
    /// point); --shard I/N runs a share of the points, `sweep-merge` joins the shares.
    Sweep(SweepArgs),
    /// Join the folders of a sharded sweep into the files an unsharded run writes.
    SweepMerge(MergeArgs),
    /// Run an STF packet test (p4c's format) against a P4 program on the chip, one line per
    /// expectation. Exit status: 0 all passed, 1 a failure, 2 bad input.
    Stf(cli::stf::StfArgs),
}

fn main() -> ExitCode {
    let bare = std::env::args_os().len() == 1;
    let cli = Cli::parse();
    // What needs the preprocessor, as the error names it: the file given, else the
    // schemes' programs.
    let shown = |p: &std::path::Path| p.display().to_string();
    let schemes = || "the schemes' P4 programs".to_string();
    let builds_schemes = match &cli.command {
        None if bare => Some(schemes()),
        None => cli.run.scenario.as_deref().map(shown),
        Some(Command::Run(args)) => args.scenario.as_deref().map(shown),
        Some(Command::Compare(args)) => Some(shown(&args.scenario)),
        Some(Command::Sweep(args)) => Some(shown(&args.scenario)),
        Some(Command::Report(args)) => Some(args.p4.as_deref().map_or_else(schemes, shown)),
        Some(_) => None,
    };
    if let Some(what) = builds_schemes {
        if let Err(e) = cli::schemes_can_build(&what) {
            eprintln!("t2sim: error: {e}");
            return ExitCode::from(2);
        }
    }
    let result = match cli.command {
        None if bare => default_comparison(),
        None => run(cli.run),
        Some(Command::Run(args)) => run(args),
        Some(Command::Params) => {
            emit(&format!("{}\n", Tofino2Params::default().to_json()));
            Ok(())
        }
        Some(Command::Schemes) => {
            let text: String = schemes::SCHEMES.iter().map(|s| s.describe()).collect();
            emit(&text);
            Ok(())
        }
        Some(Command::Compare(args)) => compare(&args),
        Some(Command::Sweep(args)) => sweep(&args),
        Some(Command::SweepMerge(args)) => sweep_merge(&args),
        Some(Command::Stf(args)) => match cli::stf::stf(&args) {
            Ok(false) => return ExitCode::from(1),
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        },
        Some(Command::Report(args)) => match report(&args) {
            Ok(false) if args.require_fit => return ExitCode::from(1),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("t2sim: error: {e}");
            ExitCode::from(2)
        }
    }
}
