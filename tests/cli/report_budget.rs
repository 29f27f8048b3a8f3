//! The report's chip-wide totals, stateful and map-RAM shares (also for a program that does
//! not fit), and the recirculation / mirror budget of a program's declared overhead (#11).

use std::process::Command;

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("t2sim-report-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, contents).unwrap();
    file
}

fn report(p: &t2_pipeline::ir::Program, name: &str, json: bool) -> (Option<i32>, String) {
    let file = temp_file(name, &p.to_json());
    let mut args = vec!["report", "--program", file.to_str().unwrap()];
    if json {
        args.push("--json");
    }
    let out = t2sim(&args);
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn chip_totals_sit_beside_the_pipe_and_stateful_shares_are_exact() {
    // flow_counter: one 65536 x 32 b array = 2097152 bits = 16 data RAMs of 1024 x 128 b,
    // 17 map RAMs (one more for the spare); 80 SRAMs and 48 map RAMs per stage, 20 stages.
    let p = t2_pipeline::examples::flow_counter();
    let (code, out) = report(&p, "flow_counter.json", false);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("stateful         1 register arrays, 2097152 bits in 16 data RAMs = 1.0% of the pipe's SRAM"),
        "{out}"
    );
    assert!(
        out.contains("                 map RAMs 17/960 = 1.8% of the pipe's"),
        "{out}"
    );
    // Four pipes: SRAM 4 x 17 of 4 x 1600, map RAM 4 x 17 of 4 x 960, data RAMs 4 x 16.
    assert!(
        out.contains("chip             4 pipes: SRAM 68/6400 = 1.1%, map RAM 68/3840 = 1.8%, register data RAMs 64/6400 = 1.0% of the chip's SRAM"),
        "{out}"
    );
    let (_, json) = report(&p, "flow_counter.json", true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["chip"]["pipes"], 4);
    assert_eq!(
        v["chip"]["sram"]["used"],
        4 * v["totals"][0]["used"].as_u64().unwrap()
    );
    assert_eq!(v["stateful"]["map_rams"]["used"], 17);
}

#[test]
fn a_program_that_does_not_fit_still_shows_its_stateful_share() {
    // 100000 x 32 b = 3200000 bits = 25 data RAMs (24.4, rounded up): more than the 23 one
    // stage half holds, so placement stops; the share is still 25 / 1600 = 1.6 %, not 0.
    let mut p = t2_pipeline::examples::flow_counter();
    p.registers[0].size = 100_000;
    let (code, out) = report(&p, "too_big.json", false);
    assert_eq!(code, Some(0));
    assert!(out.contains("DOES NOT FIT"), "{out}");
    assert!(
        out.contains("3200000 bits in 25 data RAMs = 1.6% of the pipe's SRAM"),
        "{out}"
    );
    assert!(
        out.contains("map RAMs 26/960 = 2.7% of the pipe's"),
        "{out}"
    );
    assert!(
        out.contains("register data RAMs 100/6400 = 1.6% of the chip's SRAM"),
        "{out}"
    );
}

#[test]
fn overhead_budget_shows_which_limit_binds_with_its_arithmetic() {
    // Default chip: 8 x 400G = 3200 Gb/s of ports per pipe, a 12 % recirculation cap
    // (384 Gb/s), 1.5 G ingress and egress slots per second per pipe.
    let mut p = t2_pipeline::examples::l3_forward();
    p.overhead = Some(t2_pipeline::ir::Overhead {
        recirculated_bytes: 64,
        mirrored_bytes: 128,
    });
    let (code, out) = report(&p, "overhead.json", false);
    assert_eq!(code, Some(0));
    for line in [
        "overhead         per data packet of D bytes: recirculates 64 B, mirrors 128 B; line rate on every port needs D >= 780 B (egress slots binds)",
        // 3200 x 84 / 384 = 700 wire bytes.
        "  recirculation cap  D + 20 >= 3200 Gb/s x (64 + 20) / 384 Gb/s = 700 -> D >= 680 B",
        // Data + recirculated packet: 2 x 3200e9 / 1.5e9 = 4266.7 bits, 533.3 bytes -> 534.
        "  ingress slots      (D + 20) x 8 >= 2 packets x 3200 Gb/s / 1500 Mpkt/s = 4267 bits, so D + 20 >= 534 -> D >= 514 B",
        // And the mirror copy in egress: 3 x 3200e9 / 1.5e9 = 6400 bits = 800 bytes.
        "  egress slots       (D + 20) x 8 >= 3 packets x 3200 Gb/s / 1500 Mpkt/s = 6400 bits, so D + 20 >= 800 -> D >= 780 B",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
    // A 200 B recirculated packet alone: the cap binds, 3200 x 220 / 384 = 1833.3 -> 1834.
    p.overhead = Some(t2_pipeline::ir::Overhead {
        recirculated_bytes: 200,
        mirrored_bytes: 0,
    });
    let (_, json) = report(&p, "overhead200.json", true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let b = &v["headroom"]["overhead"];
    assert_eq!(b["binding"], "recirculation cap");
    assert_eq!(b["min_frame_bytes"], 1814);
    let mins: Vec<u64> = b["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["min_frame_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(mins, vec![1814, 514, 514]);
    // Without a declaration the section is absent (the default output is unchanged).
    let (_, out) = report(&t2_pipeline::examples::l3_forward(), "plain.json", false);
    assert!(!out.contains("overhead"), "{out}");
}

#[test]
fn a_bad_overhead_is_refused_naming_it() {
    let mut p = t2_pipeline::examples::l3_forward();
    for (o, path, problem) in [
        (
            (0, 40),
            "overhead.mirrored_bytes",
            "40 B is not a frame size (64..=65535 B",
        ),
        (
            (70_000, 0),
            "overhead.recirculated_bytes",
            "70000 B is not a frame size",
        ),
        (
            (0, 0),
            "overhead",
            "declares neither recirculated nor mirrored bytes",
        ),
    ] {
        p.overhead = Some(t2_pipeline::ir::Overhead {
            recirculated_bytes: o.0,
            mirrored_bytes: o.1,
        });
        let e = t2_pipeline::check::check(&p).unwrap_err();
        assert_eq!(e.path, path);
        assert!(e.problem.contains(problem), "{e}");
        let (code, _) = report(&p, "bad_overhead.json", false);
        assert_eq!(code, Some(2));
    }
}
