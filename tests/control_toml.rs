//! Scenario-file keys for the control plane: `[[mirror_session]]` and `[[pktgen]]` reach every
//! switch; bad ones are errors naming the key.

use std::path::{Path, PathBuf};
use t2sim::scenario_file::ScenarioFile;
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
    let p = scratch(name).join("s.toml");
    std::fs::write(&p, format!("{}\n{extra}", incast())).unwrap();
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
        e.ends_with("pktgen[0]: give exactly one of at_ns (one-shot) and period_ns"),
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
