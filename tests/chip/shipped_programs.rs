//! Every shipped program: `run` runs it and its summary adds up, or it refuses with an error
//! that says exactly why and what to do.

use std::path::Path;
use std::process::Command;
use t2_pipeline::ir::Program;
use t2sim::scenario::IncastScenario;

/// Shipped programs `run` refuses, with what the error must say.
const REFUSED: [(&str, &str); 1] = [(
    "l3_forward",
    "table `ipv4_host` already holds an entry for 10.0.0.1 (entries[0]), which is the address of a host here (route to device port 10); the chip installs a route for every host, so remove the program's own `ipv4_host` entries",
)];

/// Shipped programs without the host-route table: they run without routes, and with no
/// entries of their own nothing sends a packet anywhere, so every one is dropped (counted).
const NOT_FORWARDING: [&str; 2] = ["ecn_marking", "flow_counter"];

fn programs() -> Vec<(String, Program)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            (name, Program::from_json(&text).unwrap())
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn run_runs_every_shipped_program_it_can_and_every_summary_adds_up() {
    let mut ran = Vec::new();
    for (name, program) in programs() {
        let s = IncastScenario {
            program: Some(program),
            duration_cycles: 30_000,
            ..IncastScenario::default()
        };
        match s.run() {
            Ok(r) => {
                assert_eq!(r.unaccounted(), 0, "{name}: {r}");
                assert_eq!(
                    r.offered,
                    r.delivered + r.returned + r.dropped() + r.in_chip + r.on_links,
                    "{name}"
                );
                if NOT_FORWARDING.contains(&name.as_str()) {
                    assert_eq!(r.delivered, 0, "{name}: {r}");
                    assert!(r.dropped() > 0, "{name}: {r}");
                } else {
                    assert!(r.delivered > 0, "{name}: {r}");
                }
                ran.push(name);
            }
            Err(e) => {
                let want = REFUSED
                    .iter()
                    .find(|(n, _)| *n == name)
                    .unwrap_or_else(|| panic!("{name} is refused: {e}"));
                assert!(e.to_string().contains(want.1), "{name}: {e}");
            }
        }
    }
    // Every shipped program runs but those refused above (with the reason they give).
    let runnable: Vec<String> = programs()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !REFUSED.iter().any(|(n, _)| n == name))
        .collect();
    assert_eq!(ran, runnable);
    assert!(ran.len() >= 6, "{ran:?}");
}

#[test]
fn a_tagging_program_s_frames_are_counted_as_delivered_and_not_readable() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/vlan_tagging.json");
    let out = Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(["run", "--program", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let count = |prefix: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(prefix)).unwrap();
        line[prefix.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (offered, delivered, dropped) = (count("offered"), count("delivered"), count("dropped"));
    let inside = text
        .lines()
        .find(|l| l.starts_with("still inside"))
        .unwrap();
    let nums: Vec<u64> = inside
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(offered, delivered + dropped + nums[0] + nums[1], "{text}");
    // Every delivered frame carries the program's VLAN tag, so the receiver reads none.
    assert!(delivered > 0);
    assert!(
        text.contains(&format!("  not readable   {delivered} of them")),
        "{text}"
    );
}
