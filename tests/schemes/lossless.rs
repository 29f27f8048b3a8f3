//! The lossless baselines (issue 31) as scenarios run them: `dctcp-pfc` behind PFC with the
//! dynamic threshold in a small shared buffer, and the `topology.buffer_bytes` key.

use std::path::PathBuf;
use t2sim::scenario::ScenarioFile;

/// An 8-to-1 incast of 200 KB flows on one chip whose shared buffer is 1 MB: 1.6 MB offered
/// at once, more than the buffer holds.
fn incast(buffer_bytes: u64, scheme: &str) -> String {
    format!(
        r#"
seed = 5
duration_us = 5
drain_us = 2000
scheme = "{scheme}"

[topology]
kind = "single_chip"
hosts = 9
link_gbps = 100
link_delay_ns = 1000
buffer_bytes = {buffer_bytes}

[transport]
window_bytes = 200000

[workload.incast]
degree = 8
size_bytes = 200000
period_us = 100
first_us = 1
"#
    )
}

fn file(name: &str, text: &str) -> PathBuf {
    crate::common::scratch_file("lossless", name, text)
}

#[test]
fn dctcp_behind_pfc_pauses_instead_of_dropping_in_a_small_buffer() {
    let s = ScenarioFile::load(&file("pfc.toml", &incast(1_000_000, "dctcp-pfc"))).unwrap();
    let tm = &s.topology.params.tm;
    // 1 MB is 5,681 cells; the scheme's dynamic threshold and 3-link-delay headroom.
    assert_eq!(tm.buffer_cells, 5_681);
    assert_eq!(tm.pfc_dynamic_per_mille, Some(125));
    assert_eq!(tm.pfc_headroom_cells, 214);
    let r = s.run().unwrap();
    assert_eq!(r.completed, r.flows);
    assert_eq!(r.drops.total(), 0, "{:?}", r.drops);
    let pfc_sent: u64 = r.pause_frames.values().map(|p| p.pfc_sent).sum();
    let pfc_received: u64 = r.pause_frames.values().map(|p| p.pfc_received).sum();
    assert!(
        pfc_sent > 0,
        "the incast fills the groups past the threshold"
    );
    assert_eq!(pfc_received, pfc_sent, "every PFC frame reaches a NIC");
    assert_eq!(r.frames.unaccounted, 0);
    // The same incast with DCTCP alone drops in that buffer.
    let lossy = ScenarioFile::load(&file("lossy.toml", &incast(1_000_000, "dctcp")))
        .unwrap()
        .run()
        .unwrap();
    assert!(lossy.drops.total() > 0, "{:?}", lossy.drops);
}

#[test]
fn a_buffer_too_small_for_one_cell_is_named() {
    let Err(e) = ScenarioFile::load(&file("tiny.toml", &incast(100, "dctcp-pfc"))) else {
        panic!("a 100-byte buffer loaded");
    };
    assert!(
        e.contains("topology.buffer_bytes: must be at least 1"),
        "{e}"
    );
}

#[test]
fn the_shipped_lossless_comparison_runs_every_scheme_it_names_deterministically() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/compare_lossless.toml");
    let base = ScenarioFile::load(&path).unwrap();
    assert_eq!(
        base.topology.params.tm.buffer_cells, 68_181,
        "12 MB in 176 B cells"
    );
    let (names, _) = base.compare.clone().unwrap();
    assert_eq!(names, ["bfc", "dctcp", "dctcp-pfc", "dcqcn", "hpcc"]);
    for name in &names {
        let load = || {
            ScenarioFile::load_with(
                &path,
                &[("scheme".into(), toml::Value::String(name.into()))],
            )
            .unwrap()
        };
        let r = load().run().unwrap();
        assert_eq!(r.completed, r.flows, "{name}");
        assert_eq!(r.frames.unaccounted, 0, "{name}");
        if ["dctcp-pfc", "dcqcn", "hpcc"].contains(&name.as_str()) {
            assert_eq!(r.drops.total(), 0, "{name}: {:?}", r.drops);
        }
        if name == "dcqcn" || name == "hpcc" {
            let clock = load().topology.params.clock();
            assert_eq!(r.text(clock), load().run().unwrap().text(clock));
        }
    }
}

/// Four 2 MB flows from the left of a dumbbell to one host on the right, in a 400 KB buffer:
/// the left switch's uplink groups stay over their threshold for far longer than a pause of
/// 400 quanta (2,048 ns at 100 Gb/s) lasts.
fn long_pause(refresh_percent: u32) -> t2sim::scenario::RunResults {
    let flows: String = [0, 1, 2, 5]
        .iter()
        .map(|src| {
            format!(
                "[[workload.flows]]\nsrc = {src}\ndst = 4\nsize_bytes = 2000000\nstart_ns = 0\n\n"
            )
        })
        .collect();
    let text = format!(
        r#"
seed = 1
duration_us = 1
drain_us = 3000
scheme = "dctcp-pfc"

[topology]
kind = "dumbbell"
hosts_per_side = 4
buffer_bytes = 400000

{flows}"#
    );
    let mut s =
        ScenarioFile::load(&file(&format!("long_pause_{refresh_percent}.toml"), &text)).unwrap();
    s.topology.params.tm.pfc_pause_quanta = 400;
    s.topology.params.tm.pfc_refresh_percent = refresh_percent;
    s.run().unwrap()
}

#[test]
fn a_pause_longer_than_its_quanta_is_kept_by_refreshing_the_xoff() {
    let refreshed = long_pause(50);
    assert_eq!(refreshed.completed, refreshed.flows);
    assert_eq!(refreshed.drops.total(), 0, "{:?}", refreshed.drops);
    // Without the refresh the pause lapses while the groups are still over the threshold,
    // and the headroom overflows.
    let lapsing = long_pause(0);
    assert_eq!(lapsing.drops.0.get("chip.tm_pfc_headroom"), Some(&582));
    assert_eq!(lapsing.drops.total(), 582, "{:?}", lapsing.drops);
    // Twelve frames (XOFFs and XONs) when each episode has one XOFF; 2,094 when each is
    // refreshed every 1,536 cycles (half of its 3,072).
    let sent = |r: &t2sim::scenario::RunResults| -> u64 {
        r.pause_frames.values().map(|p| p.pfc_sent).sum()
    };
    assert_eq!(sent(&lapsing), 12);
    assert_eq!(sent(&refreshed), 2_094);
}
