//! DCQCN as a scheme: its program fits and marks on the ramp, and a 2-to-1 incast of RDMA
//! NICs through one chip converges to fair rates with the queue held around the marking
//! range.

use std::path::PathBuf;
use t2_testbench::rdma::RdmaHost;
use t2_testbench::workload::FlowSpec;
use t2sim::scenario::ScenarioFile;
use t2sim::Chip;

const G100: u64 = 100_000_000_000;

fn file(name: &str, text: &str) -> PathBuf {
    crate::common::scratch_file("dcqcn", name, text)
}

/// Three hosts on one chip, the papers' 12 MB buffer, 1 us links.
const CHIP: &str = r#"
seed = 7
duration_us = 1
scheme = "dcqcn"

[topology]
kind = "single_chip"
hosts = 3
link_gbps = 100
link_delay_ns = 1000
buffer_bytes = 12000000

[workload]
flows = []
"#;

#[test]
fn a_two_to_one_incast_converges_to_fair_rates() {
    let s = ScenarioFile::load(&file("incast.toml", CHIP)).unwrap();
    let mut t = s.topology.build().unwrap();
    let flows: Vec<FlowSpec> = (0..2)
        .map(|i| FlowSpec {
            start: 0,
            id: i as u32 + 1,
            src: i,
            dst: 2,
            size_bytes: 200_000_000,
        })
        .collect();
    t.add_flows(&flows).unwrap();
    let step = 150_000; // 100 us
    let mut samples = Vec::new();
    for k in 1..=60u64 {
        t.net.run_until(k * step);
        let rate = |h: usize, id: u32| {
            t.net
                .node::<RdmaHost>(t.hosts[h])
                .rate_control(id)
                .map_or(G100, |rp| rp.rate_bps())
        };
        let chip = t.net.node::<Chip>(t.chips[0]);
        let depth = chip.tm().queue_stats(2, 0).depth_cells;
        samples.push((k * step, rate(0, 1), rate(1, 2), depth));
    }
    // Both start at line rate, are cut on the first CNPs, and from then on oscillate
    // together around the fair share: over the last 3 ms each flow's mean rate is within
    // 10% of the other's, their sum within 85-110% of the line, and the queue rises into
    // the marking ramp (above Kmin, 2,272 cells) but never past Kmax (9,090).
    let late = &samples[30..];
    let mean = |f: fn(&(u64, u64, u64, u32)) -> u64| {
        late.iter().map(f).sum::<u64>() as f64 / late.len() as f64
    };
    let (a, b) = (mean(|s| s.1), mean(|s| s.2));
    assert!((a - b).abs() / a.max(b) < 0.10, "{a} vs {b}: {samples:?}");
    let sum = (a + b) / G100 as f64;
    assert!((0.85..1.10).contains(&sum), "{sum}: {samples:?}");
    let peak = late.iter().map(|s| s.3).max().unwrap();
    assert!((2_273..=9_090).contains(&peak), "{peak}: {samples:?}");
    let chip = t.net.node::<Chip>(t.chips[0]);
    let drops: u64 = t2_tm::TmDrop::ALL.iter().map(|&r| chip.tm().drops(r)).sum();
    assert_eq!(drops, 0);
    // ACKs and CNPs back to the senders use the control queue (1), never the data queue.
    for port in [0, 1] {
        let (data, control) = (
            chip.tm().queue_stats(port, 0),
            chip.tm().queue_stats(port, 1),
        );
        assert_eq!(data.enqueued, 0, "port {port}");
        assert!(control.enqueued > 1_000, "port {port}: {control:?}");
    }
    // Every CNP a receiver sent reached its sender.
    let receiver = t.net.node::<RdmaHost>(t.hosts[2]);
    for (h, id) in [(0, 1u32), (1, 2)] {
        let sender = t.net.node::<RdmaHost>(t.hosts[h]);
        let sent = receiver.cnps_sent_at(id).len();
        assert!(sent > 10);
        assert!(sender.cnps_received_at(id).len() + 1 >= sent);
    }
}

#[test]
fn the_dcqcn_program_fits_and_stays_out_of_the_default_comparison() {
    let params = t2sim::Tofino2Params::default();
    let scheme = t2sim::schemes::find("dcqcn").unwrap();
    let target = t2sim::schemes::Target {
        params: &params,
        link_bps: G100,
        multipath: false,
    };
    let fit = t2sim::schemes::Fit::of(&scheme.default_setup(&target).program, &params).unwrap();
    assert!(fit.fits, "{fit:?}");
    assert!(!t2sim::schemes::default_comparison_names().contains(&"dcqcn"));
}
