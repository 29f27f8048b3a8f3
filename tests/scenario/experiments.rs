//! Experiments as the papers define them: per-switch random streams, load on host or core
//! links, arrival processes, the ideal FCT definitions, and statistics over seeds.

use std::path::{Path, PathBuf};
use t2sim::chip::Chip;
use t2sim::scenario::ScenarioFile;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

fn with_scheme(name: &str, scheme: &str, seed: i64) -> ScenarioFile {
    ScenarioFile::load_with(
        &example(name),
        &[
            ("scheme".into(), toml::Value::String(scheme.into())),
            ("seed".into(), toml::Value::Integer(seed)),
        ],
    )
    .unwrap()
}

#[test]
fn every_switch_draws_its_own_random_stream() {
    // PABO's program draws a random number per bounce decision; with the scenario's seed and
    // the switch's index in every chip's streams, no two switches start alike.
    let s = with_scheme("pabo_mild.toml", "pabo", 1);
    let mut topo = s.build().unwrap();
    let mut states = Vec::new();
    for &c in &topo.chips {
        states.push(topo.net.node_mut::<Chip>(c).random_stream_states());
    }
    assert_eq!(states.len(), 7);
    assert!(states[0].iter().any(|t| !t.is_empty()), "PABO has tables");
    for a in 0..states.len() {
        for b in a + 1..states.len() {
            assert_ne!(states[a], states[b], "switch {a} and switch {b} draw alike");
        }
    }
    // Within one chip the pipes and gresses differ too.
    let pipes = &states[0];
    for a in 0..pipes.len() {
        for b in a + 1..pipes.len() {
            if !pipes[a].is_empty() && pipes[a].len() == pipes[b].len() {
                assert_ne!(pipes[a], pipes[b]);
            }
        }
    }
    // Another run seed moves every switch's streams; the same seed gives the same ones.
    let mut other = with_scheme("pabo_mild.toml", "pabo", 2).build().unwrap();
    let mut again = s.build().unwrap();
    for (i, &c) in topo.chips.clone().iter().enumerate() {
        let o = other
            .net
            .node_mut::<Chip>(other.chips[i])
            .random_stream_states();
        let g = again
            .net
            .node_mut::<Chip>(again.chips[i])
            .random_stream_states();
        assert_ne!(o, states[i], "switch {i}: seed 2 draws as seed 1");
        assert_eq!(g, states[i], "switch {i}: a rebuild draws differently");
        let _ = topo.net.node_mut::<Chip>(c);
    }
}

#[test]
fn a_pabo_run_is_byte_identical_on_rerun() {
    let s = with_scheme("pabo_mild.toml", "pabo", 1);
    let a = s.run().unwrap();
    let b = s.run().unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert_eq!(a.records, b.records);
}

fn load_with(name: &str, set: &[(&str, toml::Value)]) -> Result<ScenarioFile, String> {
    let set: Vec<(String, toml::Value)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    ScenarioFile::load_with(&example(name), &set)
}

#[test]
fn the_plain_forwarding_ideal_is_one_for_every_scheme_and_exact() {
    use t2_testbench::workload::FlowSpec;
    use t2sim::scenario::topology::IdealFct;
    let s = |scheme: &str| {
        load_with(
            "bfc_leaf_spine.toml",
            &[("scheme", toml::Value::String(scheme.into()))],
        )
        .unwrap()
        .build()
        .unwrap()
    };
    let (bfc, dctcp) = (s("bfc"), s("dctcp"));
    let plain = ScenarioFile::load(&example("bfc_leaf_spine.toml"))
        .unwrap()
        .build()
        .unwrap();
    // The built-in forwarding's chip latency, whatever the switches run.
    assert_eq!(bfc.plain_latency_base(), plain.chip_latency_base());
    assert_eq!(dctcp.plain_latency_base(), plain.chip_latency_base());
    assert!(bfc.chip_latency_base() > plain.chip_latency_base());
    // A 100 KB flow across the core (host 0 on leaf 0 to host 31 on leaf 3: 3 switches).
    let f = FlowSpec {
        start: 0,
        id: 0,
        src: 0,
        dst: 31,
        size_bytes: 100_000,
    };
    assert_eq!(plain.switch_hops(0, 31), 3);
    let ideal = bfc.ideal_fct_as(&f, IdealFct::PlainForwarding);
    assert_eq!(ideal, dctcp.ideal_fct_as(&f, IdealFct::PlainForwarding));
    assert_eq!(ideal, plain.ideal_fct(&f));
    // Assembled by hand: 100 frames of 1000 B (+ 58 B of headers and FCS, + 20 B preamble
    // and gap) at 100 Gb/s, propagation 2 x 4 links, and at each of 3 switches the chip's
    // latency for the last frame and for the 64 B ACK, plus the ACK's own serialization.
    let line = plain.line();
    let ser = |b: u64| line.serialization_cycles_ceil(b);
    let data_bits = (100_000 + 100 * (t2_testbench::transport::SEGMENT_OVERHEAD + 20)) * 8;
    let data = line.ticks_to_cycle_ceil(data_bits * line.ticks_per_bit());
    let base = plain.chip_latency_base();
    let last = 1000 + t2_testbench::transport::SEGMENT_OVERHEAD;
    let by_hand =
        data + 2 * 4 * plain.link_delay() + 3 * (base + ser(last) + base + ser(64)) + ser(64);
    assert_eq!(ideal, by_hand);
    // The scheme's own pipeline is longer under BFC; the artifact's formula has no switch.
    assert!(bfc.ideal_fct_as(&f, IdealFct::SchemePipeline) > ideal);
    assert_eq!(
        bfc.ideal_fct_as(&f, IdealFct::Rule(&t2sim::schemes::bfc::ideal::ARTIFACT)),
        // 8 us + 80 ns x (100 + 3) = 16,240 ns at 1.5 GHz.
        24_360
    );
}

#[test]
fn load_on_the_core_and_one_arrival_process_reach_the_summary() {
    let set = [
        ("scheme", toml::Value::String("droptail".into())),
        ("duration_us", toml::Value::Integer(100)),
        ("drain_us", toml::Value::Integer(1)),
        ("workload.load_on", toml::Value::String("core".into())),
        (
            "workload.arrival_process",
            toml::Value::String("global".into()),
        ),
        ("output.ideal", toml::Value::String("bfc_artifact".into())),
    ];
    let s = load_with("bfc_leaf_spine.toml", &set).unwrap();
    let r = s.run().unwrap();
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["load_on"], "core");
    assert_eq!(json["arrival_process"], "global");
    assert_eq!(json["ideal"], "bfc_artifact");
    let core = r.offered_core_load.unwrap();
    // 0.6 of the core (16 links) is 0.3 of the 32 hosts' links, incast aside; the core gets
    // the 24/31 of flows that leave their leaf, plus the incasts' share.
    assert!(
        core > 0.0 && r.offered_load > 0.0,
        "{core} {}",
        r.offered_load
    );
    let text = r.text(s.topology.params.clock());
    assert!(
        text.contains("definitions      load on core links"),
        "{text}"
    );
    // A single chip has no core: an error naming the key, not a silent host load.
    let text = t2sim::scenario::ScenarioText {
        text: "seed = 1\nduration_us = 10\n[topology]\nkind = \"single_chip\"\nhosts = 4\n\
               [workload]\ncdf = \"../data/workloads/w4.txt\"\nload = 0.5\nload_on = \"core\"\n"
            .into(),
        shown: "t.toml".into(),
        base: example(""),
    };
    let e = ScenarioFile::from_text(&text, &[]).err().unwrap();
    assert_eq!(
        e,
        "t.toml: workload.load_on: core, but this topology has no core links (leaf_spine, fat_tree and dumbbell have)"
    );
}
