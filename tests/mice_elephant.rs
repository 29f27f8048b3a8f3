//! Mice/Elephant isolation (`src/schemes/mice_elephant`): classification, PFC on the mice
//! class, the QCN congestion point and its CNMs, on one chip with exact cycles.

mod common;

use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::qcn::Cnm;
use t2_testbench::{Network, Probe, Stepping};
use t2sim::schemes::mice_elephant::{self, Config, Variant, CNM_COPY_BYTES, CNM_SESSION};
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
    let params = *chip.params();
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

#[test]
fn debug_cnm() {
    let c = Config {
        qeq_cells: 1,
        sample_bytes: 1000,
        mice_bytes: 1000,
        ..Config::defaults(Variant::Isolation)
    };
    let (rx, a, b, chip) = run(&c, 20, 1000, Stepping::Jump);
    eprintln!("rx {} a {} b {}", rx.len(), a.len(), b.len());
    for (t, f) in &a {
        eprintln!(
            "{t} {:?} {:02x?}",
            Cnm::parse(f).map(|c| c.qntz_fb),
            &f[..40.min(f.len())]
        );
    }
    eprintln!("{chip}");
}
