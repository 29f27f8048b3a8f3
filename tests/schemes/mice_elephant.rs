//! Mice/Elephant isolation (`src/schemes/mice_elephant`): classification, PFC on the mice
//! class, the QCN congestion point and its CNMs, on one chip with exact cycles.

use proptest::prelude::*;
use std::net::Ipv4Addr;
use std::sync::Arc;
use t2_clock::Cycle;
use t2_pipeline::check::{check, Checked, Thread};
use t2_pipeline::exec::Interpreter;
use t2_pipeline::headers::{build_tcp_frame, Endpoints, MacAddr};
use t2_pipeline::pfc::PfcFrame;
use t2_pipeline::{fields, layout, Phv};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::schemes::mice_elephant::host::MICE_PFC_CLASS;
use t2sim::schemes::mice_elephant::qcn::cnm::Cnm;
use t2sim::schemes::mice_elephant::{
    self, quantised_fb, Config, Variant, CNM_COPY_BYTES, CNM_SESSION, ELEPHANT_QID, MICE_QID,
};
use t2sim::{Chip, MirrorSession};

const G100: u64 = 100_000_000_000;
const RECEIVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
const SOURCE: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const OTHER: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);

fn chip(c: &Config) -> Chip {
    // The scheme's PFC thresholds on the TM, three 100 Gb/s ports of pipe 0.
    let mut params = t2sim::Tofino2Params::default();
    c.pfc.apply(&mut params.tm);
    let config = t2sim::ChipConfig {
        params,
        ports: [(0, 0), (0, 2), (1, 0)]
            .iter()
            .map(|&(mac, channel)| t2sim::PortSpec {
                pipe: 0,
                mac,
                channel,
                bps: G100,
            })
            .collect(),
        routes: vec![(RECEIVER, 0), (SOURCE, 1), (OTHER, 2)],
        program: Some(mice_elephant::program(c)),
    };
    let mut chip = Chip::new("chip", &config).unwrap();
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
                    crate::common::udp_frame(src, RECEIVER, 64, payload),
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
        net.advance();
    }
    assert_eq!(net.live_packets(), 0);
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
    let bytes = crate::common::udp_frame(SOURCE, RECEIVER, 64, 1000);
    let mut phv = Phv::new(&c.phv);
    phv.set(layout::PKT_LENGTH, bytes.len() as u32 + 4);
    phv.set(layout::EGRESS_PORT, PORT);
    phv.set(fields::EG_ENQ_QDEPTH, q);
    interp.parse(&bytes, &mut phv).unwrap();
    interp.run(Thread::Egress, &mut phv);
    (phv.get(fields::MIRROR_VALID) == 1).then(|| {
        // The copy's first byte is its mirror type (what the egress parser looks ahead at),
        // then the feedback.
        let header = c.parser.header_bytes(0, &phv);
        assert_eq!(header[0], 1, "the mirror type");
        (phv.get(fields::MIRROR_SESSION), header[1])
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
        interp.state.registers[bytes].set(PORT as usize, sample);
        interp.state.registers[q_old].set(PORT as usize, old);
        let got = egress(&mut interp, &checked, q as u32);
        assert_eq!(
            got,
            want.map(|fb| (CNM_SESSION as u32, fb as u8)),
            "Q {q}, Qold {old}"
        );
        // The sample restarts the count and leaves Q for the next one.
        assert_eq!(interp.state.registers[bytes].get(PORT as usize), 0);
        assert_eq!(interp.state.registers[q_old].get(PORT as usize), q);
        // Not sampled: counted (frame bytes with FCS), no CNM whatever the queue, Qold kept.
        let got = egress(&mut interp, &checked, 5000);
        assert_eq!(got, None);
        assert_eq!(interp.state.registers[bytes].get(PORT as usize), 1046);
        assert_eq!(interp.state.registers[q_old].get(PORT as usize), q);
    }
}

/// The interpreter's `random` generator (`t2_pipeline::exec`, splitmix64), written out here
/// so that the test derives the draws itself.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn randomised_sampling_draws_each_interval_from_the_random_extern() {
    let c = Config {
        sample_random: true,
        ..Config::defaults(Variant::Isolation)
    };
    // 150 KB: the widest power-of-two span within 30% is 32,768 bytes, centred on 150,000.
    assert_eq!(mice_elephant::sample_interval_range(150_000), (133_616, 15));
    let (low, k) = mice_elephant::sample_interval_range(c.sample_bytes);
    let (mut interp, checked) = interpreter(&c);
    // Every elephant data frame draws once from `cp_draw_t`'s generator (seeded as the
    // interpreter seeds table t: seed 0 xor t x 0xd1b54a32d192ed03, one step).
    let t = checked
        .tables
        .iter()
        .position(|t| t.name == "cp_draw_t")
        .unwrap() as u64;
    let mut state = splitmix64(&mut (t.wrapping_mul(0xd1b5_4a32_d192_ed03)));
    // 1,046-byte frames (with FCS) into a deep queue (every sample sends a CNM): frame n is
    // sampled when the bytes counted since the last sample reach the interval drawn at it;
    // the first frame is sampled (the interval starts at 0), not counting itself.
    let frame = 1046;
    let (mut counted, mut interval) = (0u64, 0u64);
    let mut expected = Vec::new();
    let mut sampled = Vec::new();
    for n in 0..3000 {
        let draw = (splitmix64(&mut state) >> 32) & ((1 << k) - 1);
        if counted >= interval {
            expected.push(n);
            counted = 0;
            interval = low + draw;
        } else {
            counted += frame;
        }
        if egress(&mut interp, &checked, 1000).is_some() {
            sampled.push(n);
        }
    }
    assert_eq!(sampled, expected);
    // The gaps vary within [133,616, 166,383] bytes: 128 to 160 frames.
    let gaps: Vec<usize> = sampled.windows(2).map(|w| w[1] - w[0] - 1).collect();
    assert!(gaps.iter().all(|g| (128..=160).contains(g)), "{gaps:?}");
    assert!(gaps.iter().any(|&g| g != gaps[0]), "{gaps:?}");
    assert_eq!(sampled.len(), 21);
    // Without it, every interval is exactly 150,000 bytes: 144 frames counted (150,624).
    let (mut interp, checked) = interpreter(&Config::defaults(Variant::Isolation));
    let fixed: Vec<usize> = (0..3000)
        .filter(|_| egress(&mut interp, &checked, 1000).is_some())
        .collect();
    assert_eq!(fixed[..3], [144, 289, 434]);
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

/// A UDP frame of `payload` bytes marked as mice (DSCP 46).
fn mice_frame(src: Ipv4Addr, payload: usize) -> Vec<u8> {
    let mut f = crate::common::udp_frame(src, RECEIVER, 64, payload);
    f[15] = 46 << 2;
    f[24..26].copy_from_slice(&[0, 0]);
    let sum = t2_pipeline::headers::ipv4_header_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f
}

/// (cycle, class, quanta) of each PFC frame in `frames`.
fn pfc_frames(frames: &Frames) -> Vec<(Cycle, usize, u16)> {
    frames
        .iter()
        .filter_map(|(t, f)| PfcFrame::parse(f).map(|p| (*t, p)))
        .flat_map(|(t, p)| {
            (0..8)
                .filter(move |&c| p.class_enable[c])
                .map(move |c| (t, c, p.quanta[c]))
        })
        .collect()
}

/// Two probes send 120 mice frames each (1,046 bytes with FCS: 6 cells) into port 0, one
/// every 128 cycles (just under 100 Gb/s line rate), so port 0's mice queue grows by about
/// one frame per 128 cycles, half from each ingress port. Probes do not obey PFC.
fn pfc_run(stepping: Stepping) -> (Frames, Frames, usize, String) {
    let c = Config {
        by_dscp: true,
        ..Config::defaults(Variant::Isolation)
    };
    let mut net = Network::new(stepping);
    let chip = net.add(chip(&c));
    let script = |src| {
        (0..120)
            .map(|k| (100 + 128 * k as Cycle, mice_frame(src, 1000)))
            .collect::<Vec<_>>()
    };
    let a = net.add(Probe::new(G100, script(SOURCE)));
    let b = net.add(Probe::new(G100, script(OTHER)));
    let rx = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, rx, 0, 1).unwrap();
    net.link(a, 0, chip, 1, 1).unwrap();
    net.link(b, 0, chip, 2, 1).unwrap();
    while net.next_event().is_some() {
        net.advance();
    }
    assert_eq!(net.live_packets(), 0);
    (
        net.node::<Probe>(a).received().to_vec(),
        net.node::<Probe>(b).received().to_vec(),
        net.node::<Probe>(rx).received().len(),
        format!("{:?}", net.node::<Chip>(chip).counters().drops),
    )
}

#[test]
fn pfc_pauses_the_mice_class_at_k_and_drops_only_past_k_plus_k0() {
    let (a, b, delivered, drops) = pfc_run(Stepping::EveryCycle);
    // Each ingress port's mice group passes XOFF (139 cells, 24.47 KB) at its 24th resident
    // frame (144 cells) and the chip sends XOFF for class 1 only, full quanta, out of that
    // ingress port; the group falls to XON (69 cells) once the senders have stopped and the
    // queue drains. The cycles are the model's, the same stepping and jumping.
    assert_eq!(pfc_frames(&a), [(5957, 1, 65535), (24162, 1, 0)]);
    assert_eq!(pfc_frames(&b), [(5830, 1, 65535), (24034, 1, 0)]);
    // The probes ignore the pause: what exceeds K + K0 (272 cells, 48 KB) per ingress port
    // is dropped as headroom overflow, and everything else is delivered.
    assert_eq!(drops, "{Tm(PfcHeadroom): 33}");
    assert_eq!(delivered, 240 - 33);
    let jumped = pfc_run(Stepping::Jump);
    assert_eq!((jumped.0, jumped.1, jumped.2), (a, b, delivered));
}

/// A PFC frame for `class` with `quanta`.
fn pfc_frame(class: u8, quanta: u16) -> Vec<u8> {
    let mut f = Vec::new();
    PfcFrame::one_class(class, quanta).write([2, 0, 0, 0, 0, 9], &mut f);
    f
}

/// The downstream probe on port 0 sends PFC frames to the chip (the chip is the upstream
/// switch that honours them) while a source sends mice frames through port 0, with every
/// queue's `pfc_paused` traced. Returns the dump, the receiver's arrivals and the chip's
/// device port 0 name.
fn pfc_hold_run(stepping: Stepping) -> (Vec<u8>, Vec<Cycle>, u16) {
    let c = Config {
        by_dscp: true,
        ..Config::defaults(Variant::Isolation)
    };
    let mut net = Network::new(stepping);
    let chip_id = net.add(chip(&c));
    let buf = crate::common::waves::SharedBytes::default();
    let filter = t2_waves::TraceFilter::parse("chip.tm.**.pfc_paused").unwrap();
    net.node_mut::<Chip>(chip_id)
        .enable_trace(filter, Box::new(buf.clone()))
        .unwrap();
    // Last bits leave the probe at these cycles and arrive one cycle later (1-cycle link).
    let pfc = vec![
        (1000, pfc_frame(MICE_PFC_CLASS, 100)),
        (1500, pfc_frame(MICE_PFC_CLASS, 100)),
        (3000, pfc_frame(MICE_PFC_CLASS, 400)),
        (4500, pfc_frame(MICE_PFC_CLASS, 0)),
        // A hold of an empty queue: nothing but the bit changes when it ends.
        (5000, pfc_frame(MICE_PFC_CLASS, 100)),
        // A class no queue of port 0 is mapped to: nothing holds.
        (6000, pfc_frame(4, 100)),
    ];
    let mice = vec![
        (1100, mice_frame(SOURCE, 1000)),
        (3100, mice_frame(SOURCE, 1000)),
    ];
    let rx = net.add(Probe::new(G100, pfc));
    let a = net.add(Probe::new(G100, mice));
    net.link(chip_id, 0, rx, 0, 1).unwrap();
    net.link(a, 0, chip_id, 1, 1).unwrap();
    // `run_until` jumps over quiet cycles when asked to (`step` always steps one).
    net.run_until(8000);
    assert_eq!(net.next_event(), None);
    if stepping == Stepping::Jump {
        assert!(net.visited_cycles() < 8000, "{}", net.visited_cycles());
    }
    let chip = net.node_mut::<Chip>(chip_id);
    chip.finish_trace(8000).unwrap();
    let dev = chip.dev_port(0);
    let arrivals = net.node::<Probe>(rx).arrivals();
    let bytes = buf.0.lock().unwrap().clone();
    (bytes, arrivals, dev)
}

#[test]
fn pfc_paused_rises_when_a_frame_takes_effect_and_falls_when_its_quanta_run_out() {
    let (bytes, arrivals, dev) = pfc_hold_run(Stepping::Jump);
    let dump = crate::common::waves::parse_dump(&bytes);
    let mice_q = format!("chip.tm.pipe0.port{dev}.q{MICE_QID}.pfc_paused");
    // A frame arriving in cycle t takes effect in t + 1. 100 quanta at 100 Gb/s are
    // 51,200 bit times, 512 ns, 768 cycles at 1.5 GHz; 400 quanta 3,072 cycles.
    // - 1001 in, holds from 1002; refreshed at 1501 (from 1502), so it ends at 1502 + 768;
    // - 3001 in, holds from 3002 for 3,072 cycles, but the XON of 4501 ends it at 4502;
    // - 5001 in, holds the empty queue from 5002 to 5002 + 768: with no packet waiting, only
    //   the traced bit asks the kernel to visit the end;
    // - the class-4 frame at 6001 holds nothing on port 0.
    assert_eq!(
        crate::common::waves::numbers(&dump, &mice_q),
        [
            (0, 0),
            (1002, 1),
            (2270, 0),
            (3002, 1),
            (4502, 0),
            (5002, 1),
            (5770, 0)
        ]
    );
    // Every other queue of the port stays released.
    for q in (0..16).filter(|&q| q != MICE_QID as usize) {
        let path = format!("chip.tm.pipe0.port{dev}.q{q}.pfc_paused");
        assert_eq!(
            crate::common::waves::numbers(&dump, &path),
            [(0, 0)],
            "{path}"
        );
    }
    // The bit is the hold: the mice frame sent at 1100 (in the queue a few hundred cycles
    // later) leaves only once the bit falls, and the one sent at 3100 once the XON lands.
    // Both reach the receiver the same 391 cycles after the fall: the dequeue, the egress
    // pipeline, the MAC's serialization and the 1-cycle link.
    assert_eq!(arrivals, [2270 + 391, 4502 + 391]);
    // Jumping over the quiet cycles records the same edges, byte for byte.
    let (stepped, stepped_arrivals, _) = pfc_hold_run(Stepping::EveryCycle);
    assert_eq!(stepped_arrivals, arrivals);
    assert!(
        stepped == bytes,
        "stepping and jumping give different dumps"
    );
}

#[test]
fn cnms_travel_back_to_the_sampled_frames_source() {
    // Qeq of 1 cell and sampling every 1,000 bytes: from the second sample on, every sample
    // of the growing queue is congested.
    let c = Config {
        qeq_cells: 1,
        sample_bytes: 1000,
        mice_bytes: 1000,
        ..Config::defaults(Variant::Isolation)
    };
    let (rx, a, b, counters) = run(&c, 20, 1000, Stepping::EveryCycle);
    assert_eq!(rx.len(), 40);
    let cnms: Vec<_> = a
        .iter()
        .chain(&b)
        .map(|(_, f)| Cnm::parse(f).unwrap())
        .collect();
    assert_eq!(cnms.len(), 19);
    assert!(counters.contains("recirculated: 19"), "{counters}");
    // Each names the sampled frame: its source is the probe that got the CNM.
    for (frames, src) in [(&a, SOURCE), (&b, OTHER)] {
        for (_, f) in frames.iter() {
            let cnm = Cnm::parse(f).unwrap();
            assert_eq!(&cnm.encap_msdu[12..16], &src.octets());
            assert!(cnm.qntz_fb <= 63);
        }
    }
    let jumped = run(&c, 20, 1000, Stepping::Jump);
    assert_eq!((jumped.0, jumped.1, jumped.2), (rx, a, b));
}

/// A 2-leaf, 1-spine network at 10 Gb/s (1 us links) under `scheme`: an incast of `degree`
/// flows of `mice` bytes into a random host every 50 us, and two 300 KB elephants across
/// the spine.
fn scenario(
    scheme: &str,
    params: &str,
    degree: usize,
    mice: u64,
    seed: u64,
    every: bool,
) -> String {
    format!(
        r#"name = "mice-elephant property"
seed = {seed}
duration_us = 150
drain_us = 5000
step_every_cycle = {every}
scheme = "{scheme}"
[scheme_params]
{params}
[topology]
kind = "leaf_spine"
leaves = 2
spines = 1
hosts_per_leaf = 4
link_gbps = 10
link_delay_ns = 1000
[transport]
mss = 1000
window_bytes = 64000
rto_us = 1000
[workload.incast]
degree = {degree}
size_bytes = {mice}
period_us = 50
first_us = 1
[[workload.flows]]
src = 4
dst = 0
size_bytes = 300000
start_ns = 0
[[workload.flows]]
src = 5
dst = 1
size_bytes = 300000
start_ns = 0
"#
    )
}

fn run_text(text: String) -> t2sim::scenario::RunResults {
    let source = t2sim::scenario::ScenarioText {
        text,
        shown: "property".into(),
        base: ".".into(),
    };
    t2sim::scenario::ScenarioFile::from_text(&source, &[])
        .unwrap()
        .run()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// With hosts that honour PFC per class and the class set by the source (DSCP), nothing
    /// admitted in the lossless mice class is dropped; under either classification every
    /// frame is accounted for, every flow completes, and stepping every cycle and jumping
    /// give the same results. (With a byte counter in every switch the mice class can drop:
    /// `per_switch_byte_counters_can_lose_mice_frames_to_headroom`.)
    #[test]
    fn the_mice_class_never_drops_and_jumping_equals_stepping(
        seed in 1u64..1000,
        degree in 3usize..7,
        mice in 2_000u64..30_000,
        boundary in 10_000u64..100_000,
        by_dscp in 0u64..2,
    ) {
        let params = format!("mice_bytes = {boundary}\nclassify = {by_dscp}");
        let r = run_text(scenario("mice-elephant", &params, degree, mice, seed, false));
        if by_dscp == 1 {
            prop_assert_eq!(r.drops.0.get("chip.tm_pfc_headroom"), None, "{:?}", r.drops);
        }
        prop_assert_eq!(r.frames.unaccounted, 0);
        prop_assert_eq!(r.completed, r.flows);
        let stepped = run_text(scenario("mice-elephant", &params, degree, mice, seed, true));
        prop_assert!(stepped == r, "stepping every cycle differs from jumping");
    }
}

/// A byte counter in every switch does not classify a flow's frames alike at every hop. Here
/// (a case proptest found) the leaf pauses its mice queue toward the spine; the elephants'
/// later frames, elephant by the leaf's count, leave in the unpaused elephant queue ahead of
/// their own flow's earlier mice frames, so the spine, which has counted fewer of the flow's
/// bytes, takes them into its lossless class from a queue PFC does not hold, and that
/// class's headroom at the spine's port from the leaf overflows. The source's DSCP gives
/// every frame one class at every hop, and nothing drops.
#[test]
fn per_switch_byte_counters_can_lose_mice_frames_to_headroom() {
    let run = |classify: u8| {
        let params = format!("mice_bytes = 47667\nclassify = {classify}");
        run_text(scenario("mice-elephant", &params, 6, 24_996, 873, false))
    };
    let counted = run(0);
    // Five frames, all for headroom, all at the spine (switch2).
    assert_eq!(counted.drops.total(), 5);
    let spine = counted.drops_by_node.get("switch2");
    assert_eq!(
        spine.and_then(|d| d.0.get("chip.tm_pfc_headroom")),
        Some(&5)
    );
    assert_eq!((counted.completed, counted.flows), (20, 20));
    assert_eq!(counted.frames.unaccounted, 0);
    let marked = run(1);
    assert_eq!(marked.drops.total(), 0);
    assert_eq!((marked.completed, marked.flows), (20, 20));
}

/// The cycles in which port `port` of the traced switch starts sending a frame the chip made
/// itself (a PFC frame or a CNM): busy with no packet number.
fn chip_made_frames(d: &crate::common::waves::Dump, port: u16) -> Vec<Cycle> {
    use crate::common::waves::{at, numbers};
    let tx_pkt = format!("chip.port{port}.tx_pkt");
    numbers(d, &format!("chip.port{port}.tx_busy"))
        .into_iter()
        .filter(|&(c, busy)| busy == 1 && at(d, &tx_pkt, c) == "0")
        .map(|(c, _)| c)
        .collect()
}

#[test]
fn story_waves_show_mice_held_by_pfc_and_cnms_from_the_elephant_queue() {
    use crate::common::waves::{at, first, numbers, run_story};
    let story = run_story("mice_elephant_story");
    let r = &story.results;
    assert_eq!(r.drops.total(), 0);
    assert_eq!((r.flows, r.completed), (11, 11));
    assert_eq!(r.frames.unaccounted, 0);
    // Only the spine makes CNMs; it hears the hot leaf's XOFF and XON, and sends 34 frames
    // of its own.
    assert_eq!(r.recirculated, 11);
    let spine = &r.pause_frames["switch3"];
    assert_eq!((spine.pfc_sent, spine.pfc_received), (34, 2));

    let titles: Vec<&str> = story.groups.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles.len(), 5, "{titles:?}");
    assert!(titles[0].starts_with("1 mice queue") && titles[4].starts_with("5 CNMs"));
    assert_eq!(
        story.groups[1].1,
        ["chip.tm.pipe1.port136.q1.pfc_paused"],
        "the hold is its own group"
    );
    let traced: usize = story.groups.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(traced, 1 + 1 + 3 + 4 + 5);

    let d = &story.dump;
    let mice = "chip.tm.pipe1.port136.q1.depth_cells";
    let elephants = "chip.tm.pipe1.port136.q0.depth_cells";
    let hold = "chip.tm.pipe1.port136.q1.pfc_paused";
    // 1. Every flow's first 100 KB are mice, so the three 2 MB flows fill the mice queue
    //    from the start; it passes one ingress port's XOFF (139 cells) within 20 us, and
    //    the spine's first PFC frames go out toward the sources (2).
    assert_eq!(first(d, mice, |v| v > 139), Some((30045, 140)));
    assert_eq!(chip_made_frames(d, 264)[0], 54716);
    assert_eq!(chip_made_frames(d, 8)[0], 56014);
    // 2. When the 40 KB mice reach the hot leaf, it holds the spine's mice queue: the
    //    bit rises in the cycle its XOFF takes effect and falls when its XON does. The
    //    queue, whose senders the spine has paused too, stays at 294 cells throughout.
    assert_eq!(numbers(d, hold), [(0, 0), (200163, 1), (334198, 0)]);
    assert_eq!(at(d, mice, 200163), "294");
    assert!(numbers(d, mice)
        .iter()
        .all(|&(c, _)| !(200163..334198).contains(&c)));
    // ... and drains after it (the drain).
    assert_eq!(at(d, mice, 334611), "287");
    assert_eq!(numbers(d, mice).last(), Some(&(786454, 0)));
    // 3. Once the mice queue has drained, the elephants' own frames queue up toward the
    //    hot leaf, past Qeq (192 cells), to at most 1,225 cells.
    assert_eq!(first(d, elephants, |v| v > 192), Some((647252, 196)));
    assert_eq!(
        numbers(d, elephants).iter().map(|&(_, v)| v).max(),
        Some(1225)
    );
    // 4. The first CNM: a frame leaves pipe 1's egress sampled and congested, its copy is
    //    queued for pipe 0's recirculation port the next cycle, rewritten into a CNM by
    //    pipe 0's egress, sent round the port and counted as recirculated when it comes
    //    back into pipe 0's ingress, which routes it to the sampled frame's source.
    assert_eq!(at(d, "chip.pipe1.egress.exit", 911362), "to_mac");
    let recirc_q = "chip.tm.pipe0.recirc.q0.depth_cells";
    assert_eq!(first(d, recirc_q, |v| v > 0), Some((911363, 1)));
    assert_eq!(at(d, "chip.pipe0.egress.exit", 911924), "to_mac");
    assert_eq!(
        numbers(d, "chip.recirc.pipe0.tx_busy")[1..3],
        [(911925, 1), (911929, 0)]
    );
    assert_eq!(first(d, "chip.recirculated", |v| v > 0), Some((911929, 1)));
    // 5. It leaves toward its source on leaf 2; all eleven CNMs leave after the PFC
    //    frames (18 toward leaf 2, 16 toward leaf 0), 7 toward leaf 2 and 4 toward leaf 0.
    let (to_leaf2, to_leaf0) = (chip_made_frames(d, 264), chip_made_frames(d, 8));
    assert_eq!(at(d, "chip.pipe2.egress.exit", 912748), "to_mac");
    assert_eq!(to_leaf2[18], 912749);
    let cnms = |frames: &[Cycle]| frames.iter().filter(|&&c| c > 911929).count();
    assert_eq!((to_leaf2.len(), cnms(&to_leaf2)), (25, 7));
    assert_eq!((to_leaf0.len(), cnms(&to_leaf0)), (20, 4));
    assert_eq!(numbers(d, "chip.recirculated").last().unwrap().1, 11);
    // The elephant queue drains when the last elephant ends.
    assert_eq!(numbers(d, elephants).last(), Some(&(11452827, 0)));
    crate::common::waves::assert_gtkwave_shows_save_file(&story.dir, &story.vcd, &story.gtkw);
    std::fs::remove_dir_all(&story.dir).unwrap();
}

/// §6's end-to-end controls: TCP and DCTCP builds drop the congestion point (no CNM copies,
/// no feedback table, no QCN hosts); DCTCP's marks at K on the elephant queue.
#[test]
fn tcp_and_dctcp_builds_have_no_congestion_point_and_dctcp_marks_at_k() {
    use t2sim::schemes::mice_elephant::EndToEnd;
    let table_names = |c: &Config| -> Vec<String> {
        mice_elephant::program(c)
            .tables
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    for variant in [Variant::Isolation, Variant::PfcOnly] {
        let qcn_or_none = Config::defaults(variant);
        let tcp = Config {
            end_to_end: EndToEnd::Tcp,
            ..qcn_or_none
        };
        let dctcp = Config {
            end_to_end: EndToEnd::Dctcp { k_cells: 170 },
            ..qcn_or_none
        };
        assert_eq!(qcn_or_none.qcn(), variant == Variant::Isolation);
        assert!(!tcp.qcn() && !dctcp.qcn());
        for c in [&tcp, &dctcp] {
            let names = table_names(c);
            assert!(!names.iter().any(|n| n == "cp_feedback"), "{names:?}");
            assert_eq!(
                names.iter().any(|n| n == "ecn_mark_t"),
                matches!(c.end_to_end, EndToEnd::Dctcp { .. }),
                "{names:?}"
            );
        }
        assert_eq!(
            table_names(&qcn_or_none).iter().any(|n| n == "cp_feedback"),
            variant == Variant::Isolation
        );
    }
    // DCTCP marks an ECN-capable elephant packet that finds K cells, not one that finds K - 1.
    let c = Config {
        end_to_end: EndToEnd::Dctcp { k_cells: 170 },
        ..Config::defaults(Variant::PfcOnly)
    };
    let (mut interp, checked) = interpreter(&c);
    let mut bytes = crate::common::udp_frame(SOURCE, RECEIVER, 64, 1000);
    bytes[15] |= 0b10; // ECT(0) in the TOS byte's ECN bits
    bytes[24..26].copy_from_slice(&[0, 0]);
    let sum = t2_pipeline::headers::ipv4_header_checksum(&bytes[14..34]);
    bytes[24..26].copy_from_slice(&sum.to_be_bytes());
    for (q, ecn) in [(169, 0b10), (170, 0b11), (4000, 0b11)] {
        let mut phv = Phv::new(&checked.phv);
        phv.set(layout::PKT_LENGTH, bytes.len() as u32 + 4);
        phv.set(layout::EGRESS_PORT, PORT);
        phv.set(fields::EG_ENQ_QDEPTH, q);
        interp.parse(&bytes, &mut phv).unwrap();
        interp.run(Thread::Egress, &mut phv);
        assert_eq!(phv.get(layout::IPV4_ECN), ecn, "{q} cells");
    }
}
