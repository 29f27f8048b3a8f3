//! Scenario files that name a scheme: the scheme's program, queues and hosts reach the run,
//! a scheme equals the same program and hosts spelled out by hand, and bad scheme keys get
//! errors that name the file and the key.

use std::path::PathBuf;
use t2_testbench::transport::Congestion;
use t2sim::scenario::ScenarioFile;
use t2sim::schemes;

/// A small incast on one chip: 4 of 5 hosts send 20 KB to one host, DCTCP-able.
const BASE: &str = r#"
seed = 3
duration_us = 10
drain_us = 200

[topology]
kind = "single_chip"
hosts = 5
link_gbps = 100
link_delay_ns = 500

[workload.incast]
degree = 4
size_bytes = 20000
period_us = 20
first_us = 1
"#;

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("t2sim-scheme-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(name: &str, head: &str, tail: &str) -> Result<ScenarioFile, String> {
    ScenarioFile::load(&file(name, &format!("{head}\n{BASE}\n{tail}")))
}

#[test]
fn a_scheme_brings_its_program_and_hosts() {
    let s = load(
        "dctcp.toml",
        "scheme = \"dctcp\"",
        "[scheme_params]\nk_cells = 65",
    )
    .unwrap();
    assert_eq!(s.topology.program, Some(schemes::dctcp::program(65)));
    assert_eq!(
        s.topology.transport.congestion,
        t2sim::schemes::dctcp::host::CONGESTION
    );
    let (name, values) = s.scheme.as_ref().unwrap();
    assert_eq!(name, "dctcp");
    assert_eq!(values.int("k_cells"), 65);
    let plain = load("droptail.toml", "scheme = \"droptail\"", "").unwrap();
    assert_eq!(plain.topology.program, Some(schemes::droptail::program()));
    assert_eq!(plain.topology.transport.congestion, Congestion::Fixed);
}

#[test]
fn a_scheme_runs_exactly_as_its_parts_spelled_out() {
    let programs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("programs");
    let by_scheme = load("by_scheme.toml", "scheme = \"dctcp\"", "").unwrap();
    let by_hand = load(
        "by_hand.toml",
        &format!(
            "program = {:?}",
            programs.join("dctcp_switch.json").display().to_string()
        ),
        "[transport]\ncongestion = \"dctcp\"",
    )
    .unwrap();
    let a = by_scheme.run().unwrap();
    let b = by_hand.run().unwrap();
    let clock = by_scheme.topology.params.clock();
    // Everything but the first line, which names the file.
    let body = |t: String| t.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(a.text(clock)), body(b.text(clock)));
    assert!(a.text(clock).contains("flows"), "{}", a.text(clock));
}

#[test]
fn bad_scheme_keys_name_the_file_and_key() {
    let err = |name: &str, head: &str, tail: &str| {
        let e = load(name, head, tail).err().expect("an error");
        let path = file(name, "").display().to_string();
        assert!(e.starts_with(&format!("{path}: ")), "{e}");
        e[path.len() + 2..].to_string()
    };
    assert_eq!(
        err("unknown.toml", "scheme = \"nope\"", ""),
        format!(
            "scheme: no scheme `nope` (schemes: {})",
            schemes::names().join(", ")
        )
    );
    assert_eq!(
        err("both.toml", "scheme = \"dctcp\"\nprogram = \"x.json\"", ""),
        "program: scheme dctcp sets it; remove one of the two"
    );
    assert_eq!(
        err(
            "congestion.toml",
            "scheme = \"dctcp\"",
            "[transport]\ncongestion = \"fixed\""
        ),
        "transport.congestion: scheme dctcp sets it; remove one of the two"
    );
    assert_eq!(
        err("orphan.toml", "", "[scheme_params]\nk_cells = 5"),
        "scheme_params: needs scheme, the scheme they set"
    );
    assert_eq!(
        err("param.toml", "scheme = \"dctcp\"", "[scheme_params]\nk = 5"),
        "scheme_params.k: scheme dctcp has no such parameter (it has: k_cells)"
    );
    assert!(err(
        "range.toml",
        "scheme = \"dctcp\"",
        "[scheme_params]\nk_cells = 0"
    )
    .starts_with("scheme_params.k_cells: 0 is outside 1..=524287"));
}
