//! Scenario files: the examples run (from the CLI and the library), give identical results
//! twice, and bad files get errors that name the file, the key and the problem.

use std::path::{Path, PathBuf};
use std::process::Command;
use t2sim::scenario::ScenarioFile;

/// Queue samples with a packet in the incast example: one a microsecond while some queue
/// holds data. 344 since SACK recovery (RFC 6675) repairs most of its losses without a
/// timeout, so the run ends at 130 us instead of 460 (487 rows with go-back-N).
const QUEUE_ROWS: usize = 344;
const MAX_DEPTH: u64 = 400;
const PFC_SENT: u64 = 240;

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-scenario-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn incast_example_runs_from_the_cli_identically_twice() {
    let file = example("incast.toml");
    let (a, b) = (scratch("a"), scratch("b"));
    let run = |out: &Path| {
        t2sim(&[
            "run",
            "--scenario",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let (ra, rb) = (run(&a), run(&b));
    assert!(
        ra.status.success(),
        "{}",
        String::from_utf8_lossy(&ra.stderr)
    );
    // Identical but for the last lines, which name the files written in the output folder.
    let summary = |o: &std::process::Output| {
        let t = String::from_utf8(o.stdout.clone()).unwrap();
        t.lines()
            .filter(|l| !l.starts_with("wrote"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(summary(&ra), summary(&rb), "the summary is identical");
    let text = String::from_utf8(ra.stdout.clone()).unwrap();
    assert!(text.contains("24 completed of 24"), "{text}");
    assert!(text.contains("chip.tm_queue_limit"), "{text}");
    for f in ["summary.json", "flows.csv", "links.csv", "queues.csv"] {
        let x = std::fs::read(a.join(f)).unwrap();
        assert_eq!(
            x,
            std::fs::read(b.join(f)).unwrap(),
            "{f} differs between runs"
        );
    }
    let flows = std::fs::read_to_string(a.join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 25);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["completed"], 24);
    assert_eq!(summary["frames"]["unaccounted"], 0);
    assert!(summary["frames"]["dropped"].as_u64().unwrap() > 0);
    assert_eq!(summary["queue_sample_ns"], 1000);
    // No PFC in this scenario: no node has pause frames to report.
    assert_eq!(summary["pause_frames"], serde_json::json!({}));
    let queues = std::fs::read_to_string(a.join("queues.csv")).unwrap();
    let mut lines = queues.lines();
    assert_eq!(lines.next(), Some("time_ns,node,port,queue,depth_cells"));
    let rows: Vec<Vec<u64>> = lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            assert_eq!(c[1], "switch0");
            [c[0], c[2], c[3], c[4]]
                .iter()
                .map(|x| x.parse().unwrap())
                .collect()
        })
        .collect();
    // Samples every 1000 ns; depths within the 400-cell queue limit.
    assert!(rows
        .iter()
        .all(|r| r[0] % 1000 == 0 && r[3] > 0 && r[3] <= 400));
    assert_eq!(rows.len(), QUEUE_ROWS);
    // The incast fills the receiver's queue to its limit (hence the drops).
    assert_eq!(rows.iter().map(|r| r[3]).max(), Some(MAX_DEPTH));
    // Without the word `run` too.
    let plain = t2sim(&["--scenario", file.to_str().unwrap()]);
    assert!(plain.status.success());
}

#[test]
fn leaf_spine_example_completes_every_flow() {
    let s = ScenarioFile::load(&example("leaf_spine_w3.toml")).unwrap();
    let r = s.run().unwrap();
    assert_eq!((r.hosts, r.switches), (16, 6));
    assert!(r.flows > 1000, "{}", r.flows);
    assert_eq!(r.completed, r.flows);
    assert_eq!(r.frames.unaccounted, 0);
    assert!((r.offered_load - 0.4).abs() < 0.04, "{}", r.offered_load);
    let all = r.buckets.last().unwrap();
    assert!(all.p50_slowdown.unwrap() >= 1.0);
}

fn error_of(toml: &str) -> String {
    let d = scratch("bad");
    let p = d.join("bad.toml");
    std::fs::write(&p, toml).unwrap();
    let out = t2sim(&["run", "--scenario", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

const GOOD: &str = "seed = 1\nduration_us = 10\n[topology]\nkind = \"single_chip\"\nhosts = 2\n[workload]\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize_bytes = 1000\n";

#[test]
fn bad_files_name_the_file_key_and_problem() {
    let ok = t2sim(&["--scenario", &{
        let d = scratch("good");
        let p = d.join("good.toml");
        std::fs::write(&p, GOOD).unwrap();
        p.to_str().unwrap().to_string()
    }]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    for (toml, wants) in [
        (
            GOOD.replace("seed = 1", "seed = 1\ncolour = 3"),
            vec!["bad.toml", "unknown field `colour`"],
        ),
        (
            GOOD.replace("hosts = 2", "hostz = 2"),
            vec!["bad.toml", "unknown field `hostz`"],
        ),
        (
            GOOD.replace("hosts = 2\n", ""),
            vec!["bad.toml: topology.hosts: missing"],
        ),
        (
            GOOD.replace("hosts = 2", "hosts = 2\nk = 4"),
            vec!["topology.k: not used by kind single_chip"],
        ),
        (
            GOOD.replace("single_chip", "ring"),
            vec!["topology.kind: `ring` is not one of"],
        ),
        (
            GOOD.replace("duration_us = 10", "duration_us = 0"),
            vec!["duration_us: 0 is outside"],
        ),
        (
            GOOD.replace(
                "[workload]\n",
                "[workload]\ncdf = \"nope.txt\"\nload = 0.5\n",
            ),
            vec!["workload.cdf", "nope.txt: cannot read"],
        ),
        (
            GOOD.replace("[workload]\n", "[workload]\nload = 0.5\n"),
            vec!["workload.load: needs workload.cdf"],
        ),
        (
            GOOD.replace("seed = 1", "seed = \"one\""),
            vec!["bad.toml", "seed"],
        ),
        (
            GOOD.replace("dst = 1", "dst = 5"),
            vec!["bad.toml: workload.flows[0].dst: host 5 is not one of the 2 hosts (0..=1)"],
        ),
        (
            GOOD.replace(
                "[workload]\n",
                "[transport.qcn]\nbyte_counter_bytes = 0\n[workload]\n",
            ),
            vec!["bad.toml: transport.qcn.byte_counter_bytes: must be above 0"],
        ),
        (
            GOOD.replace(
                "[workload]\n",
                "[transport.qcn]\nmin_rate_mbps = 200000\n[workload]\n",
            ),
            vec!["transport.qcn.min_rate_mbps: 200000 is outside 1..=100000 (the link rate)"],
        ),
        (
            GOOD.replace("[workload]\n", "[transport.qcn]\nrate = 1\n[workload]\n"),
            vec!["bad.toml", "unknown field `rate`"],
        ),
        (
            format!("{GOOD}[output]\nqueue_sample_ns = 0\n"),
            vec!["bad.toml: output.queue_sample_ns: must be above 0"],
        ),
        (
            format!(
                "{}[output]\nqueue_sample_ns = 1\n",
                GOOD.replace("duration_us = 10", "duration_us = 200")
            ),
            vec!["output.queue_sample_ns: 1 ns over a 200000 ns run takes 200001 samples; at most 100000"],
        ),
    ] {
        let e = error_of(&toml);
        for w in wants {
            assert!(e.contains(w), "`{w}` not in: {e}");
        }
    }
    let cli = t2sim(&["--scenario", "x.toml", "--senders", "3"]);
    assert_eq!(cli.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&cli.stderr).contains("cannot be used with"));
}

#[test]
fn stepping_every_cycle_gives_the_same_results_as_jumping() {
    let mut s = ScenarioFile::load(&example("incast.toml")).unwrap();
    let jumped = s.run().unwrap();
    s.topology.stepping = t2_testbench::Stepping::EveryCycle;
    let stepped = s.run().unwrap();
    assert_eq!(jumped, stepped);
    assert!(jumped.drops.total() > 0);
    assert_eq!(jumped.queue_samples.len(), QUEUE_ROWS);
    // Stopping to sample queues changes nothing else.
    s.topology.stepping = t2_testbench::Stepping::Jump;
    s.queue_sample_ns = None;
    let unsampled = s.run().unwrap();
    assert!(unsampled.queue_samples.is_empty());
    assert_eq!(
        t2sim::scenario::RunResults {
            queue_sample_ns: Some(1000),
            queue_samples: jumped.queue_samples.clone(),
            pause_samples: jumped.pause_samples.clone(),
            ..unsampled
        },
        jumped
    );
}

#[test]
fn every_topology_kind_and_option_runs() {
    let w3 = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/workloads/W3.txt");
    let d = scratch("kinds");
    for (i, topology) in [
        "kind = \"fat_tree\"\nk = 4",
        "kind = \"dumbbell\"\nhosts_per_side = 3",
        "kind = \"pabo_tree\"\nhosts_per_edge = 2",
        "kind = \"single_chip\"\nhosts = 4\nqueue_limit_cells = 200",
    ]
    .iter()
    .enumerate()
    {
        let text = format!(
            "seed = 3\nduration_us = 20\ndrain_us = 2000\n[topology]\n{topology}\nlink_delay_ns = 200\n\
             [transport]\ncongestion = \"dctcp\"\nwindow_bytes = 20000\nrto_us = 50\n\
             [workload]\ncdf = \"{}\"\nsampling = \"step\"\nload = 0.3\narrivals = \"log_normal\"\nsigma = 2.0\n\
             [workload.incast]\ndegree = 2\nsize_bytes = 30000\nperiod_us = 10\n",
            w3.display()
        );
        let p = d.join(format!("s{i}.toml"));
        std::fs::write(&p, text).unwrap();
        let r = ScenarioFile::load(&p).unwrap().run().unwrap();
        assert!(r.flows > 4, "{topology}: {}", r.flows);
        assert_eq!(r.completed, r.flows, "{topology}");
        assert_eq!(r.frames.unaccounted, 0, "{topology}");
    }
}

#[test]
fn bfc_and_qcn_transport_keys_reach_the_hosts() {
    let d = scratch("nic-options");
    let p = d.join("nic.toml");
    let text = GOOD.replace(
        "[workload]\n",
        "[transport]\nhonour_bfc_pause = true\n[transport.qcn]\nr_ai_mbps = 7\ntimer_us = 100\n[workload]\n",
    );
    std::fs::write(&p, text).unwrap();
    let s = ScenarioFile::load(&p).unwrap();
    use t2sim::schemes::bfc::host as bfc;
    use t2sim::schemes::mice_elephant::qcn::host as qcn;
    let std = t2sim::schemes::mice_elephant::qcn::QcnParams::standard(t2_clock::Clock::tofino2());
    let own = t2sim::schemes::mice_elephant::qcn::QcnParams {
        r_ai_bps: 7_000_000,
        timer: 150_000,
        ..std
    };
    assert_eq!(s.topology.host_features, [qcn::spec(own), bfc::spec()]);
    let r = s.run().unwrap();
    assert_eq!((r.flows, r.completed, r.frames.unaccounted), (1, 1, 0));
}

#[test]
fn the_pacing_key_reaches_the_hosts_and_is_off_by_default() {
    let d = scratch("pacing");
    let p = d.join("paced.toml");
    std::fs::write(&p, GOOD).unwrap();
    assert!(!ScenarioFile::load(&p).unwrap().topology.transport.pacing);
    let text = GOOD.replace("[workload]\n", "[transport]\npacing = true\n[workload]\n");
    std::fs::write(&p, text).unwrap();
    let s = ScenarioFile::load(&p).unwrap();
    assert!(s.topology.transport.pacing);
    let r = s.run().unwrap();
    assert_eq!((r.flows, r.completed, r.frames.unaccounted), (1, 1, 0));
}

#[test]
fn pause_frame_counts_reach_the_summary() {
    // Four senders into one port with class 0 lossless and NICs honouring PFC (as in
    // tests/scenario/topology.rs): every PFC frame the chip sends reaches a sender.
    let d = scratch("pause");
    let p = d.join("pfc.toml");
    let mut text = String::from(
        "seed = 1\nduration_us = 10\ndrain_us = 4000\n[topology]\nkind = \"single_chip\"\nhosts = 5\n\
         [transport]\nwindow_bytes = 400000\nrto_us = 100\nhonour_pfc = true\n[workload]\n",
    );
    for src in 1..=4 {
        text += &format!("[[workload.flows]]\nsrc = {src}\ndst = 0\nsize_bytes = 2000000\n");
    }
    std::fs::write(&p, text).unwrap();
    let mut s = ScenarioFile::load(&p).unwrap();
    let tm = &mut s.topology.params.tm;
    tm.pfc_lossless_classes = 1;
    tm.pfc_xoff_cells = 300;
    tm.pfc_xon_cells = 200;
    tm.pfc_headroom_cells = 400;
    let r = s.run().unwrap();
    assert_eq!((r.completed, r.drops.total()), (4, 0));
    let chip = r.pause_frames["switch0"];
    let heard: u64 = (1..=4)
        .map(|h| r.pause_frames[&format!("host{h}")].pfc_received)
        .sum();
    assert_eq!(chip.pfc_sent, heard);
    assert_eq!((chip.pfc_sent, chip.pfc_received), (PFC_SENT, 0));
    assert!(
        !r.pause_frames.contains_key("host0"),
        "the receiver is never paused"
    );
}

#[test]
fn drops_are_located_by_node() {
    // The incast's drops all happen at its one switch, at the receiver's queue limit.
    let r = ScenarioFile::load(&example("incast.toml"))
        .unwrap()
        .run()
        .unwrap();
    assert!(r.drops.total() > 0);
    let places: Vec<&str> = r.drops_by_node.keys().map(|k| k.as_str()).collect();
    assert_eq!(places, vec!["switch0"]);
    assert_eq!(r.drops_by_node["switch0"], r.drops);
}

#[test]
fn queues_configure_every_switch_port() {
    let d = scratch("queues");
    let p = d.join("q.toml");
    let queues = "[queues]\ncount = 32\n[[queues.queue]]\nid = 1\npriority = 7\nweight = 3\nmax_rate_mbps = 50000\nlimit_cells = 273\n";
    std::fs::write(&p, format!("{GOOD}{queues}")).unwrap();
    let s = ScenarioFile::load(&p).unwrap();
    let topo = s.build().unwrap();
    let chip = topo.net.node::<t2sim::Chip>(topo.chips[0]);
    for port in 0..2 {
        assert_eq!(chip.tm().queue_count(port), 32);
        let q1 = chip.tm().queue_config(port, 1);
        assert_eq!(
            (q1.priority, q1.weight, q1.max_rate_bps, q1.limit_cells),
            (7, 3, Some(50_000_000_000), Some(273))
        );
        assert_eq!(
            *chip.tm().queue_config(port, 2),
            t2_tm::QueueConfig::default()
        );
    }
    // The run itself goes through the configured queues.
    assert_eq!(s.run().unwrap().completed, 1);
    // Errors name the key; the chip's own limits name the chip and port.
    let err = |queues: &str| error_of(&format!("{GOOD}{queues}"));
    let e = err("[queues]\ncount = 8\n");
    assert!(e.contains("queues.count: 8 is outside 16..=128"), "{e}");
    let e = err("[queues]\ncount = 16\n[[queues.queue]]\nid = 16\n");
    assert!(
        e.contains("queues.queue[0].id: 16 is not a queue of 16"),
        "{e}"
    );
    let e = err("[queues]\ncount = 16\n[[queues.queue]]\nid = 2\n[[queues.queue]]\nid = 2\n");
    assert!(
        e.contains("queues.queue[1].id: queue 2 is listed twice"),
        "{e}"
    );
    let e = err("[queues]\ncount = 16\n[[queues.queue]]\nid = 0\nweight = 2000\n");
    assert!(
        e.contains("queues.queue[0]: weight 2000 is outside 0..=1023"),
        "{e}"
    );
    // A 100G port has 2 of its group's 8 channels: at most 32 queues.
    let e = err("[queues]\ncount = 64\n");
    assert!(
        e.contains("queues: chip") && e.contains("64 queues is outside 16..=32"),
        "{e}"
    );
    let e = err("[queues]\ncount = 16\n[[queues.queue]]\nid = 0\nbogus = 1\n");
    assert!(e.contains("unknown field `bogus`"), "{e}");
}

#[test]
fn output_vcd_traces_one_switch_deterministically() {
    let d = scratch("waves");
    let p = d.join("w.toml");
    let out = "[output]\nvcd = \"sw.vcd\"\ntrace = \"chip.port*.**\"\n";
    std::fs::write(&p, format!("{GOOD}{out}")).unwrap();
    let run = || {
        let r = ScenarioFile::load(&p).unwrap().run().unwrap();
        (r, std::fs::read(d.join("sw.vcd")).unwrap())
    };
    let (r, a) = run();
    let (_, b) = run();
    assert_eq!(a, b, "the dump is byte-identical across runs");
    let text = String::from_utf8(a).unwrap();
    // Two ports' rx_pkt, rx_fifo, tx_pkt and tx_busy, and the dump's own cycle counter.
    let vars = text.lines().filter(|l| l.starts_with("$var")).count();
    assert_eq!((vars, r.traced_signals), (9, Some(8)));
    assert!(
        vars > 0 && text.contains("$scope module port8 $end"),
        "{text:.400}"
    );
    let gtkw = std::fs::read_to_string(d.join("sw.gtkw")).unwrap();
    assert!(gtkw.contains("sw.vcd"), "{gtkw}");
    // Through the CLI the summary names the dump.
    let cli = t2sim(&["run", "--scenario", p.to_str().unwrap()]);
    let stdout = String::from_utf8(cli.stdout).unwrap();
    assert!(
        stdout.contains("waves            8 signals of switch0 in"),
        "{stdout}"
    );
    // Errors name the key.
    let e = error_of(&format!("{GOOD}[output]\ntrace = \"chip.**\"\n"));
    assert!(e.contains("output.trace: needs output.vcd"), "{e}");
    let e = error_of(&format!(
        "{GOOD}[output]\nvcd = \"x.vcd\"\ntrace_switch = 3\n"
    ));
    assert!(
        e.contains("output.trace_switch: 3, but the topology has 1 switches"),
        "{e}"
    );
    let e = error_of(&format!(
        "{GOOD}[output]\nvcd = \"x.vcd\"\ntrace = \"chip.[\"\n"
    ));
    assert!(e.contains("output.trace:"), "{e}");
}

#[test]
fn a_p4_program_takes_the_files_defines_and_includes() {
    // DCTCP's switch as the scheme builds it (k_cells = 40, its P4 with -D K_CELLS=40) and
    // as a file program with `p4_define`: the same program, so the same run.
    let dir = scratch("p4_defines");
    std::fs::create_dir_all(&dir).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let top = "seed = 1\nduration_us = 40\ndrain_us = 400\n";
    let common = "[topology]\nkind = \"single_chip\"\nhosts = 5\nlink_gbps = 100\n\
        [workload.incast]\ndegree = 4\nsize_bytes = 64000\nperiod_us = 20\nfirst_us = 1\n";
    let scheme = dir.join("scheme.toml");
    std::fs::write(
        &scheme,
        format!("scheme = \"dctcp\"\n{top}[scheme_params]\nk_cells = 40\n{common}"),
    )
    .unwrap();
    let file = dir.join("file.toml");
    std::fs::write(
        &file,
        format!(
            "program = \"{root}/src/schemes/dctcp/dctcp.p4\"\np4_define = [\"K_CELLS=40\"]\n\
             p4_include = [\"{root}/pipeline/p4include\"]\n{top}{common}\
             [transport]\ncongestion = \"dctcp\"\n"
        ),
    )
    .unwrap();
    let a = ScenarioFile::load(&scheme).unwrap();
    let b = ScenarioFile::load(&file).unwrap();
    assert_eq!(a.topology.program, b.topology.program);
    let (ra, rb) = (a.run().unwrap(), b.run().unwrap());
    assert_eq!(ra.records, rb.records);
    assert_eq!(ra.frames, rb.frames);
    // Without the define the threshold is the file's default, 400 cells: another program.
    let plain = dir.join("plain.toml");
    std::fs::write(
        &plain,
        format!("program = \"{root}/src/schemes/dctcp/dctcp.p4\"\n{top}{common}"),
    )
    .unwrap();
    assert_ne!(
        ScenarioFile::load(&plain).unwrap().topology.program,
        a.topology.program
    );
    // The keys need a P4 program.
    let json = dir.join("json.toml");
    std::fs::write(
        &json,
        format!(
            "program = \"{root}/programs/dctcp_switch.json\"\np4_define = [\"K=1\"]\n{top}{common}"
        ),
    )
    .unwrap();
    let e = ScenarioFile::load(&json).err().unwrap();
    assert_eq!(
        e,
        format!(
            "{}: p4_define: applies only to a P4 program (program = \"FILE.p4\")",
            json.display()
        )
    );
}

#[test]
fn every_shipped_scenario_file_loads() {
    // Reading a file checks all of it (keys, values, the workload's CDF, the scheme's
    // parameters) without running it, so a file the docs or scripts name cannot rot.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 26, "{} scenario files", files.len());
    for f in &files {
        if let Err(e) = ScenarioFile::load(f) {
            panic!("{}: {e}", f.display());
        }
    }
}
