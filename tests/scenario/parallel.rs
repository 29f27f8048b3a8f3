//! A network split over threads gives the results it gives on one: every scheme's run of a
//! small leaf-spine, with its summary and every file it writes, is byte-identical whatever
//! the number of threads, jumping or stepping every cycle (docs/architecture.md, "Parallel
//! runs").

use std::path::{Path, PathBuf};
use t2sim::scenario::{ScenarioFile, ScenarioText};

/// BFC's leaf-spine setup, shrunk to 2 leaves x 2 spines x 4 hosts and 12 us of arrivals
/// (with an incast of 4 x 50 KB every 5 us from 2 us) so that it runs in seconds in a debug
/// build.
fn scenario(scheme: &str, extra: &[(&str, toml::Value)]) -> ScenarioFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bfc_leaf_spine.toml");
    let source = ScenarioText::read(&path).unwrap();
    let int = |v: i64| toml::Value::Integer(v);
    let mut overrides: Vec<(String, toml::Value)> = vec![
        ("scheme".into(), toml::Value::String(scheme.into())),
        ("duration_us".into(), int(12)),
        ("drain_us".into(), int(150)),
        ("topology.leaves".into(), int(2)),
        ("topology.spines".into(), int(2)),
        ("topology.hosts_per_leaf".into(), int(4)),
        ("workload.incast.degree".into(), int(4)),
        ("workload.incast.size_bytes".into(), int(50_000)),
        ("workload.incast.period_us".into(), int(5)),
        ("workload.incast.first_us".into(), int(2)),
    ];
    overrides.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    ScenarioFile::from_text(&source, &overrides).unwrap()
}

/// The run's summary and the bytes of every file it writes, with the folder's name taken
/// out.
fn outputs(mut s: ScenarioFile, threads: usize, tag: &str) -> Vec<(String, String)> {
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "t2sim-parallel-{}-{tag}-{threads}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    s.set_threads(threads);
    let clock = s.topology.params.clock();
    let results = s.run().unwrap();
    let mut out = vec![("summary".to_string(), results.text(clock))];
    for f in results.write(&dir, clock).unwrap() {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        out.push((name, text.replace(&dir.display().to_string(), "DIR")));
    }
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

#[test]
fn a_network_is_worth_one_thread_per_two_switches() {
    let file = |name: &str| {
        ScenarioFile::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(name),
        )
        .unwrap()
        .threads_worth_using()
    };
    assert_eq!(file("bfc_two_switch.toml"), 1); // a dumbbell's 2 switches
    assert_eq!(file("leaf_spine_w3.toml"), 3); // 4 leaves + 2 spines
    assert_eq!(file("bfc_paper.toml"), 8); // 8 leaves + 8 spines
    assert_eq!(scenario("droptail", &[]).threads_worth_using(), 2); // 2 + 2
}

#[test]
fn the_network_splits_into_its_switches_with_their_hosts() {
    let mut topo = scenario("droptail", &[]).build().unwrap();
    // Four groups (two leaves with their hosts, two spines) for at most 3 threads.
    assert_eq!(topo.net.set_threads(3), Ok(3));
    assert_eq!(topo.net.set_threads(64), Ok(4));
    assert_eq!(topo.net.set_threads(1), Ok(1));
}

#[test]
fn every_scheme_gives_the_same_bytes_on_one_thread_and_on_several() {
    // Two threads for some, three (partitions of unequal size) for the others.
    for (scheme, threads) in [
        ("droptail", 2),
        ("dctcp", 3),
        ("bfc", 3),
        ("pabo", 2),
        ("slytherin", 3),
        ("pias", 2),
    ] {
        let one = outputs(scenario(scheme, &[]), 1, scheme);
        assert!(one.len() > 3, "{scheme} wrote its files");
        let many = outputs(scenario(scheme, &[]), threads, scheme);
        for ((name, a), (_, b)) in one.iter().zip(&many) {
            assert!(a == b, "{scheme}: {name} differs on {threads} threads");
        }
        assert_eq!(one.len(), many.len());
    }
}

#[test]
fn a_split_network_stepped_every_cycle_gives_what_one_jumping_gives() {
    let every = [("step_every_cycle", toml::Value::Boolean(true))];
    let short = [
        ("duration_us", toml::Value::Integer(4)),
        ("drain_us", toml::Value::Integer(40)),
    ];
    let jumping = outputs(scenario("bfc", &short), 1, "bfc-jump");
    let stepped = {
        let both: Vec<_> = short.iter().chain(&every).cloned().collect();
        outputs(scenario("bfc", &both), 3, "bfc-step")
    };
    assert_eq!(jumping, stepped);
}
