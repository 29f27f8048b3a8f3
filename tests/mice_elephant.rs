//! Mice/Elephant isolation (`src/schemes/mice_elephant`): classification, PFC on the mice
//! class, the QCN congestion point and its CNMs, on one chip with exact cycles.

mod common;

use proptest::prelude::*;
use std::net::Ipv4Addr;
use std::sync::Arc;
use t2_clock::Cycle;
use t2_pipeline::check::{check, Checked, Thread};
use t2_pipeline::exec::Interpreter;
use t2_pipeline::headers::{build_tcp_frame, Endpoints, MacAddr};
use t2_pipeline::pfc::PfcFrame;
use t2_pipeline::qcn::Cnm;
use t2_pipeline::{fields, layout, Phv};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::schemes::mice_elephant::{
    self, quantised_fb, Config, Variant, CNM_COPY_BYTES, CNM_SESSION, ELEPHANT_QID, MICE_QID,
};
use t2sim::{Chip, MirrorSession};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const SOURCE: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const OTHER: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);

fn chip(c: &Config) -> Chip {
    let mut chip = common::pipe0_chip(
        &[(0, 0), (0, 2), (1, 0)],
        vec![(RECEIVER, 0), (SOURCE, 1), (OTHER, 2)],
        mice_elephant::program(c),
    );
    let params = chip.params().clone();
    for port in 0..3 {
        chip.set_port_queues(port, &mice_elephant::port_queues(&params, c, G100))
            .unwrap();
    }
    let recirc = if std::env::var("DBG").is_ok() {
        1
    } else {
        chip.recirculation_port(0).unwrap()
    };
    chip.set_mirror_session(
        CNM_SESSION,
        Some(MirrorSession {
            port: recirc,
            qid: 0,
            truncate_bytes: Some(CNM_COPY_BYTES),
        }),
    )
    .unwrap();
    chip
}

type Frames = Vec<(Cycle, Vec<u8>)>;

/// Both senders send `n` UDP frames of `payload` bytes each, back to back from cycle 100,
/// to the receiver; returns what the receiver and the two senders received.
fn run(
    c: &Config,
    n: usize,
    payload: usize,
    stepping: Stepping,
) -> (Frames, Frames, Frames, String) {
    let mut net = Network::new(stepping);
    let chip = net.add(chip(c));
    let script = |src| {
        (0..n)
            .map(|k| {
                (
                    100 + k as Cycle,
                    common::udp_frame(src, RECEIVER, 64, payload),
                )
            })
            .collect::<Vec<_>>()
    };
    let a = net.add(Probe::new(G100, script(SOURCE)));
    let b = net.add(Probe::new(G100, script(OTHER)));
    let rx = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(a, 0, chip, 1, 1).unwrap();
    net.link(b, 0, chip, 2, 1).unwrap();
    while net.next_event().is_some() {
        net.step();
    }
    assert_eq!(net.pool().live(), 0);
    (
        net.node::<Probe>(rx).received().to_vec(),
        net.node::<Probe>(a).received().to_vec(),
        net.node::<Probe>(b).received().to_vec(),
        format!("{:?}", net.node::<Chip>(chip).counters()),
    )
}

fn interpreter(c: &Config) -> (Interpreter, Arc<Checked>) {
    let checked = Arc::new(check(&mice_elephant::program(c)).unwrap());
    (Interpreter::new(Arc::clone(&checked)), checked)
}

fn register(c: &Checked, name: &str) -> usize {
    c.registers.iter().position(|r| r.name == name).unwrap()
}

const PORT: u32 = 5;

/// Runs one 1000-byte UDP frame through the egress of port 5 with `q` cells found at
/// enqueue; returns the mirror session asked for (if any) and the mirror header's feedback.
fn egress(interp: &mut Interpreter, c: &Checked, q: u32) -> Option<(u32, u8)> {
    let bytes = common::udp_frame(SOURCE, RECEIVER, 64, 1000);
    let mut phv = Phv::new(&c.phv);
    phv.set(layout::PKT_LENGTH, bytes.len() as u32 + 4);
    phv.set(layout::EGRESS_PORT, PORT);
    phv.set(fields::EG_ENQ_QDEPTH, q);
    interp.parse(&bytes, &mut phv).unwrap();
    interp.run(Thread::Egress, &mut phv);
    (phv.get(fields::MIRROR_VALID) == 1).then(|| {
        let header = c.parser.header_bytes(0, &phv);
        (phv.get(fields::MIRROR_SESSION), header[0])
    })
}

#[test]
fn a_sampled_frame_gets_the_standards_feedback_for_set_queue_states() {
    let c = Config::defaults(Variant::Isolation);
    let (mut interp, checked) = interpreter(&c);
    let (bytes, q_old) = (
        register(&checked, "cp_bytes"),
        register(&checked, "cp_q_old"),
    );
    // (Q, Qold) -> quantised |Fb| with Qeq = 192 cells, w = 2: 63 (3Q - Qeq - 2Qold) / 960.
    for (q, old, want) in [
        (300, 250, Some(13)),
        (192, 192, None),
        (100, 150, None),
        (100, 0, Some(7)),
        (193, 192, Some(0)),
        (150, 0, Some(16)),
        (512, 192, Some(63)),
        (2000, 0, Some(63)),
    ] {
        assert_eq!(quantised_fb(q, old, 192), want, "Q {q}, Qold {old}");
        let sample = c.sample_bytes;
        // The byte counter has reached the sampling interval: this frame is sampled.
        interp.state.registers[bytes][PORT as usize] = sample;
        interp.state.registers[q_old][PORT as usize] = old;
        let got = egress(&mut interp, &checked, q as u32);
        assert_eq!(
            got,
            want.map(|fb| (CNM_SESSION as u32, fb as u8)),
            "Q {q}, Qold {old}"
        );
        // The sample restarts the count and leaves Q for the next one.
        assert_eq!(interp.state.registers[bytes][PORT as usize], 0);
        assert_eq!(interp.state.registers[q_old][PORT as usize], q);
        // Not sampled: counted (frame bytes with FCS), no CNM whatever the queue, Qold kept.
        let got = egress(&mut interp, &checked, 5000);
        assert_eq!(got, None);
        assert_eq!(interp.state.registers[bytes][PORT as usize], 1046);
        assert_eq!(interp.state.registers[q_old][PORT as usize], q);
    }
}

fn tcp_frame(total_len: usize, dscp: u8) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 2]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        src_ip: SOURCE,
        dst_ip: RECEIVER,
        src_port: 10_000,
        dst_port: 80,
    };
    let mut out = Vec::new();
    build_tcp_frame(
        &mut out,
        &ep,
        64,
        0,
        1,
        0,
        0x10,
        1000,
        &vec![7; total_len - 40],
        60,
    );
    out[15] = dscp << 2;
    out[24..26].copy_from_slice(&[0, 0]);
    let sum = t2_pipeline::headers::ipv4_header_checksum(&out[14..34]);
    out[24..26].copy_from_slice(&sum.to_be_bytes());
    out
}

/// The queue and class a frame gets in ingress.
fn ingress(interp: &mut Interpreter, c: &Checked, bytes: &[u8]) -> (u32, u32) {
    let mut phv = Phv::new(&c.phv);
    phv.set(layout::PKT_LENGTH, bytes.len() as u32 + 4);
    interp.parse(bytes, &mut phv).unwrap();
    interp.run(Thread::Ingress, &mut phv);
    (phv.get(layout::QID), phv.get(fields::INGRESS_COS))
}

#[test]
fn a_flow_turns_elephant_after_its_first_x_bytes() {
    let mice = (MICE_QID as u32, 1);
    let elephant = (ELEPHANT_QID as u32, 0);
    let c = Config {
        mice_bytes: 10_000,
        ..Config::defaults(Variant::Isolation)
    };
    let (mut interp, checked) = interpreter(&c);
    // 1044-byte IPv4 packets: the 10th starts at 9,396 counted bytes (mice), the 11th at
    // 10,440 (elephant) and so on; ACKs (44 bytes) stay mice and are not counted.
    let got: Vec<_> = (0..12)
        .map(|_| ingress(&mut interp, &checked, &tcp_frame(1044, 0)))
        .collect();
    let mut want = vec![mice; 10];
    want.extend([elephant; 2]);
    assert_eq!(got, want);
    assert_eq!(ingress(&mut interp, &checked, &tcp_frame(44, 0)), mice);
    assert_eq!(
        ingress(&mut interp, &checked, &tcp_frame(1044, 0)),
        elephant
    );
    // By DSCP: the source's mark alone decides.
    let c = Config { by_dscp: true, ..c };
    let (mut interp, checked) = interpreter(&c);
    for _ in 0..12 {
        assert_eq!(ingress(&mut interp, &checked, &tcp_frame(1044, 46)), mice);
        assert_eq!(
            ingress(&mut interp, &checked, &tcp_frame(1044, 0)),
            elephant
        );
    }
    // The baselines keep every data packet in one queue and class.
    for v in [Variant::Hybrid, Variant::PfcOnly, Variant::QcnOnly] {
        let (mut interp, checked) = interpreter(&Config::defaults(v));
        for _ in 0..3 {
            assert_eq!(
                ingress(&mut interp, &checked, &tcp_frame(1044, 46)),
                elephant
            );
        }
    }
}
