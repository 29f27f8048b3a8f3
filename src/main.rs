//! The `t2sim` command.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use t2_pipeline::check;
use t2_pipeline::ir::Program;
use t2_pipeline::place::{place, Budget};
use t2_pipeline::report::Report;
use t2_testbench::Stepping;
use t2_waves::TraceFilter;
use t2sim::headroom::Headroom;
use t2sim::pcap::{CaptureSpec, PcapRequest, ReplayRequest, ReplayTiming};
use t2sim::scenario::{IncastScenario, WaveRequest};
use t2sim::scenario_file::ScenarioFile;
use t2sim::trace::DEFAULT_TRACE;
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

// Parsed once per process: the size of the `run` variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Run an incast through one chip: N senders into one receiver port.
    Run(RunArgs),
    /// Print the Tofino2 parameter set (defaults) as JSON, to edit and pass to `run --params`.
    Params,
    /// Place a program (JSON, see programs/) on the MAU stages under Tofino2's budgets and
    /// print the feasibility report. Exit status: 0 report printed, 1 with --require-fit
    /// when the program does not fit, 2 when the file cannot be read or is malformed.
    Report(ReportArgs),
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// The program file (JSON).
    #[arg(long)]
    program: PathBuf,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Exit with status 1 if the program does not fit.
    #[arg(long)]
    require_fit: bool,
    /// A JSON parameter file (start from `t2sim params`): stage count, stage latencies,
    /// PHV and clock come from it.
    #[arg(long)]
    params: Option<PathBuf>,
}

/// Prints the report; `Ok(false)` when the program does not fit.
fn report(args: &ReportArgs) -> Result<bool, String> {
    let path = args.program.display();
    let text = std::fs::read_to_string(&args.program).map_err(|e| format!("{path}: {e}"))?;
    let program = Program::from_json(&text).map_err(|e| format!("{path}: {e}"))?;
    let params = match &args.params {
        Some(p) => Tofino2Params::from_json_file(p).map_err(|e| e.to_string())?,
        None => Tofino2Params::default(),
    };
    let checked =
        check::check_with(&program, &params.pipeline.phv).map_err(|e| format!("{path}: {e}"))?;
    let budget = Budget {
        stages: params.pipeline.stages as usize,
        ..Budget::tofino2()
    };
    let placed = place(&checked, &budget);
    let report = Report::new(
        &checked,
        &placed,
        &budget,
        &params.pipeline,
        params.clock_hz,
    );
    let headroom = Headroom::new(&checked, &params);
    if args.json {
        let mut json = serde_json::to_value(&report).expect("a report always serializes");
        json["headroom"] = serde_json::to_value(&headroom).expect("headroom always serializes");
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("a JSON value always prints")
        );
    } else {
        print!("{report}");
        println!();
        print!("{headroom}");
    }
    Ok(report.fits)
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Run a scenario file (TOML: topology, transport, workload, duration, seed, outputs;
    /// see docs/testbench.md) instead of the built-in incast. The other run options do not
    /// apply to it.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = [
            "senders", "speed_gbps", "load_percent", "frame_bytes", "duration_us", "link_ns",
            "queue_limit_cells", "params", "step_every_cycle", "vcd", "trace", "program",
            "pcap", "replay"
        ]
    )]
    scenario: Option<PathBuf>,
    /// With --scenario: the folder for summary.json, flows.csv and links.csv, and for the
    /// file's VCD dump and captures unless they name their own (overrides output.dir).
    #[arg(long, value_name = "DIR", requires = "scenario")]
    out: Option<PathBuf>,
    /// With --scenario: the seed of every random choice (overrides the file's `seed`).
    #[arg(long, requires = "scenario")]
    seed: Option<u64>,
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
    /// A JSON program for the chip instead of the built-in IPv4 forwarding (see programs/;
    /// its `ipv4_host` table gets the scenario's host routes), e.g. programs/dctcp_switch.json.
    #[arg(long, value_name = "FILE")]
    program: Option<PathBuf>,
    /// Visit every cycle instead of jumping over quiet ones (slower; same results).
    #[arg(long)]
    step_every_cycle: bool,
    /// Write a VCD waveform of the chip to this file, and a GTKWave save file beside it
    /// (same name, `.gtkw`). Open both with `gtkwave DUMP.vcd DUMP.gtkw`.
    #[arg(long, value_name = "PATH")]
    vcd: Option<PathBuf>,
    /// Which signals to trace: comma-separated globs over dotted names, e.g.
    /// 'chip.tm.**,chip.pipe0.ingress.stage0*' (default: ports, TM and per-gress summaries).
    #[arg(long, value_name = "GLOBS", requires = "vcd")]
    trace: Option<String>,
    /// Capture ports or links to pcapng files in DIR (one file per point, nanosecond time
    /// stamps from the simulated clock): comma-separated NODE[:PORT] (what the port sends
    /// and receives) or link:NODE[:PORT] (both ends of the link), e.g. 'chip:0,link:sender0';
    /// a chip's PORT may be a device port, 'chip:d8' (docs/pcap.md).
    #[arg(long, num_args = 2, value_names = ["PORTSPEC", "DIR"])]
    pcap: Vec<String>,
    /// Replay the frames of a pcap or pcapng file (Ethernet) into a node's port (see
    /// --replay-into), at their recorded times unless --replay-gbps paces them.
    #[arg(long, value_name = "FILE", requires = "replay_into")]
    replay: Option<PathBuf>,
    /// Where --replay's frames arrive: NODE[:PORT], e.g. 'chip:1' (as if sent over the
    /// port's link) or 'receiver' (a host's NIC).
    #[arg(long, value_name = "NODE[:PORT]", requires = "replay")]
    replay_into: Option<String>,
    /// Send --replay's frames back to back at this rate (Gb/s, at most the port's speed)
    /// instead of at their recorded times.
    #[arg(long, value_name = "GBPS", requires = "replay")]
    replay_gbps: Option<u64>,
}

/// Runs a scenario file: the summary to standard output, results to the output folder.
fn run_scenario_file(
    path: &std::path::Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
) -> Result<(), String> {
    let mut scenario = ScenarioFile::load(path)?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    if let Some(dir) = out {
        scenario.set_out_dir(dir);
    }
    let clock = scenario.topology.params.clock();
    let started = Instant::now();
    let results = scenario.run()?;
    print!("{}", results.text(clock));
    if let (Some(n), Some((w, switch))) = (results.traced_signals, &scenario.waves) {
        println!(
            "waves            {n} signals of switch{switch} in {} (GTKWave: {})",
            w.vcd.display(),
            w.gtkw().display()
        );
    }
    for p in &results.pcap_files {
        println!(
            "pcap             {} frames in {}",
            p.frames,
            p.path.display()
        );
    }
    match &scenario.out_dir {
        Some(dir) => {
            for p in results.write(dir, clock)? {
                println!("wrote            {}", p.display());
            }
        }
        None => println!(
            "results          not written (no output.dir in the file; --out DIR writes them)"
        ),
    }
    eprintln!("wall time        {:.3} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn run(args: RunArgs) -> Result<(), String> {
    if let Some(path) = &args.scenario {
        return run_scenario_file(path, args.out.clone(), args.seed);
    }
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
    let program = match &args.program {
        None => None,
        Some(path) => {
            let shown = path.display();
            let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
            Some(Program::from_json(&text).map_err(|e| format!("{shown}: {e}"))?)
        }
    };
    let scenario = IncastScenario {
        waves: None,
        pcap: None,
        replay: None,
        program,
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
    let waves = match &args.vcd {
        None => None,
        Some(path) => {
            let spec = args.trace.as_deref().unwrap_or(DEFAULT_TRACE);
            let filter = TraceFilter::parse(spec).map_err(|e| format!("--trace: {e}"))?;
            Some(WaveRequest {
                vcd: path.clone(),
                filter,
            })
        }
    };
    let pcap = match args.pcap.as_slice() {
        [] => None,
        [specs, dir] => Some(PcapRequest {
            specs: CaptureSpec::parse_list(specs).map_err(|e| format!("--pcap: {e}"))?,
            dir: PathBuf::from(dir),
        }),
        _ => return Err("--pcap: needs PORTSPEC and DIR".into()),
    };
    let replay = match (&args.replay, &args.replay_into) {
        (Some(file), Some(into)) => {
            let point = CaptureSpec::parse(into).map_err(|e| format!("--replay-into: {e}"))?;
            if point.link {
                return Err(format!(
                    "--replay-into: `{into}`: frames are replayed into a port, not a link"
                ));
            }
            let timing = match args.replay_gbps {
                None => ReplayTiming::Recorded,
                Some(g) => ReplayTiming::Paced(
                    g.checked_mul(1_000_000_000)
                        .ok_or_else(|| format!("--replay-gbps: {g} is too large"))?,
                ),
            };
            Some(ReplayRequest {
                file: file.clone(),
                node: point.node,
                port: point.port,
                timing,
                start: 0,
            })
        }
        _ => None,
    };
    let scenario = IncastScenario {
        waves,
        pcap,
        replay,
        ..scenario
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
