//! The `t2sim` command as a user runs it.

use std::process::Command;

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

/// The block under "What `t2sim` shows" in README.md.
fn readme_block() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("## What `t2sim` shows")
        .expect("README has the section");
    let block = &readme[start..];
    let open = block.find("```\n").expect("an output block") + 4;
    let close = open + block[open..].find("```\n").expect("the block ends");
    block[open..close].to_string()
}

#[test]
fn no_arguments_prints_exactly_what_readme_shows_identically_twice() {
    let a = t2sim(&[]);
    let b = t2sim(&[]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout, "stdout must be byte-identical");
    let text = String::from_utf8(a.stdout).unwrap();
    assert_eq!(text, readme_block(), "README's output block is stale");
    for scheme in t2sim::schemes::default_comparison_names() {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("  {scheme:<13} fits"))),
            "{scheme} has no fit line:\n{text}"
        );
    }
}

#[test]
fn run_prints_the_summary_identically_twice() {
    let a = t2sim(&["run"]);
    let b = t2sim(&["run"]);
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout, "stdout must be byte-identical");
    let text = String::from_utf8(a.stdout).unwrap();
    for line in [
        "offered          3288 packets",
        "dropped          0 packets",
        "port-to-port     min 864 ",
        "unloaded       864 cycles = 576.000 ns",
        "simulated        150000 cycles = 100000.000 ns at 1500 MHz",
    ] {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
    let err = String::from_utf8(a.stderr).unwrap();
    assert!(err.contains("simulated packets per wall second"), "{err}");
}

#[test]
fn run_subcommand_and_flags_agree_with_the_default() {
    let plain = t2sim(&["run"]);
    let run = t2sim(&["run", "--senders", "4", "--duration-us", "100"]);
    assert_eq!(plain.stdout, run.stdout);
}

#[test]
fn help_explains_the_commands() {
    let h = t2sim(&["--help"]);
    assert!(h.status.success());
    let text = String::from_utf8(h.stdout).unwrap();
    assert!(text.contains("run"), "{text}");
    assert!(text.contains("params"), "{text}");
    assert!(text.contains("default scenario"), "{text}");
    assert!(text.contains("compare"), "{text}");
}

#[test]
fn params_prints_json_that_run_accepts() {
    let p = t2sim(&["params"]);
    assert!(p.status.success());
    let dir = std::env::temp_dir().join(format!("t2sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.json");
    std::fs::write(&file, &p.stdout).unwrap();
    let with = t2sim(&["run", "--params", file.to_str().unwrap()]);
    assert!(with.status.success());
    assert_eq!(with.stdout, t2sim(&["run"]).stdout);
    let text = String::from_utf8(p.stdout)
        .unwrap()
        .replace("\"cell_bytes\": 176", "\"cell_bytes\": 0");
    std::fs::write(&file, text).unwrap();
    let bad = t2sim(&["run", "--params", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("p.json") && err.contains("tm.cell_bytes"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_are_clear_errors() {
    for (args, needle) in [
        (
            vec!["run", "--frame-bytes", "10"],
            "--frame-bytes: 10 is outside 64..=9216",
        ),
        (
            vec!["run", "--speed-gbps", "30"],
            "not a Tofino2 port speed",
        ),
        (vec!["run", "--senders", "0"], "senders: need at least 1"),
        (vec!["run", "--senders", "200"], "the chip has room for 128"),
        (
            vec!["run", "--load-percent", "101"],
            "load: 101% is outside 1..=100",
        ),
        (vec!["run", "--duration-us", "0"], "--duration-us: 0"),
        (
            vec!["run", "--queue-limit-cells", "0"],
            "--queue-limit-cells",
        ),
        (
            vec!["run", "--params", "/nonexistent/p.json"],
            "/nonexistent/p.json: cannot read",
        ),
    ] {
        let out = t2sim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let unknown = t2sim(&["--bogus"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn vcd_and_trace_flags() {
    let dir = std::env::temp_dir().join(format!("t2sim-cli-vcd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vcd = dir.join("run.vcd");
    let out = t2sim(&[
        "run",
        "--duration-us",
        "2",
        "--vcd",
        vcd.to_str().unwrap(),
        "--trace",
        "chip.tm.free_cells,chip.tm.pipe0.port8.**,chip.pipe0.ingress.stage0*",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // free_cells; port 0 (device port 8) total depth and 16 queues x (depth, paused,
    // pfc_paused); 10 stages x (valid, pkt_id).
    assert!(text.contains("waves            70 signals in"), "{text}");
    let dump = std::fs::read_to_string(&vcd).unwrap();
    assert!(dump.contains("$scope module stage07 $end"));
    assert!(!dump.contains("$scope module stage10 $end"));
    assert!(dir.join("run.gtkw").exists());

    let no_vcd = t2sim(&["run", "--trace", "chip.**"]);
    assert_eq!(no_vcd.status.code(), Some(2));
    let bad = t2sim(&["run", "--vcd", vcd.to_str().unwrap(), "--trace", "chip..tm"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("--trace: trace pattern `chip..tm`: has an empty segment"),
        "{err}"
    );
    let nowhere = t2sim(&["run", "--vcd", "/nonexistent/dir/x.vcd"]);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(String::from_utf8(nowhere.stderr)
        .unwrap()
        .contains("/nonexistent/dir/x.vcd: cannot create"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_with_a_program() {
    let ok = t2sim(&[
        "run",
        "--program",
        "programs/dctcp_switch.json",
        "--duration-us",
        "5",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let text = String::from_utf8(ok.stdout).unwrap();
    // The same placement as the built-in program: the same unloaded latency.
    assert!(text.contains("unloaded       864 cycles"), "{text}");
    // A program with a ghost control runs too (its ingress is 128 MAU cycles, 67 more).
    let ghost = t2sim(&[
        "run",
        "--program",
        "programs/ghost_occupancy.json",
        "--duration-us",
        "5",
    ]);
    assert!(
        ghost.status.success(),
        "{}",
        String::from_utf8_lossy(&ghost.stderr)
    );
    let text = String::from_utf8(ghost.stdout).unwrap();
    assert!(text.contains("unloaded       931 cycles"), "{text}");
    // Without the route table the chip installs no host routes, says so, and the run counts
    // every packet the program sends nowhere.
    let no_table = t2sim(&["run", "--program", "programs/ecn_marking.json"]);
    assert_eq!(no_table.status.code(), Some(0));
    let err = String::from_utf8(no_table.stderr).unwrap();
    assert!(
        err.contains("t2sim: note: program ecn_marking has no table `ipv4_host`: the chip installs no host routes"),
        "{err}"
    );
    let text = String::from_utf8(no_table.stdout).unwrap();
    assert!(text.contains("delivered        0 packets"), "{text}");
    let missing = t2sim(&["run", "--program", "programs/nope.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8(missing.stderr)
        .unwrap()
        .contains("programs/nope.json"));
}

#[test]
fn a_closed_output_pipe_ends_quietly() {
    // `t2sim params | head -1`, deterministically: standard output is a pipe whose reading
    // end is already closed, so the first write fails with EPIPE.
    for args in [
        vec!["params"],
        vec!["run", "--duration-us", "2"],
        vec!["report", "--program", "programs/flow_counter.json"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_t2sim"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("error"), "{args:?}: {err}");
        // 128 + SIGPIPE, as a Unix tool killed by the signal reports.
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
    }
}

#[test]
fn run_places_every_port_of_the_chip() {
    // 32 x 400G and 128 x 100G: the receiver and 31 or 127 senders.
    for (gbps, senders) in [("400", "31"), ("100", "127")] {
        let out = t2sim(&[
            "run",
            "--speed-gbps",
            gbps,
            "--senders",
            senders,
            "--duration-us",
            "2",
        ]);
        assert!(
            out.status.success(),
            "{gbps}G x {senders}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.starts_with(&format!(
                "t2sim: incast, {senders} senders at 100% of {gbps}G"
            )),
            "{text}"
        );
    }
    let over = t2sim(&["run", "--speed-gbps", "400", "--senders", "32"]);
    assert_eq!(over.status.code(), Some(2));
    let err = String::from_utf8(over.stderr).unwrap();
    assert!(
        err.contains("32 senders and the receiver need 33 ports of 400000000000 b/s; the chip has room for 32"),
        "{err}"
    );
}

#[test]
fn out_of_range_numbers_are_errors_not_overflows() {
    let dir = std::env::temp_dir().join(format!("t2sim-cli-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let defaults = String::from_utf8(t2sim(&["params"]).stdout).unwrap();
    let mut cases = vec![
        (
            vec!["run".to_string(), "--senders".into(), "4294967295".into()],
            "4294967295 senders and the receiver need 4294967296 ports of 100000000000 b/s; the chip has room for 128".to_string(),
        ),
        (
            vec!["run".to_string(), "--link-ns".into(), u64::MAX.to_string()],
            format!("link delay: {} ns is outside 1..=1000000000 (1 s)", u64::MAX),
        ),
        (
            vec!["run".to_string(), "--link-ns".into(), "0".into()],
            "link delay: 0 ns is outside 1..=1000000000".to_string(),
        ),
    ];
    for (hz, name) in [("1", "slow"), ("1000000000000000000", "fast")] {
        let p = dir.join(format!("{name}.json"));
        let text = defaults.replace("\"clock_hz\": 1500000000", &format!("\"clock_hz\": {hz}"));
        assert_ne!(text, defaults);
        std::fs::write(&p, text).unwrap();
        cases.push((
            vec!["run".into(), "--params".into(), p.to_str().unwrap().into()],
            format!(
                "{}: parameter `clock_hz`: {hz} is outside 100000000..=10000000000",
                p.display()
            ),
        ));
    }
    for (args, needle) in cases {
        let out = t2sim(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&needle), "{args:?}: `{needle}` not in {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn threads_split_a_scenario_run_without_changing_its_output() {
    let dir = std::env::temp_dir().join(format!("t2sim-cli-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ls.toml");
    let cdf = concat!(env!("CARGO_MANIFEST_DIR"), "/data/workloads/W3.txt");
    std::fs::write(
        &file,
        format!(
            "name = \"cli-threads\"\nseed = 3\nduration_us = 6\ndrain_us = 50\n\
             [topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\
             link_gbps = 100\nlink_delay_ns = 1000\n\
             [workload]\ncdf = \"{cdf}\"\nload = 0.6\narrivals = \"poisson\"\n"
        ),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let one = t2sim(&["run", "--scenario", path, "--threads", "1"]);
    let three = t2sim(&["run", "--scenario", path, "--threads", "3"]);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert!(String::from_utf8_lossy(&one.stdout).contains("flows"));
    assert_eq!(one.stdout, three.stdout);
    for (args, needle) in [
        (
            vec!["run", "--scenario", path, "--threads", "0"],
            "--threads",
        ),
        (vec!["run", "--threads", "2"], "--scenario"),
    ] {
        let out = t2sim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_cpp_the_commands_that_build_schemes_fail_cleanly() {
    // The schemes' programs are P4, compiled through the C preprocessor: with no `cpp` on
    // the PATH, every command that may build one says so and exits 2 before running.
    let empty = std::env::temp_dir().join(format!("t2sim-no-cpp-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    // The error names the file that needs it (issue 55), or the schemes' programs.
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/compare_incast.toml");
    let schemes = "the schemes' P4 programs";
    for (args, what) in [
        (&[][..], schemes),
        (&["compare", "--scenario", scenario][..], scenario),
        (&["report", "--scheme", "dctcp"][..], schemes),
        (
            &["report", "--p4", "programs/p4/l3_forward.p4"][..],
            "programs/p4/l3_forward.p4",
        ),
        (&["run", "--scenario", scenario][..], scenario),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_t2sim"))
            .args(args)
            .env("PATH", &empty)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "t2sim: error: {what}: the C preprocessor `cpp` is not installed (Debian: \
                 apt-get install cpp); P4 programs are preprocessed with it as p4c does\n"
            ),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // The built-in incast builds no scheme and needs no preprocessor.
    let out = Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(["run", "--duration-us", "5"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert!(out.status.success());
}
