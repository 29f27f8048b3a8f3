//! HPCC as a scheme: INT records on the wire after each of two switches, byte for byte, and
//! a 2-to-1 incast whose bottleneck runs near eta of the line with a near-empty queue.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use t2_testbench::rdma::int::{IntHeader, IntHop, INT_LEN};
use t2_testbench::rdma::{wire, RdmaHost};
use t2_testbench::workload::FlowSpec;
use t2_testbench::{Direction, NodeId, Tap, TapFrame};
use t2sim::scenario::ScenarioFile;
use t2sim::Chip;

const G100: u64 = 100_000_000_000;

fn file(name: &str, text: &str) -> PathBuf {
    crate::common::scratch_file("hpcc", name, text)
}

/// A data frame as a chip sent it: (cycle, chip, bytes).
type Seen = (u64, NodeId, Vec<u8>);

/// Data frames as the chips in `.1` send them.
#[derive(Clone, Default)]
struct DataTap(Rc<RefCell<Vec<Seen>>>, Vec<NodeId>);

impl Tap for DataTap {
    fn frame(&mut self, f: &TapFrame<'_>) {
        if f.direction != Direction::Tx || !self.1.contains(&f.node) {
            return;
        }
        if wire::parse_with(f.bytes, true).is_some_and(|r| r.is_data()) {
            self.0
                .borrow_mut()
                .push((f.cycle, f.node, f.bytes.to_vec()));
        }
    }
}

const DUMBBELL: &str = r#"
seed = 3
duration_us = 1
scheme = "hpcc"

[topology]
kind = "dumbbell"
hosts_per_side = 1
link_gbps = 100
link_delay_ns = 1000
buffer_bytes = 12000000

[transport]
mss = 1000

[workload]
flows = []
"#;

#[test]
fn int_records_are_on_the_wire_byte_exact_after_each_of_two_switches() {
    let s = ScenarioFile::load(&file("dumbbell.toml", DUMBBELL)).unwrap();
    let mut t = s.topology.build().unwrap();
    let tap = DataTap(Default::default(), t.chips.clone());
    t.net.set_tap(Some(Box::new(tap.clone())));
    // Three packets host 0 -> host 1: through chip 0, then chip 1.
    let flow = FlowSpec {
        start: 0,
        id: 1,
        src: 0,
        dst: 1,
        size_bytes: 3_000,
    };
    t.add_flows(&[flow]).unwrap();
    t.net.run_until(30_000);
    let frames = tap.0.borrow().clone();
    assert_eq!(frames.len(), 6, "three data frames out of each chip");
    let clock = t2_clock::Clock::tofino2();
    // 1,000 B of payload, 58 B of RoCEv2 and 42 of INT: 1,100 B with the FCS, the byte
    // count each egress adds (`pkt_length`); records count it in 512-byte units.
    let frame_bytes = 1_100u64;
    for (k, chip) in [(0usize, t.chips[0]), (1, t.chips[1])] {
        let mine: Vec<_> = frames.iter().filter(|f| f.1 == chip).collect();
        assert_eq!(mine.len(), 3);
        for (n, (cycle, _, bytes)) in mine.iter().enumerate() {
            let at = wire::DATA_INT_OFFSET;
            let int = IntHeader::read(&bytes[at..at + INT_LEN]).unwrap();
            assert_eq!(int.nhop as usize, k + 1, "chip {k} packet {n}: {int:?}");
            let hop = int.hops[k];
            // The time is the egress parser's, in ns mod 2^24: the frame's last bit leaves
            // the chip's MAC a fixed time after (the egress pipe, 1,100 B at 100 Gb/s).
            let tx_ns = clock.cycles_to_ns_floor(*cycle);
            // The queue as each packet left it: the packets behind it, 7 cells of 176 B
            // each (the three arrive back to back and the first leaves with two queued).
            // The time: 219 ns before the frame's last bit leaves, for every packet on
            // both chips (the egress pipe's 193 cycles, 128.7 ns, and 1,100 B at line rate,
            // 88 ns; 2.3 ns more we have not traced).
            let expected = IntHop {
                qlen: 7 * (2 - n as u32),
                bytes: ((n as u64 * frame_bytes) >> 9) as u32,
                time: ((tx_ns - 219) % (1 << 24)) as u32,
                rate: 2,
            };
            assert_eq!(hop, expected, "chip {k} packet {n}");
            // Records of other hops are as the earlier chip left them; the rest zero.
            for (j, h) in int.hops.iter().enumerate().skip(k + 1) {
                assert_eq!(*h, IntHop::default(), "chip {k} packet {n} hop {j}");
            }
            // The bytes on the wire: record k's 8 bytes are its word, big-endian.
            assert_eq!(
                &bytes[at + 8 * k..at + 8 * k + 8],
                &hop.word().to_be_bytes()
            );
        }
        // Chip 1 sees what chip 0 wrote, unchanged, in record 0.
        if k == 1 {
            let first: Vec<_> = frames.iter().filter(|f| f.1 == t.chips[0]).collect();
            for (a, b) in first.iter().zip(&mine) {
                let at = wire::DATA_INT_OFFSET;
                assert_eq!(&a.2[at..at + 8], &b.2[at..at + 8]);
            }
        }
    }
    // The receiver echoes and the sender keeps its rate (the path is idle: U well below
    // eta, and additive steps are capped at the line).
    let h = t.net.node::<RdmaHost>(t.hosts[0]);
    assert_eq!(h.outcomes().len(), 1);
    assert_eq!(h.rate_control(1).unwrap().rate_bps(), G100);
}

/// Three hosts on one chip, the papers' 12 MB buffer, 1 us links.
const CHIP: &str = r#"
seed = 7
duration_us = 1
scheme = "hpcc"

[topology]
kind = "single_chip"
hosts = 3
link_gbps = 100
link_delay_ns = 1000
buffer_bytes = 12000000

[transport]
mss = 1000

[workload]
flows = []
"#;

#[test]
fn a_two_to_one_incast_runs_near_eta_with_a_near_empty_queue() {
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
    // Warm up 200 us, then sample every 1 us for 300 us: the bytes host 2 received and the
    // bottleneck queue (host 2's port, queue 0).
    let us = 1_500u64;
    t.net.run_until(200 * us);
    let receiver = t.hosts[2];
    let start_bytes = t.net.node::<RdmaHost>(receiver).data_bytes_received();
    let mut depths = Vec::new();
    for k in 1..=300u64 {
        t.net.run_until((200 + k) * us);
        let chip = t.net.node::<Chip>(t.chips[0]);
        depths.push(chip.tm().queue_stats(2, 0).depth_cells as u64);
    }
    let bytes = t.net.node::<RdmaHost>(receiver).data_bytes_received() - start_bytes;
    // Goodput over 300 us against the line; frames add 100 B to each 1,000 B of payload.
    let goodput = bytes as f64 * 8.0 / 300e-6 / G100 as f64;
    let wire = goodput * 1_100.0 / 1_000.0;
    let mean_depth = depths.iter().sum::<u64>() as f64 / depths.len() as f64;
    let max_depth = *depths.iter().max().unwrap();
    let rate = |h: usize, id: u32| {
        t.net
            .node::<RdmaHost>(t.hosts[h])
            .rate_control(id)
            .unwrap()
            .rate_bps()
    };
    let (a, b) = (rate(0, 1), rate(1, 2));
    println!(
        "goodput {goodput:.4} of the line, on the wire {wire:.4}; queue mean {mean_depth:.1} \
         cells, max {max_depth}; rates {a} {b}"
    );
    // HPCC aims the bottleneck at eta = 0.95 of the line with the queue near empty.
    assert!((0.90..=1.0).contains(&wire), "{wire}");
    assert!(mean_depth < 60.0, "{mean_depth} cells: {depths:?}");
    assert!(max_depth < 200, "{max_depth}");
    assert!(
        (a as f64 - b as f64).abs() / (a.max(b) as f64) < 0.2,
        "{a} {b}"
    );
    let chip = t.net.node::<Chip>(t.chips[0]);
    let drops: u64 = t2_tm::TmDrop::ALL.iter().map(|&r| chip.tm().drops(r)).sum();
    assert_eq!(drops, 0);
}
