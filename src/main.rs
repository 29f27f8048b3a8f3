//! The `t2sim` command.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use t2_pipeline::ir::Program;
use t2_testbench::Stepping;
use t2_waves::TraceFilter;
use t2sim::pcap::{CaptureSpec, PcapRequest, ReplayRequest, ReplayTiming};
use t2sim::scenario::{IncastScenario, WaveRequest};
use t2sim::scenario_file::{ScenarioFile, ScenarioText};
use t2sim::schemes;
use t2sim::trace::DEFAULT_TRACE;
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
    /// Place a program (JSON, see programs/) on the MAU stages under Tofino2's budgets and
    /// print the feasibility report. Exit status: 0 report printed, 1 with --require-fit
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
    Stf(t2sim::p4_commands::StfArgs),
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// The scenario file (TOML).
    #[arg(long, value_name = "FILE")]
    scenario: PathBuf,
    /// A key of the file and its values, KEY=V1,V2,... (repeatable; the first varies
    /// slowest), e.g. workload.load=0.3,0.5 or scheme=droptail,dctcp.
    #[arg(long = "grid", value_name = "KEY=V1,V2,...", required = true)]
    grid: Vec<String>,
    /// Run only the points whose number is I-1 modulo N.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Folder for sweep.csv and sweep.json (default: the CSV to standard output).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Runs at once, one per thread (default: every core; the output is the same whatever
    /// the number).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// Folder for the merged sweep.csv and sweep.json.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The shards' folders.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
}

fn sweep(args: &SweepArgs) -> Result<(), String> {
    let grid = args
        .grid
        .iter()
        .map(|g| t2sim::sweep::Axis::parse(g))
        .collect::<Result<Vec<_>, _>>()?;
    let shard = args
        .shard
        .as_deref()
        .map(t2sim::sweep::parse_shard)
        .transpose()?;
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let source = ScenarioText::read(&args.scenario)?;
    let threads = args
        .threads
        .map_or_else(t2sim::parallel::default_threads, usize::from);
    let s = t2sim::sweep::sweep_on(&source, &grid, shard, threads, |n, total, point| {
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

fn sweep_merge(args: &MergeArgs) -> Result<(), String> {
    let dirs: Vec<&std::path::Path> = args.shards.iter().map(|d| d.as_path()).collect();
    let s = t2sim::sweep::merge(&dirs)?;
    emit(&wrote(&s.write(&args.out)?));
    Ok(())
}

/// `wrote            FILE` lines.
fn wrote(files: &[String]) -> String {
    files
        .iter()
        .map(|f| format!("wrote            {f}\n"))
        .collect()
}

#[derive(Args, Debug)]
struct CompareArgs {
    /// The scenario file (TOML; it must not set `program`, `[queues]` or the transport's
    /// congestion and pause keys, which each scheme brings).
    #[arg(long, value_name = "FILE")]
    scenario: PathBuf,
    /// Schemes to compare, comma-separated (default: the file's `[compare] schemes`, else
    /// every scheme in `t2sim schemes` order).
    #[arg(long, value_delimiter = ',')]
    schemes: Vec<String>,
    /// A scheme parameter, SCHEME.PARAM=VALUE (repeatable).
    #[arg(long = "set", value_name = "SCHEME.PARAM=VALUE")]
    settings: Vec<String>,
    /// Folder for compare.csv, compare.json, the plots and per-scheme results.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Runs at once, one per thread (default: every core; the output is the same whatever
    /// the number).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

/// Runs a comparison: tables to standard output, files to --out.
fn compare(args: &CompareArgs) -> Result<(), String> {
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
        schemes::names().iter().map(|s| s.to_string()).collect()
    };
    // The file's parameters of schemes the command leaves out do not apply.
    let mut settings = file.1;
    settings.retain(|scheme, _| names.contains(scheme));
    for (scheme, values) in t2sim::compare::scheme_settings(&args.settings)? {
        settings.entry(scheme).or_default().extend(values);
    }
    let started = Instant::now();
    let source = ScenarioText::read(&args.scenario)?;
    let threads = args
        .threads
        .map_or_else(t2sim::parallel::default_threads, usize::from);
    let c = t2sim::compare::compare_on(&source, &names, &settings, threads, |name| {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!("t2sim: compare: running {name}");
        }
    })?;
    let mut text = c.text();
    if let Some(dir) = &args.out {
        for f in c.write(dir)? {
            text += &format!("wrote            {f}\n");
        }
    }
    emit(&text);
    eprintln!(
        "t2sim: compared {} schemes in {:.1} s wall",
        c.runs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[derive(Args, Debug)]
#[group(id = "what", required = true, args = ["program", "scheme", "p4"])]
struct ReportArgs {
    /// The program file (JSON).
    #[arg(long)]
    program: Option<PathBuf>,
    /// A P4 program (T2NA or TNA) instead, lowered onto the IR (docs/p4.md).
    #[arg(long, value_name = "FILE.p4")]
    p4: Option<PathBuf>,
    /// With --p4: an include directory for the preprocessor (repeatable).
    #[arg(short = 'I', value_name = "DIR", requires = "p4")]
    include: Vec<PathBuf>,
    /// With --p4: a preprocessor definition NAME[=VALUE] (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", requires = "p4")]
    define: Vec<String>,
    /// A scheme's program instead of a file (`t2sim schemes` lists them), built from its
    /// parameters for ports of --gbps.
    #[arg(long, conflicts_with = "program")]
    scheme: Option<String>,
    /// A scheme parameter, NAME=VALUE (repeatable); the others keep their defaults.
    #[arg(long = "set", value_name = "NAME=VALUE", requires = "scheme")]
    settings: Vec<String>,
    /// Port speed the scheme's program is built for, Gb/s.
    #[arg(long, default_value_t = 100, requires = "scheme")]
    gbps: u64,
    /// Build the scheme's program for a network with equal-cost paths (ECMP selector).
    #[arg(long, requires = "scheme")]
    multipath: bool,
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
    let params = match &args.params {
        Some(p) => Tofino2Params::from_json_file(p).map_err(|e| e.to_string())?,
        None => Tofino2Params::default(),
    };
    let (program, path) = match (&args.program, &args.scheme) {
        (Some(file), _) => {
            let path = file.display().to_string();
            let text = std::fs::read_to_string(file).map_err(|e| format!("{path}: {e}"))?;
            (
                Program::from_json(&text).map_err(|e| format!("{path}: {e}"))?,
                path,
            )
        }
        (None, Some(name)) => (
            scheme_program(name, args, &params)?,
            format!("scheme {name}"),
        ),
        (None, None) => match &args.p4 {
            Some(file) => (
                t2sim::p4_commands::load(file, &args.include, &args.define)?.program,
                file.display().to_string(),
            ),
            None => unreachable!("clap requires --program, --scheme or --p4"),
        },
    };
    let (report, headroom) =
        t2sim::headroom::feasibility(&program, &params).map_err(|e| format!("{path}: {e}"))?;
    if args.json {
        let mut json = serde_json::to_value(&report).expect("a report always serializes");
        json["headroom"] = serde_json::to_value(&headroom).expect("headroom always serializes");
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json).expect("a JSON value always prints")
        ));
    } else {
        emit(&format!("{report}\n{headroom}"));
    }
    Ok(report.fits)
}

/// The program of scheme `name` with `--set` applied, for ports of `--gbps`.
fn scheme_program(
    name: &str,
    args: &ReportArgs,
    params: &Tofino2Params,
) -> Result<Program, String> {
    let scheme = schemes::find(name)?;
    let overrides = schemes::parse_settings(&args.settings)?;
    let values = scheme
        .resolve(&overrides)
        .map_err(|e| format!("scheme {name}: {e}"))?;
    let link_bps = args
        .gbps
        .checked_mul(1_000_000_000)
        .filter(|_| args.gbps > 0)
        .ok_or_else(|| format!("--gbps {}: must be a port speed in Gb/s above 0", args.gbps))?;
    let target = schemes::Target {
        params,
        link_bps,
        multipath: args.multipath,
    };
    Ok((scheme.build)(&values, &target).program)
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
            "p4", "pcap", "replay"
        ]
    )]
    scenario: Option<PathBuf>,
    /// With --scenario: the folder for summary.json, flows.csv and links.csv, and for the
    /// file's VCD dump and captures unless they name their own (overrides output.dir).
    #[arg(long, value_name = "DIR", requires = "scenario")]
    out: Option<PathBuf>,
    /// With --scenario: threads the network is split over, its switches (each with its
    /// hosts) running side by side (default: every core; the results are the same whatever
    /// the number; a run with captures uses one).
    #[arg(long, value_name = "N", requires = "scenario",
          value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
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
    /// A P4 program (T2NA or TNA) for the chip instead, lowered onto the IR (docs/p4.md).
    #[arg(long, value_name = "FILE.p4", conflicts_with = "program")]
    p4: Option<PathBuf>,
    /// With --p4: table entries by P4 names (`add` / `setdefault` lines, STF format).
    #[arg(long, value_name = "FILE", requires = "p4")]
    entries: Option<PathBuf>,
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
    threads: usize,
) -> Result<(), String> {
    let mut scenario = ScenarioFile::load(path)?;
    scenario.set_threads(threads);
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    if let Some(dir) = out {
        scenario.set_out_dir(dir);
    }
    let clock = scenario.topology.params.clock();
    let started = Instant::now();
    let results = scenario.run()?;
    // The results are written before anything is printed, so that a reader that stops
    // early (a closed pipe) cannot cost them.
    let mut written = Vec::new();
    if let Some(dir) = &scenario.out_dir {
        for p in results.write(dir, clock)? {
            written.push(p.display().to_string());
        }
        written.extend(t2sim::plots::run(&results, dir)?);
    }
    let mut text = results.text(clock);
    if let (Some(n), Some((w, switch))) = (results.traced_signals, &scenario.waves) {
        text += &format!(
            "waves            {n} signals of switch{switch} in {} (GTKWave: {})\n",
            w.vcd.display(),
            w.gtkw().display()
        );
    }
    for p in &results.pcap_files {
        text += &format!(
            "pcap             {} frames in {}\n",
            p.frames,
            p.path.display()
        );
    }
    if scenario.out_dir.is_some() {
        text += &wrote(&written);
    } else {
        text += "results          not written (no output.dir in the file; --out DIR writes them)\n";
    }
    emit(&text);
    eprintln!("wall time        {:.3} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn run(args: RunArgs) -> Result<(), String> {
    if let Some(path) = &args.scenario {
        let threads = args
            .threads
            .map_or_else(t2sim::parallel::default_threads, usize::from);
        return run_scenario_file(path, args.out.clone(), args.seed, threads);
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
        None if args.p4.is_some() => args
            .p4
            .as_ref()
            .map(|p| t2sim::p4_commands::load_with_entries(p, args.entries.as_deref()))
            .transpose()?,
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
                groups: Vec::new(),
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
    emit(&summary.to_string());
    let secs = wall.as_secs_f64();
    eprintln!(
        "wall time        {:.3} s, {:.2} M simulated packets per wall second ({} offered)",
        secs,
        summary.offered as f64 / secs.max(1e-9) / 1e6,
        summary.offered
    );
    Ok(())
}

/// The main job, `t2sim` with no arguments: every shipped scheme on the built-in default
/// network (`scenarios/default.toml`), with each scheme's fit on the chip.
fn default_comparison() -> Result<(), String> {
    let source = ScenarioText {
        text: include_str!("../scenarios/default.toml").to_string(),
        shown: "scenarios/default.toml (built in)".to_string(),
        base: PathBuf::from("."),
    };
    let names: Vec<String> = schemes::names().iter().map(|s| s.to_string()).collect();
    let started = Instant::now();
    let c = t2sim::compare::compare(&source, &names, &Default::default(), |_| {})?;
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

/// Exit status when standard output is a closed pipe (`t2sim params | head -1`): what a
/// Unix tool killed by SIGPIPE reports (128 + 13), without a message.
const BROKEN_PIPE_EXIT: i32 = 141;

/// Writes `text` to standard output. A closed pipe ends the program quietly, as it ends a
/// Unix tool; any other write error is reported.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::exit(BROKEN_PIPE_EXIT)
        }
        Err(e) => {
            eprintln!("t2sim: error: standard output: {e}");
            std::process::exit(2)
        }
    }
}

fn main() -> ExitCode {
    let bare = std::env::args_os().len() == 1;
    let cli = Cli::parse();
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
        Some(Command::Stf(args)) => match t2sim::p4_commands::stf(&args) {
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
