//! The TM's congestion status reaches the egress program: `eg_intr_md.enq_congest_stat`,
//! `deq_congest_stat` and `app_pool_congest_stat`, next to the depths they grade.

use crate::common::udp_frame;
use std::net::Ipv4Addr;
use t2_pipeline::ir::{Action, MatchKind, Operand, Primitive, Stmt, Table};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);

#[test]
fn the_egress_program_reads_queue_and_pool_congestion() {
    // Egress writes what it read into the headers: l4 ports <- enq/deq depth, TTL <-
    // enq_congest_stat, diffserv <- app_pool_congest_stat, total_len <- deq_congest_stat.
    let mut p = t2sim::schemes::dctcp::program(400);
    let set = |dst: &str, src: &str| Primitive::Set {
        dst: dst.into(),
        src: Operand::field(src),
    };
    p.actions.push(
        Action::new("report")
            .prim(set("l4.src_port", "eg_intr_md.enq_qdepth"))
            .prim(set("l4.dst_port", "eg_intr_md.deq_qdepth"))
            .prim(set("ipv4.ttl", "eg_intr_md.enq_congest_stat"))
            .prim(set("ipv4.diffserv", "eg_intr_md.app_pool_congest_stat")),
    );
    p.actions
        .push(Action::new("report_deq").prim(set("ipv4.total_len", "eg_intr_md.deq_congest_stat")));
    for (t, a) in [("report", "report"), ("report_deq", "report_deq")] {
        p.tables.push(
            Table::new(t, MatchKind::Exact, &[], 0)
                .action(a)
                .default_action(a, &[]),
        );
        p.egress.push(Stmt::apply(t));
    }
    // Queue thresholds 6/12/18 cells; pool 0 (every queue's) 24 cells, thresholds 50/75/90 %.
    let mut params = Tofino2Params::default();
    params.tm.queue_congest_cells = [6, 12, 18];
    params.tm.app_pool_cells = Some([24, 0, 0, 0]);
    params.tm.dynamic_threshold_alpha_percent = None;
    let port = |mac| PortSpec {
        pipe: 0,
        mac,
        channel: 0,
        bps: G100,
    };
    let config = ChipConfig {
        params,
        ports: vec![port(0), port(1)],
        routes: vec![(RECEIVER, 0)],
        program: Some(p),
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    // Four 1046-byte frames (6 cells each) 130 cycles apart: each waits 300 cycles in the
    // queue, so frame k joins behind min(k, 2) others, and leaves 12, 12, 6, 0 cells behind.
    let frame = udp_frame(Ipv4Addr::new(10, 0, 1, 1), RECEIVER, 64, 1000);
    let sender = net.add(Probe::new(
        G100,
        (0..4).map(|k| (100 + 130 * k, frame.clone())).collect(),
    ));
    let rx = net.add(Probe::new(G100, Vec::new()));
    net.link(sender, 0, chip, 1, 1).unwrap();
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.run_until(20_000);
    let got: Vec<[u16; 5]> = net
        .node::<Probe>(rx)
        .received()
        .iter()
        .map(|(_, b)| {
            let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
            [
                u16_at(34),
                u16_at(36),
                b[22] as u16,
                b[15] as u16,
                u16_at(16),
            ]
        })
        .collect();
    // [enq_qdepth, deq_qdepth, enq_congest_stat, app_pool_congest_stat, deq_congest_stat]:
    // pool 0 holds what the queue holds, 12 of 24 cells (50 %: level 1) after the first two.
    assert_eq!(
        got,
        vec![
            [0, 12, 0, 1, 2],
            [6, 12, 1, 1, 2],
            [12, 6, 2, 0, 1],
            [12, 0, 2, 0, 0],
        ]
    );
}
