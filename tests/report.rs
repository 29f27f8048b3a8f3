//! `t2sim report` as a user runs it: the shipped programs, a program that does not fit,
//! malformed files, and a parameter file.

use std::process::Command;

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn programs_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs")
}

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("t2sim-cli-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, contents).unwrap();
    file
}

#[test]
fn report_on_each_shipped_program_fits_with_the_expected_latency() {
    // (file, ingress MAU cycles, egress MAU cycles)
    for (file, ingress, egress) in [
        ("l3_forward.json", 25 + 19 * 2, 23 + 19 * 2),
        ("ecn_marking.json", 23 + 19 * 2, 23 + 19 * 2),
        ("flow_counter.json", 23 + 27 + 23 + 17 * 2, 23 + 19 * 2),
        // Route, queue index, shared array (stateful), gateway; ghost shares ingress's.
        (
            "ghost_occupancy.json",
            23 + 23 + 27 + 23 + 16 * 2,
            23 + 19 * 2,
        ),
    ] {
        let path = programs_dir().join(file);
        let path = path.to_str().unwrap();
        let text = t2sim(&["report", "--program", path, "--require-fit"]);
        assert!(text.status.success(), "{file}: {:?}", text);
        let out = String::from_utf8(text.stdout).unwrap();
        assert!(out.contains("verdict          fits"), "{out}");
        assert!(
            out.contains(&format!("latency ingress  MAU {ingress} cycles")),
            "{out}"
        );
        let json = t2sim(&["report", "--program", path, "--json"]);
        assert!(json.status.success());
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(v["fits"], true);
        assert_eq!(v["latency"][0]["mau_cycles"], ingress);
        assert_eq!(v["latency"][1]["mau_cycles"], egress);
        // Parser 64 + MAU + deparser 64 at 1.5 GHz.
        assert_eq!(v["latency"][0]["total_cycles"], 128 + ingress);
        assert_eq!(v["stages"].as_array().unwrap().len(), 20);
    }
    let json = t2sim(&[
        "report",
        "--program",
        programs_dir().join("flow_counter.json").to_str().unwrap(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let cycles: Vec<u64> = v["latency"][0]["stage_cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(&cycles[..4], &[23, 27, 23, 2]);
    assert_eq!(
        v["latency"][0]["critical_path"],
        serde_json::json!(["flow_index@0", "flow_count@1", "ingress_if1@2"])
    );
    assert_eq!(
        v["stages"][1]["resources"][0]["used"], 17,
        "16 data RAMs + 1 spare"
    );
    assert_eq!(v["stages"][1]["ingress_dependency"], "match");
}

#[test]
fn report_require_fit_fails_with_the_resource_named() {
    let mut p = t2_pipeline::examples::flow_counter();
    p.registers[0].size = 100_000;
    let file = temp_file("too_big.json", &p.to_json());
    let plain = t2sim(&["report", "--program", file.to_str().unwrap()]);
    assert_eq!(plain.status.code(), Some(0), "a report is still a report");
    let out = String::from_utf8(plain.stdout).unwrap();
    assert!(
        out.contains("DOES NOT FIT: `flow_count` does not fit: register_array_rams needs 25 of 23"),
        "{out}"
    );
    let strict = t2sim(&[
        "report",
        "--program",
        file.to_str().unwrap(),
        "--require-fit",
    ]);
    assert_eq!(strict.status.code(), Some(1));
    let json = t2sim(&["report", "--program", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["fits"], false);
    assert_eq!(v["failure"]["resource"], "register_array_rams");
    assert_eq!(v["failure"]["unit"], "flow_count");
}

#[test]
fn report_on_a_malformed_or_missing_file_exits_2_naming_it() {
    let bad_json = temp_file("bad.json", "{\"name\": \"x\", \"tables\": 7}");
    let mut p = t2_pipeline::examples::l3_forward();
    p.tables[2].keys[0] = "ipv4.nope".into();
    let bad_field = temp_file("bad_field.json", &p.to_json());
    let missing = std::env::temp_dir().join("t2sim-no-such-program.json");
    for (file, problem) in [
        (bad_json, "invalid type"),
        (
            bad_field,
            "tables[2] (ipv4_host).keys: unknown field `ipv4.nope`",
        ),
        (missing, "No such file"),
    ] {
        let out = t2sim(&["report", "--program", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(file.to_str().unwrap()), "{err}");
        assert!(err.contains(problem), "{err}");
    }
}

#[test]
fn report_follows_a_parameter_file() {
    let p = t2sim(&["params"]);
    let mut v: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
    // Tofino2M: 12 stages; and a slower SALU for the sake of the test.
    v["pipeline"]["stages"] = 12.into();
    v["pipeline"]["stage_latency"]["stateful"] = 5.into();
    let file = temp_file("p12.json", &v.to_string());
    let out = t2sim(&[
        "report",
        "--program",
        programs_dir().join("flow_counter.json").to_str().unwrap(),
        "--params",
        file.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["stages"].as_array().unwrap().len(), 12);
    assert_eq!(r["latency"][0]["mau_cycles"], 23 + 28 + 23 + 9 * 2);
}

#[test]
fn help_lists_the_report_command() {
    let h = t2sim(&["--help"]);
    let text = String::from_utf8(h.stdout).unwrap();
    assert!(text.contains("report"), "{text}");
    let r = t2sim(&["report", "--help"]);
    let text = String::from_utf8(r.stdout).unwrap();
    for flag in ["--program", "--json", "--require-fit", "--params"] {
        assert!(text.contains(flag), "{text}");
    }
}
