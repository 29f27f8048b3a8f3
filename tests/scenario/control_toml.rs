//! Scenario-file keys for the control plane: `[[mirror_session]]` and `[[pktgen]]` reach every
//! switch; bad ones are errors naming the key.

use std::path::{Path, PathBuf};
use t2sim::scenario::ScenarioFile;
use t2sim::Chip;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-control-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn incast() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join("incast.toml"),
    )
    .unwrap()
}

fn load(name: &str, extra: &str) -> Result<ScenarioFile, String> {
    load_with(name, "", extra)
}

/// The incast example with top-level keys `top` before it and tables `extra` after it (with
/// a `top`, as a scheme sets it, without its `congestion` key).
fn load_with(name: &str, top: &str, extra: &str) -> Result<ScenarioFile, String> {
    let p = scratch(name).join("s.toml");
    let mut base = incast();
    if !top.is_empty() {
        base = base
            .lines()
            .filter(|l| !l.starts_with("congestion ="))
            .collect::<Vec<_>>()
            .join("\n");
    }
    std::fs::write(&p, format!("{top}\n{base}\n{extra}")).unwrap();
    ScenarioFile::load(&p)
}

const PKTGEN: &str = r#"
[[pktgen]]
pipe = 1
app = 2
period_ns = 1000
start_ns = 100
packets_per_batch = 2
payload_hex = "0102030405060708090a0b0c0d0e0f10"

[[mirror_session]]
id = 5
port = 3
truncate_bytes = 64
"#;

#[test]
fn pktgen_and_mirror_session_keys_reach_the_switch() {
    let s = load("good", PKTGEN).unwrap();
    let mut topo = s.build().unwrap();
    // Periodic from 150 cycles (100 ns), every 1,500 (1,000 ns): firings at 150, 1650, ...,
    // 13650 by cycle 14999, two packets each.
    topo.net.run_until(14_999);
    let chip = topo.net.node::<Chip>(topo.chips[0]);
    assert_eq!(chip.counters().pktgen_generated, 20);
    assert_eq!(
        chip.mirror_session(5),
        Some(t2sim::MirrorSession {
            port: 3,
            qid: 0,
            truncate_bytes: Some(64)
        })
    );
    assert_eq!(chip.mirror_session(4), None);
}

#[test]
fn bad_control_keys_are_errors_naming_the_key() {
    let err = |name, extra: &str| match load(name, extra) {
        Err(e) => e,
        Ok(s) => s.build().err().expect("an error"),
    };
    let e = err(
        "both",
        "[[pktgen]]\npipe = 0\napp = 0\nat_ns = 5\nperiod_ns = 5\npayload_hex = \"00\"\n",
    );
    assert!(
        e.ends_with("pktgen[0]: give exactly one of at_ns (one-shot), period_ns and port_down"),
        "{e}"
    );
    let e = err(
        "hex",
        "[[pktgen]]\npipe = 0\napp = 0\nat_ns = 5\npayload_hex = \"0g\"\n",
    );
    assert!(
        e.ends_with("pktgen[0]: payload_hex: invalid digit found in string"),
        "{e}"
    );
    let e = err(
        "pipe",
        "[[pktgen]]\npipe = 9\napp = 0\nat_ns = 5\npayload_hex = \"00\"\n",
    );
    assert!(
        e.ends_with(
            "pktgen[0]: chip switch0: pipe 9 pktgen application 0: the chip has pipes 0..4"
        ),
        "{e}"
    );
    let e = err("port", "[[mirror_session]]\nid = 1\nport = 99\n");
    assert!(
        e.contains("mirror_session[0]: chip switch0: mirror session 1: port 99 does not exist"),
        "{e}"
    );
}

#[test]
fn control_keys_schedule_operations_at_their_time() {
    // A port-down application fires when port 3 goes down at 5,000 ns (cycle 7,500).
    let extra = r#"
[[pktgen]]
pipe = 0
app = 0
port_down = 3
payload_hex = "00"

[[control]]
at_ns = 5000
op = "port_down"
port = 3
"#;
    let s = load("port_down", extra).unwrap();
    assert_eq!(s.control.ops.len(), 1);
    assert_eq!(s.control.ops[0].0, 7500);
    let mut topo = s.build().unwrap();
    topo.net.run_until(7499);
    assert_eq!(
        topo.net
            .node::<Chip>(topo.chips[0])
            .counters()
            .pktgen_generated,
        0
    );
    topo.net.run_until(7500);
    assert_eq!(
        topo.net
            .node::<Chip>(topo.chips[0])
            .counters()
            .pktgen_generated,
        1
    );
    // The route to host 0 (10.0.0.1) deleted at 0 from the scheme's table: the packets host
    // 1 sends it are dropped for no route.
    let flows = r#"
[[workload.flows]]
src = 1
dst = 0
size_bytes = 4000
start_ns = 0
"#;
    let delete = r#"
[[control]]
at_ns = 0
op = "delete_entry"
table = "ipv4_host"
key = [167772161]
"#;
    let run = |extra: &str| {
        let s = load_with("delete", "scheme = \"droptail\"", extra).unwrap();
        let r = s.run().unwrap();
        let no_route = r
            .drops
            .0
            .iter()
            .filter(|(k, _)| k.contains("no_route"))
            .map(|(_, n)| *n)
            .sum::<u64>();
        (no_route, r.flows, r.completed)
    };
    let (none, flows_n, completed) = run(flows);
    assert_eq!(none, 0);
    assert_eq!(completed, flows_n);
    let (dropped, flows_d, completed_d) = run(&format!("{flows}{delete}"));
    assert!(dropped > 0);
    assert_eq!(flows_d, flows_n);
    assert!(completed_d < flows_d, "the flows to host 0 cannot complete");
    let e = load("bad_op", "[[control]]\nat_ns = 0\nop = \"flood\"\n")
        .err()
        .unwrap();
    assert!(
        e.ends_with("control[0]: op `flood` is not add_entry, modify_entry, delete_entry, write_register or port_down"),
        "{e}"
    );
    let e = load(
        "no_table",
        "[[control]]\nat_ns = 0\nop = \"add_entry\"\naction = \"x\"\n",
    )
    .err()
    .unwrap();
    assert!(
        e.ends_with("control[0]: op `add_entry` needs `table`"),
        "{e}"
    );
    let s = load(
        "builtin",
        "[[control]]\nat_ns = 0\nop = \"delete_entry\"\ntable = \"ipv4_host\"\nkey = [1]\n",
    )
    .unwrap();
    let e = s.build().err().unwrap();
    assert_eq!(
        e,
        "control[0]: chip switch0: delete_entry at cycle 0: the built-in forwarding has no program tables (give the chip a program)"
    );
}
