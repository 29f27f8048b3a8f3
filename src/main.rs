//! The `t2sim` command.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use t2_testbench::Stepping;
use t2sim::scenario::IncastScenario;
use t2sim::Tofino2Params;

/// t2sim: a cycle-accurate model of the Tofino2 switch ASIC.
///
/// With no command, runs the default scenario: 4 hosts sending at 100 Gb/s line rate into
/// one 100 Gb/s port for 100 us, and prints what happened. The simulated results go to
/// standard output and are identical on every run; wall-clock figures go to standard error.
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

#[derive(Subcommand, Debug)]
enum Command {
    /// Run an incast through one chip: N senders into one receiver port.
    Run(RunArgs),
    /// Print the Tofino2 parameter set (defaults) as JSON, to edit and pass to `run --params`.
    Params,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Number of sending hosts.
    #[arg(long, default_value_t = 4)]
    senders: u32,
    /// Speed of every port and NIC in Gb/s (1, 10, 25, 40, 50, 100, 200 or 400).
    #[arg(long, default_value_t = 100)]
    speed_gbps: u64,
    /// Each sender's rate as a percentage of the port speed.
    #[arg(long, default_value_t = 100)]
    load_percent: u32,
    /// Frame length in bytes, FCS included (64..=9216).
    #[arg(long, default_value_t = 1500)]
    frame_bytes: u32,
    /// Simulated time in microseconds.
    #[arg(long, default_value_t = 100)]
    duration_us: u64,
    /// Propagation delay of every link in nanoseconds.
    #[arg(long, default_value_t = 100)]
    link_ns: u64,
    /// Static limit, in cells, on every TM queue (default: the dynamic threshold and the shared buffer only).
    #[arg(long)]
    queue_limit_cells: Option<u32>,
    /// A JSON parameter file (start from `t2sim params`).
    #[arg(long)]
    params: Option<PathBuf>,
    /// Visit every cycle instead of jumping over quiet ones (slower; same results).
    #[arg(long)]
    step_every_cycle: bool,
}

fn run(args: RunArgs) -> Result<(), String> {
    let mut params = match &args.params {
        Some(path) => Tofino2Params::from_json_file(path).map_err(|e| e.to_string())?,
        None => Tofino2Params::default(),
    };
    if args.queue_limit_cells.is_some() {
        params.tm.queue_limit_cells = args.queue_limit_cells;
        params
            .validate()
            .map_err(|e| format!("--queue-limit-cells: {}", e.problem))?;
    }
    if !(64..=9216).contains(&args.frame_bytes) {
        return Err(format!(
            "--frame-bytes: {} is outside 64..=9216",
            args.frame_bytes
        ));
    }
    if args.duration_us == 0 || args.duration_us > 1_000_000_000 {
        return Err(format!(
            "--duration-us: {} is outside 1..=1000000000",
            args.duration_us
        ));
    }
    let bps = args
        .speed_gbps
        .checked_mul(1_000_000_000)
        .ok_or_else(|| format!("--speed-gbps: {} is too large", args.speed_gbps))?;
    let scenario = IncastScenario {
        senders: args.senders,
        port_bps: bps,
        load_percent: args.load_percent,
        frame_bytes: args.frame_bytes,
        duration_cycles: params.clock().ns_to_cycles_ceil(args.duration_us * 1000),
        link_delay_ns: args.link_ns,
        stepping: if args.step_every_cycle {
            Stepping::EveryCycle
        } else {
            Stepping::Jump
        },
        params,
    };
    let started = Instant::now();
    let summary = scenario.run().map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    print!("{summary}");
    let secs = wall.as_secs_f64();
    eprintln!(
        "wall time        {:.3} s, {:.2} M simulated packets per wall second ({} offered)",
        secs,
        summary.offered as f64 / secs.max(1e-9) / 1e6,
        summary.offered
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => run(cli.run),
        Some(Command::Run(args)) => run(args),
        Some(Command::Params) => {
            println!("{}", Tofino2Params::default().to_json());
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("t2sim: error: {e}");
            ExitCode::from(2)
        }
    }
}
