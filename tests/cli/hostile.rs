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
        text.contains("control          1 operations refused when they landed\n  cycle 150: "),
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
    assert!(text.contains("control          1 operations refused"), "{text}");
}
