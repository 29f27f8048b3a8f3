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
        e.ends_with("pktgen[0].payload_hex: 'g' at byte 1 is not a hex digit (0-9, a-f, A-F)"),
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
        e.ends_with("control[0].op: `flood` is not add_entry, modify_entry, delete_entry, write_register or port_down"),
        "{e}"
    );
    let e = load(
        "no_table",
        "[[control]]\nat_ns = 0\nop = \"add_entry\"\naction = \"x\"\n",
    )
    .err()
    .unwrap();
    assert!(
        e.ends_with("control[0].table: op `add_entry` needs it"),
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

/// Issue 30, cases 1, 4, 9, 10, 12, 13, 21: the control-plane keys are checked when read,
/// with errors `FILE: KEY: problem`; a user's session or application never replaces a
/// scheme's own.
#[test]
fn hostile_control_keys_are_refused_by_file_and_key() {
    let err = |name: &str, top: &str, extra: &str| {
        let e = match load_with(name, top, extra) {
            Err(e) => e,
            Ok(s) => s.run().expect_err("an error"),
        };
        // The file comes first (case 21).
        let file = scratch(name).join("s.toml");
        e.strip_prefix(&format!("{}: ", file.display()))
            .unwrap_or_else(|| panic!("no file in: {e}"))
            .to_string()
    };
    let app = |k: &str| format!("[[pktgen]]\npipe = 0\napp = 0\n{k}\n");
    // 1: a non-ASCII payload is an error, not a panic; 13: no sign either.
    assert_eq!(
        err("utf8", "", &app("at_ns = 5\npayload_hex = \"a\u{e9}1\"")),
        "pktgen[0].payload_hex: 'é' at byte 1 is not a hex digit (0-9, a-f, A-F)"
    );
    assert_eq!(
        err("plus", "", &app("at_ns = 5\npayload_hex = \"+1+2\"")),
        "pktgen[0].payload_hex: '+' at byte 0 is not a hex digit (0-9, a-f, A-F)"
    );
    // 13: a frame above the 9,216-byte wire limit.
    let big = "00".repeat(16_384 - 6);
    assert_eq!(
        err(
            "big",
            "",
            &app(&format!("at_ns = 5\npayload_hex = \"{big}\""))
        ),
        "pktgen[0].payload_hex: 16378 bytes; with the 6-byte pktgen header a frame carries at \
         most 9206 (9216 B on the wire with the FCS)"
    );
    // 9: a period whose cycles do not fit (it wrapped to 1 cycle) and 10: a time after the run.
    assert_eq!(
        err(
            "period",
            "",
            &app("period_ns = 12297829382473034411\npayload_hex = \"00\"")
        ),
        "pktgen[0].period_ns: 12297829382473034411 ns is after the run's end (460000 ns: \
         duration_us + drain_us)"
    );
    assert_eq!(
        err("at", "", &app("at_ns = 460001\npayload_hex = \"00\"")),
        "pktgen[0].at_ns: 460001 ns is after the run's end (460000 ns: duration_us + drain_us)"
    );
    assert_eq!(
        err(
            "gap",
            "",
            &app("at_ns = 5\npacket_gap_ns = 18446744073709551615\npayload_hex = \"00\"")
        ),
        "pktgen[0].packet_gap_ns: 18446744073709551615 ns is after the run's end (460000 ns: \
         duration_us + drain_us)"
    );
    assert_eq!(
        err(
            "ctl_at",
            "",
            "[[control]]\nat_ns = 500000\nop = \"port_down\"\nport = 1\n"
        ),
        "control[0].at_ns: 500000 ns is after the run's end (460000 ns: duration_us + drain_us)"
    );
    // 13: start_ns with a one-shot; a key the op does not take.
    assert_eq!(
        err(
            "start",
            "",
            &app("at_ns = 5\nstart_ns = 7\npayload_hex = \"00\"")
        ),
        "pktgen[0].start_ns: only a periodic timer (period_ns) has a start"
    );
    assert_eq!(
        err(
            "stray",
            "",
            "[[control]]\nat_ns = 0\nop = \"port_down\"\nport = 1\ntable = \"t\"\n"
        ),
        "control[0].table: op `port_down` does not take it"
    );
    // 4: a burst of 65535 x 65535 packets is refused before anything is listed.
    assert_eq!(
        err(
            "burst",
            "",
            &app("at_ns = 100\nbatches = 65535\npackets_per_batch = 65535\npayload_hex = \"00\"")
        ),
        "pktgen[0].packets_per_batch: 65535 batches of 65535 packets is 4294836225 packets a \
         firing; at most 1048576"
    );
    // 12: ids given twice, a queue the port lacks, and the scheme's own session and app.
    assert_eq!(
        err(
            "twice",
            "",
            "[[mirror_session]]\nid = 1\nport = 1\n[[mirror_session]]\nid = 1\nport = 2\n"
        ),
        "mirror_session[1].id: session 1 is already mirror_session[0]"
    );
    assert_eq!(
        err(
            "app_twice",
            "",
            &format!(
                "{}{}",
                app("at_ns = 5\npayload_hex = \"00\""),
                app("at_ns = 6\npayload_hex = \"00\"")
            )
        ),
        "pktgen[1].app: pipe 0 application 0 is already pktgen[0]"
    );
    assert_eq!(
        err(
            "qid",
            "",
            "[[mirror_session]]\nid = 1\nport = 1\nqid = 200\n"
        ),
        "mirror_session[0].qid: 200 is not a queue of port 1 (0..=15)"
    );
    assert_eq!(
        err(
            "bfc_session",
            "scheme = \"bfc\"",
            "[[mirror_session]]\nid = 0\nport = 1\n"
        ),
        "mirror_session[0].id: session 0 is the scheme's own (pick another id)"
    );
    assert_eq!(
        err(
            "bfc_app",
            "scheme = \"bfc\"",
            &app("at_ns = 5\npayload_hex = \"00\"")
        ),
        "pktgen[0].app: pipe 0 application 0 is the scheme's own (pick another app)"
    );
}
