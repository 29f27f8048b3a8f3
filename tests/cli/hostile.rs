//! Issue 30's hostile inputs as the command meets them: operations refused when they land
//! fail the run (unless the file expects them), output folders that cannot be written are
//! found before the run and named by flag or key, and a second run into a folder does not
//! leave the first run's files.

use std::path::{Path, PathBuf};
use std::process::Command;

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A two-host droptail scenario (its program has `ipv4_host`) with `extra` appended.
fn scenario(dir: &Path, top: &str, extra: &str) -> PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        format!(
            "{top}\nseed = 1\nduration_us = 5\nscheme = \"droptail\"\n[topology]\nkind = \
             \"single_chip\"\nhosts = 2\n[workload]\n[[workload.flows]]\nsrc = 0\ndst = 1\n\
             size_bytes = 1000\n{extra}"
        ),
    )
    .unwrap();
    p
}

const DELETE_ABSENT: &str =
    "[[control]]\nat_ns = 100\nop = \"delete_entry\"\ntable = \"ipv4_host\"\nkey = [1]\n";

/// Case 11: a delete of an entry that is not there is refused when it lands; the summary
/// lists it and the run exits 2, unless the file says it expects it.
#[test]
fn an_operation_refused_when_it_lands_fails_the_run_unless_expected() {
    let d = scratch("refused");
    let f = scenario(&d, "", DELETE_ABSENT);
    let out = t2sim(&["run", "--scenario", f.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        text.contains(
            "control          1 operations refused when they landed\n  cycle 150: control[0]: \
             chip switch0: pipe 0 delete_entry in `ipv4_host`: "
        ),
        "{text}"
    );
    assert!(
        err.contains(&format!(
            "t2sim: error: {}: control: 1 operations were refused when they landed (listed \
             above); set expect_control_errors = true if the file means them to fail",
            f.display()
        )),
        "{err}"
    );
    let f = scenario(&d, "expect_control_errors = true", DELETE_ABSENT);
    let out = t2sim(&["run", "--scenario", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("control          1 operations refused"),
        "{text}"
    );
}

/// Case 22: an `--out` that is a file, or an `output.dir` that cannot be created, is found
/// before the run and named by flag or key with the scenario.
#[test]
fn an_output_folder_that_cannot_be_written_is_named_before_the_run() {
    let d = scratch("outfile");
    let f = scenario(&d, "", "");
    let afile = d.join("afile");
    std::fs::write(&afile, "x").unwrap();
    let out = t2sim(&[
        "run",
        "--scenario",
        f.to_str().unwrap(),
        "--out",
        afile.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "found only after the run");
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "t2sim: error: {}: --out: {}: is a file, not a folder\n",
            f.display(),
            afile.display()
        )
    );
    let f = scenario(&d, "", "[output]\ndir = \"afile/sub\"\n");
    let out = t2sim(&["run", "--scenario", f.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.starts_with(&format!(
            "t2sim: error: {}: output.dir: {}: cannot create the folder: ",
            f.display(),
            d.join("afile/sub").display()
        )),
        "{err}"
    );
}

/// Case 20: a second run into the same folder removes the first run's result files (here
/// `queues.csv` and `pauses.csv`, which the second does not write), and a run in progress
/// leaves a marker that only its end removes.
#[test]
fn a_second_run_into_a_folder_leaves_none_of_the_first_runs_files() {
    let d = scratch("stale");
    let out_dir = d.join("out");
    let run = |extra: &str| {
        let f = scenario(&d, "", extra);
        let out = t2sim(&[
            "run",
            "--scenario",
            f.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut names: Vec<String> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    let first = run("[output]\nqueue_sample_ns = 1000\n");
    assert!(first.contains(&"queues.csv".to_string()), "{first:?}");
    assert!(first.contains(&"pauses.csv".to_string()), "{first:?}");
    std::fs::write(out_dir.join("notes.txt"), "mine").unwrap();
    let second = run("");
    assert!(!second.contains(&"queues.csv".to_string()), "{second:?}");
    assert!(!second.contains(&"pauses.csv".to_string()), "{second:?}");
    assert!(!second.contains(&"INCOMPLETE".to_string()), "{second:?}");
    // A file t2sim did not write stays.
    assert!(second.contains(&"notes.txt".to_string()), "{second:?}");
    // A run killed part way (as by SIGINT or a crash) leaves the marker, and none of the
    // earlier run's results.
    let f = scenario(&d, "drain_us = 100000", "")
        .to_str()
        .unwrap()
        .to_string();
    std::fs::write(
        &f,
        std::fs::read_to_string(&f)
            .unwrap()
            .replace("size_bytes = 1000", "size_bytes = 1000000000"),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(["run", "--scenario", &f, "--out", out_dir.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while !out_dir.join("INCOMPLETE").exists() && t.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run ended before it was killed");
    assert!(out_dir.join("INCOMPLETE").exists());
    assert!(!out_dir.join("summary.json").exists());
    let marker = std::fs::read_to_string(out_dir.join("INCOMPLETE")).unwrap();
    assert!(marker.contains("the run did not end"), "{marker}");
}

/// Case 5: a program of 20,000 applied tables is refused by its table count before the
/// (quadratic) dependency step: gigabytes and seconds before, a fraction of a second now.
#[test]
fn a_program_of_more_tables_than_twenty_stages_hold_is_refused_at_once() {
    let d = scratch("tables");
    let n = 20_000;
    let tables: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{{\"name\":\"t{i}\",\"kind\":\"exact\",\"keys\":[],\"size\":0,\"actions\":[\"d\"],\
                 \"default_action\":{{\"action\":\"d\",\"args\":[]}},\"entries\":[]}}"
            )
        })
        .collect();
    let applies: Vec<String> = (0..n).map(|i| format!("{{\"apply\":\"t{i}\"}}")).collect();
    let json = format!(
        "{{\"name\":\"many\",\"metadata\":[],\"hashes\":[],\"registers\":[],\"register_actions\":[],\
         \"actions\":[{{\"name\":\"d\",\"params\":[],\"primitives\":[{{\"op\":\"drop\",\"reason\":\"no_route\"}}]}}],\
         \"tables\":[{}],\"ingress\":[{}]}}",
        tables.join(","),
        applies.join(",")
    );
    let p = d.join("many.json");
    std::fs::write(&p, json).unwrap();
    let t = std::time::Instant::now();
    let out = t2sim(&["report", "--program", p.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "verdict          DOES NOT FIT: `ingress` does not fit: logical_ids needs 20000 of \
             320 (20000 tables applied in one thread; all 20 stages together hold 320)\n"
        ),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
}

/// Case 25: frames replayed into a sending host are taken in by it (`returned`) and the
/// census that the summary shows with a replay counts them: nothing is lost from the sum.
#[test]
fn frames_replayed_into_a_sender_are_counted() {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fuzz_corpus/pcapng/ns.pcapng"
    );
    let run = |us: &str| {
        let out = t2sim(&[
            "run",
            "--replay",
            capture,
            "--replay-into",
            "sender0",
            "--duration-us",
            us,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run("1");
    assert!(
        text.contains(
            "\n  census         32 offered + 3 replayed = 1 delivered + 2 returned + 0 dropped + \
             26 in the chip + 6 on links (0 unaccounted)\n"
        ),
        "{text}"
    );
    let text = run("5");
    assert!(
        text.contains("3 replayed = ") && text.contains(" (0 unaccounted)\n"),
        "{text}"
    );
    assert!(
        text.contains(" + 3 returned + "),
        "all three reach sender0: {text}"
    );
}

/// Case 24: `output.pcap` with only `--out` for a folder captures into `--out`; a folder
/// given to `--replay` is named as one.
#[test]
fn captures_go_to_out_and_a_folder_is_not_a_capture() {
    let d = scratch("pcap_out");
    let f = scenario(&d, "", "[output]\npcap = \"host0\"\n");
    let out_dir = d.join("o");
    let out = t2sim(&[
        "run",
        "--scenario",
        f.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out_dir.join("host0-0.pcapng").exists());
    let out = t2sim(&[
        "run",
        "--replay",
        d.to_str().unwrap(),
        "--replay-into",
        "sender0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "t2sim: error: {}: is a folder, not a pcap or pcapng file\n",
            d.display()
        )
    );
}

/// Case 16: `report --gbps` must be a Tofino2 port speed, and the flags that build a
/// scheme's program are refused with `--program` instead of being ignored.
#[test]
fn report_refuses_port_speeds_and_flags_it_cannot_use() {
    let err = |args: &[&str]| {
        let out = t2sim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    for gbps in ["7", "18446744073"] {
        assert_eq!(
            err(&["report", "--scheme", "bfc", "--gbps", gbps]),
            format!(
                "t2sim: error: --gbps {gbps}: is not a Tofino2 port speed (Gb/s: 1, 10, 25, 40, \
                 50, 100, 200, 400)\n"
            )
        );
    }
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/l3_forward.json");
    for (flag, extra) in [
        ("--gbps", "400"),
        ("--set", "k_cells=5"),
        ("--multipath", ""),
    ] {
        let mut args = vec!["report", "--program", program, flag];
        if !extra.is_empty() {
            args.push(extra);
        }
        assert_eq!(
            err(&args),
            format!(
                "t2sim: error: {flag}: builds a scheme's program, so it needs --scheme; \
                 --program's file is built already\n"
            )
        );
    }
    assert!(t2sim(&["report", "--scheme", "bfc", "--gbps", "400"])
        .status
        .success());
}

/// Case 23: `run --program` errors name the file, not the program's `name`.
#[test]
fn program_errors_name_the_file() {
    let d = scratch("program");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/l3_forward.json"
    ))
    .unwrap();
    let bad = text.replacen("\"apply\": \"not_ipv4\"", "\"apply\": \"nosuch\"", 1);
    assert_ne!(bad, text);
    let p = d.join("p.json");
    std::fs::write(&p, bad).unwrap();
    let out = t2sim(&[
        "run",
        "--program",
        p.to_str().unwrap(),
        "--duration-us",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(&format!("t2sim: error: {}: ", p.display())) && err.contains("`nosuch`"),
        "{err}"
    );
}

/// Case 16: PFC XON above XOFF, or a buffer with no headroom above XOFF, refused by
/// `--set` (and the same check applies to a scenario's `[scheme_params]`).
#[test]
fn pfc_thresholds_that_contradict_each_other_are_refused() {
    let err = |set: &str| {
        let out = t2sim(&["report", "--scheme", "mice-elephant", "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(err("pfc_xon_bytes=30000").contains(
        "pfc_xon_bytes: 30000 is above pfc_xoff_bytes (24470): a class resumes below the \
             threshold that paused it"
    ));
    assert!(err("pfc_buffer_bytes=20000").contains(
        "pfc_buffer_bytes: 20000 leaves no headroom above pfc_xoff_bytes (24470): the buffer \
         is XOFF plus at least one 176-byte cell"
    ));
}

/// Case 20 (compare): a second comparison into the same folder leaves no folder of a
/// scheme it did not run; an `--out` that is a file is named before anything runs.
#[test]
fn a_second_comparison_leaves_no_old_scheme_folders() {
    let d = scratch("compare");
    let f = d.join("c.toml");
    std::fs::write(
        &f,
        "seed = 1\nduration_us = 5\n[topology]\nkind = \"single_chip\"\nhosts = 2\n[workload]\n\
         [[workload.flows]]\nsrc = 0\ndst = 1\nsize_bytes = 1000\n",
    )
    .unwrap();
    let out_dir = d.join("out");
    let compare = |schemes: &str| {
        t2sim(&[
            "compare",
            "--scenario",
            f.to_str().unwrap(),
            "--schemes",
            schemes,
            "--out",
            out_dir.to_str().unwrap(),
        ])
    };
    assert!(compare("droptail,dctcp").status.success());
    assert!(out_dir.join("dctcp/summary.json").exists());
    let out = compare("droptail");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out_dir.join("dctcp").exists());
    assert!(out_dir.join("droptail/summary.json").exists());
    assert!(!out_dir.join("INCOMPLETE").exists());
    assert!(!out_dir.join("droptail/INCOMPLETE").exists());
    let out = t2sim(&[
        "compare",
        "--scenario",
        f.to_str().unwrap(),
        "--schemes",
        "droptail",
        "--out",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "t2sim: error: {}: --out: {}: is a file, not a folder\n",
            f.display(),
            f.display()
        )
    );
}

/// Issue 55 (case 22 of the round before, for sweeps): an `--out` that is a file is named
/// before the sweep runs (it was `File exists (os error 17)` after every point had run).
#[test]
fn a_sweep_out_that_is_a_file_is_named_before_the_sweep() {
    let d = scratch("sweep_out");
    let f = scenario(&d, "", "");
    let afile = d.join("afile");
    std::fs::write(&afile, "x").unwrap();
    let out = t2sim(&[
        "sweep",
        "--scenario",
        f.to_str().unwrap(),
        "--grid",
        "seed=1,2",
        "--out",
        afile.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "t2sim: error: {}: --out: {}: is a file, not a folder\n",
            f.display(),
            afile.display()
        )
    );
    let out = t2sim(&["sweep-merge", "--out", afile.to_str().unwrap(), "a", "b"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "t2sim: error: --out: {}: is a file, not a folder\n",
            afile.display()
        )
    );
}

/// Issue 55 (round before): `tm.ppg_min_cells`, which only a built chip can check against
/// its ports, is refused naming the parameter file.
#[test]
fn a_parameter_the_chip_refuses_names_the_file() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/bad_inputs/scenarios/data/ppg_min_huge.json"
    );
    let out = t2sim(&["run", "--params", p, "--duration-us", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(&format!(
            "t2sim: error: {p}: chip chip: tm.ppg_min_cells: [1000000000, "
        )),
        "{err}"
    );
}
