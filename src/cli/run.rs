//! `t2sim run`: a scenario file, or the built-in incast through one chip at line rate, with
//! waves, captures and replay.

use super::{emit, wrote};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;
use t2_pipeline::ir::Program;
use t2_testbench::Stepping;
use t2_waves::TraceFilter;
use t2sim::capture::{CaptureSpec, PcapRequest, ReplayRequest, ReplayTiming};
use t2sim::chip::trace::DEFAULT_TRACE;
use t2sim::scenario::{IncastScenario, ScenarioFile, WaveRequest};
use t2sim::Tofino2Params;

#[derive(Args, Debug)]
pub struct RunArgs {
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
    pub scenario: Option<PathBuf>,
    /// With --scenario: the folder for summary.json, flows.csv and links.csv, and for the
    /// file's VCD dump and captures unless they name their own (overrides output.dir).
    #[arg(long, value_name = "DIR", requires = "scenario")]
    pub out: Option<PathBuf>,
    /// With --scenario: threads the network is split over, its switches (each with its
    /// hosts) running side by side (default: every core, but at most one per two switches;
    /// the results are the same whatever the number; a run with captures uses one).
    #[arg(long, value_name = "N", requires = "scenario",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// With --scenario: the seed of every random choice (overrides the file's `seed`).
    #[arg(long, requires = "scenario")]
    pub seed: Option<u64>,
    /// Number of sending hosts.
    #[arg(long, default_value_t = 4)]
    pub senders: u32,
    /// Speed of every port and NIC in Gb/s (1, 10, 25, 40, 50, 100, 200 or 400).
    #[arg(long, default_value_t = 100)]
    pub speed_gbps: u64,
    /// Each sender's rate as a percentage of the port speed.
    #[arg(long, default_value_t = 100)]
    pub load_percent: u32,
    /// Frame length in bytes, FCS included (64..=9216).
    #[arg(long, default_value_t = 1500)]
    pub frame_bytes: u32,
    /// Simulated time in microseconds.
    #[arg(long, default_value_t = 100)]
    pub duration_us: u64,
    /// Propagation delay of every link in nanoseconds.
    #[arg(long, default_value_t = 100)]
    pub link_ns: u64,
    /// Static limit, in cells, on every TM queue (default: the dynamic threshold and the shared buffer only).
    #[arg(long)]
    pub queue_limit_cells: Option<u32>,
    /// A JSON parameter file (start from `t2sim params`).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// A JSON program for the chip instead of the built-in IPv4 forwarding (see programs/;
    /// its `ipv4_host` table gets the scenario's host routes), e.g. programs/dctcp_switch.json.
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
    /// A P4 program (T2NA or TNA) for the chip instead, lowered onto the IR (docs/p4.md).
    #[arg(long, value_name = "FILE.p4", conflicts_with = "program")]
    pub p4: Option<PathBuf>,
    /// With --p4: table entries by P4 names (`add` / `setdefault` lines, STF format).
    #[arg(long, value_name = "FILE", requires = "p4")]
    pub entries: Option<PathBuf>,
    /// With --p4: an include directory for the preprocessor (repeatable).
    #[arg(short = 'I', value_name = "DIR", requires = "p4")]
    pub include: Vec<PathBuf>,
    /// With --p4: a preprocessor definition NAME[=VALUE] (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", requires = "p4")]
    pub define: Vec<String>,
    /// With --p4: write the digests the program sent the control plane to this CSV file
    /// (`cycle,chip,pipe,digest,values`, one row per digest; docs/p4.md, Digests).
    #[arg(long, value_name = "FILE.csv", requires = "p4")]
    pub digests: Option<PathBuf>,
    /// Visit every cycle instead of jumping over quiet ones (slower; same results).
    #[arg(long)]
    pub step_every_cycle: bool,
    /// Write a VCD waveform of the chip to this file, and a GTKWave save file beside it
    /// (same name, `.gtkw`). Open both with `gtkwave DUMP.vcd DUMP.gtkw`.
    #[arg(long, value_name = "PATH")]
    pub vcd: Option<PathBuf>,
    /// Which signals to trace: comma-separated globs over dotted names, e.g.
    /// 'chip.tm.**,chip.pipe0.ingress.stage0*' (default: ports, TM and per-gress summaries).
    #[arg(long, value_name = "GLOBS", requires = "vcd")]
    pub trace: Option<String>,
    /// Capture ports or links to pcapng files in DIR (one file per point, nanosecond time
    /// stamps from the simulated clock): comma-separated NODE[:PORT] (what the port sends
    /// and receives) or link:NODE[:PORT] (both ends of the link), e.g. 'chip:0,link:sender0';
    /// a chip's PORT may be a device port, 'chip:d8' (docs/pcap.md).
    #[arg(long, num_args = 2, value_names = ["PORTSPEC", "DIR"])]
    pub pcap: Vec<String>,
    /// Replay the frames of a pcap or pcapng file (Ethernet) into a node's port (see
    /// --replay-into), at their recorded times unless --replay-gbps paces them.
    #[arg(long, value_name = "FILE", requires = "replay_into")]
    pub replay: Option<PathBuf>,
    /// Where --replay's frames arrive: NODE[:PORT], e.g. 'chip:1' (as if sent over the
    /// port's link) or 'receiver' (a host's NIC).
    #[arg(long, value_name = "NODE[:PORT]", requires = "replay")]
    pub replay_into: Option<String>,
    /// Send --replay's frames back to back at this rate (Gb/s, at most the port's speed)
    /// instead of at their recorded times.
    #[arg(long, value_name = "GBPS", requires = "replay")]
    pub replay_gbps: Option<u64>,
}

/// Runs a scenario file: the summary to standard output, results to the output folder.
pub fn run_scenario_file(
    path: &std::path::Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
    threads: Option<u16>,
) -> Result<(), String> {
    let mut scenario = ScenarioFile::load(path)?;
    // Unless told, every core the network is worth splitting over.
    let threads = threads.map_or_else(
        || t2sim::study::parallel::default_threads().min(scenario.threads_worth_using()),
        usize::from,
    );
    scenario.set_threads(threads);
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    let named = if out.is_some() { "--out" } else { "output.dir" };
    if let Some(dir) = out {
        scenario.set_out_dir(dir);
    }
    // The folder is checked and cleared of an earlier run's files before the run.
    if let Some(dir) = &scenario.out_dir {
        t2sim::scenario::out_dir::prepare(dir, named, &scenario.source)?;
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
        written.extend(t2sim::study::plots::run(&results, dir)?);
        t2sim::scenario::out_dir::finish(dir)?;
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
    if !results.control_errors.is_empty() && !scenario.expect_control_errors {
        return Err(format!(
            "{}: control: {} operations were refused when they landed (listed above); set \
             expect_control_errors = true if the file means them to fail",
            scenario.source,
            results.control_errors.len()
        ));
    }
    Ok(())
}

pub fn run(args: RunArgs) -> Result<(), String> {
    // clap drops a `requires = "p4"` when the flag --p4 conflicts with (--scenario,
    // --program) is given, so these were ignored without a word there.
    if args.p4.is_none() {
        let instead = if args.scenario.is_some() {
            "--scenario"
        } else {
            "--program"
        };
        for (flag, given) in [
            ("--entries", args.entries.is_some()),
            ("--digests", args.digests.is_some()),
            ("-I", !args.include.is_empty()),
            ("-D", !args.define.is_empty()),
        ] {
            if given {
                return Err(format!(
                    "{flag}: applies to a P4 program (--p4) only; a run with {instead} would \
                     ignore it"
                ));
            }
        }
    }
    if let Some(path) = &args.scenario {
        return run_scenario_file(path, args.out.clone(), args.seed, args.threads);
    }
    let mut params = match &args.params {
        Some(path) => {
            // The size cap first (the parameter reader reads without one); a missing file
            // is the reader's to name.
            if path.exists() {
                t2sim::input::read_text(path)?;
            }
            Tofino2Params::from_json_file(path).map_err(|e| e.to_string())?
        }
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
            .map(|p| {
                t2sim::stf::load_with_entries(
                    p,
                    &args.include,
                    &args.define,
                    args.entries.as_deref(),
                )
            })
            .transpose()?,
        None => None,
        Some(path) => {
            let shown = path.display();
            let text = t2sim::input::read_text(path)?;
            let program = Program::from_json(&text).map_err(|e| format!("{shown}: {e}"))?;
            // Checked here too, so that its errors name the file (the chip's name it by the
            // program's `name`).
            t2_pipeline::check::check_with(&program, &params.pipeline.phv)
                .map_err(|e| format!("{shown}: {e}"))?;
            Some(program)
        }
    };
    if let Some(p) = &program {
        if !p
            .tables
            .iter()
            .any(|t| t.name == t2sim::chip::pipes::ROUTE_TABLE)
        {
            eprintln!(
                "t2sim: note: program {} has no table `{}`: the chip installs no host routes, \
                 and packets go where the program and its entries send them",
                p.name,
                t2sim::chip::pipes::ROUTE_TABLE
            );
        }
    }
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
    // The chip names a program it refuses (its host routes conflict with the program's
    // entries, or overflow its table) by the program's name: name the file instead, the
    // entries file when there is one (what the user added), else the program's.
    let program_name = scenario.program.as_ref().map(|p| p.name.clone());
    let program_file = args
        .entries
        .as_ref()
        .or(args.p4.as_ref())
        .or(args.program.as_ref())
        .map(|p| p.display().to_string());
    let started = Instant::now();
    let summary = scenario.run().map_err(|e| {
        let e = e.to_string();
        match (&program_name, &program_file) {
            (Some(name), Some(file)) if e.starts_with(&format!("program {name}: ")) => {
                format!("{file}: {}", &e[format!("program {name}: ").len()..])
            }
            // A key of the parameter file the chip refuses (checked against its ports).
            _ => match &args.params {
                Some(p) if t2sim::scenario::names_a_param(&e) => {
                    format!("{}: {e}", p.display())
                }
                _ => e,
            },
        }
    })?;
    let wall = started.elapsed();
    let mut text = summary.to_string();
    if let Some(path) = &args.digests {
        let csv = t2sim::chip::digests_csv("chip", &summary.digest_names, &summary.digests);
        std::fs::write(path, csv).map_err(|e| format!("--digests: {}: {e}", path.display()))?;
        text += &wrote(&[path.display().to_string()]);
    }
    emit(&text);
    let secs = wall.as_secs_f64();
    eprintln!(
        "wall time        {:.3} s, {:.2} M simulated packets per wall second ({} offered)",
        secs,
        summary.offered as f64 / secs.max(1e-9) / 1e6,
        summary.offered
    );
    Ok(())
}
