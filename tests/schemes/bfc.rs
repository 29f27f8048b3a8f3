//! BFC on the modelled Tofino2 (`src/schemes/bfc`, docs/schemes/bfc.md "Verification"), each
//! exact test stepping and jumping alike:
//! - a flow's queue assignment: the first empty unpaused data queue from a random start
//!   (the draws replayed from the program's generator), sticky while the flow has
//!   packets in the switch and for `sticky_ns` after, reassigned after that, paused queues
//!   skipped, the hashed queue when all 31 are blocked;
//! - a received pause bitmap becomes an AFC pause and resume of the queue it names at the
//!   exact cycle (two ingress passes and the AFC latency);
//! - on two switches, a pause from the cycle the crossing packet's counter goes up to the
//!   upstream queue pausing, and its resume from the last decrement, every cycle derived;
//! - the story waves (`scenarios/bfc_story.toml`) show those cycles;
//! - the two-switch run loses nothing and leaves every counter at 0.
//!
//! The proptests over random traffic are in `tests/schemes/bfc_properties.rs`.

use std::path::Path;
use t2_testbench::workload::FlowSpec;
use t2sim::scenario::ScenarioFile;
use t2sim::Chip;

fn reg(chip: &Chip, name: &str) -> Vec<(usize, u64)> {
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let i = p.registers.iter().position(|r| r.name == name).unwrap();
    (0..4)
        .flat_map(|pipe| {
            chip.ingress_registers(pipe).unwrap()[i]
                .iter()
                .enumerate()
                .filter(|&(_, v)| v != 0)
                .map(move |(k, v)| (pipe * 100000 + k, v))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The flows of `scenarios/bfc_two_switch.toml`.
fn two_switch_flows() -> Vec<FlowSpec> {
    crate::common::flows_at_start(&[(0, 3), (1, 3), (4, 3)], 2_000_000)
}

/// The two-switch run: every flow completes with nothing dropped or resent; hosts and the
/// left switch received pause frames, the left switch turned them into AFC (one resubmit per
/// AFC word); once the flows are done every flow-table size, pause counter and pause bit is
/// back to zero and every record was consumed.
#[test]
fn two_switches_pause_and_resume_and_lose_nothing() {
    let s = ScenarioFile::load(Path::new("scenarios/bfc_two_switch.toml")).unwrap();
    // The same network stepped by hand: AFC happened, and once the flows are done every
    // pause counter, pause bit and flow-table size is back to zero.
    let mut topo = s.build().unwrap();
    topo.add_flows(&two_switch_flows()).unwrap();
    topo.net.run_until(s.duration + s.drain);
    let left = topo.net.node::<Chip>(topo.chips[0]);
    assert!(left.counters().afc_requests > 0);
    assert_eq!(left.counters().resubmitted, left.counters().afc_requests);
    for &c in &topo.chips {
        let chip = topo.net.node::<Chip>(c);
        assert!(chip.counters().mirror_drops.keys().all(|k| matches!(
            k,
            t2sim::ChipDrop::Pipeline(_, t2_pipeline::DropReason::Consumed)
        )));
        for r in ["flow_size", "pause_ctr", "pause_bits"] {
            assert_eq!(reg(chip, r), [], "{r} not back to zero");
        }
    }
    assert!(!reg(topo.net.node::<Chip>(topo.chips[1]), "pauses_issued").is_empty());
    let r = s.run().unwrap();
    assert_eq!((r.flows, r.completed), (3, 3));
    assert_eq!(r.drops.total(), 0, "{:?}", r.drops);
    assert_eq!((r.timeouts, r.retransmitted_segments), (0, 0));
    // Every frame is somewhere: pause frames and dequeue records the switches make are sent,
    // those their programs consume are received.
    assert_eq!(r.frames.unaccounted, 0, "{:?}", r.frames);
    // Pause frames reached the senders and the left switch (which turned them into AFC).
    for node in ["host0", "host1", "host4", "switch0"] {
        assert!(
            r.pause_frames[node].received_as("bfc_received").unwrap() > 0,
            "{node}: {:?}",
            r.pause_frames
        );
    }
}

use crate::common::waves::{at, first, numbers, run_story};

use t2_clock::Cycle;
use t2_testbench::{Network, Probe, Stepping};
use t2sim::schemes::bfc::wire::BfcPause;

const G100: u64 = 100_000_000_000;

/// A chip running the BFC program (ports: pipe 0 MAC 0 channels 0 and 2), set up as a
/// scheme run sets it up.
fn bfc_chip() -> Chip {
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let mut c = crate::common::pipe0_chip(&[(0, 0), (0, 2)], vec![], p);
    let q = t2sim::schemes::bfc::port_queues();
    for port in 0..2 {
        c.set_port_queues(port, &q).unwrap();
    }
    c
}

fn bitmap(paused: &[usize]) -> Vec<u8> {
    let mut b = Vec::new();
    BfcPause::of(paused).write([2, 0, 0, 0, 0, 1], &mut b);
    b
}

/// A BFC frame naming queue 5 paused reaches port 0 at 101; one with nothing paused at 3001.
fn received_frames(stepping: Stepping) -> (Vec<Cycle>, t2sim::chip::ChipCounters) {
    let mut net = Network::new(stepping);
    let chip = net.add(bfc_chip());
    let upstream = net.add(Probe::new(
        G100,
        vec![(100, bitmap(&[5])), (3000, bitmap(&[]))],
    ));
    net.link(upstream, 0, chip, 0, 1).unwrap();
    let mut paused = Vec::new();
    let mut t = 0;
    while t < 6000 {
        t += 1;
        net.run_until(t);
        if net.node::<Chip>(chip).tm().queue_stats(0, 5).paused {
            paused.push(t);
        }
    }
    (paused, net.node::<Chip>(chip).counters().clone())
}

#[test]
fn a_received_bitmap_pauses_and_resumes_the_named_queue_through_afc() {
    let c = bfc_chip();
    let i = c.ingress_latency();
    let afc = c.params().tm.afc_latency_cycles as Cycle;
    // Each frame: a first ingress pass finds queue 5's bit changed and resubmits the frame
    // (it re-enters the next cycle); the second pass records the bit and leaves the deparser
    // with the AFC word, which takes effect afc_latency_cycles later.
    let (from, to) = (101 + i + 1 + i + afc, 3001 + i + 1 + i + afc);
    let (stepped, counters) = received_frames(Stepping::EveryCycle);
    assert_eq!(stepped, (from..to).collect::<Vec<_>>());
    assert_eq!((counters.resubmitted, counters.afc_requests), (2, 2));
    assert_eq!(counters.consumed_frames(), 2);
    assert_eq!(counters.dropped(), 2, "both frames consumed, nothing else");
    let (jumped, jumped_counters) = received_frames(Stepping::Jump);
    assert_eq!(jumped, stepped);
    assert_eq!(jumped_counters, counters);
}

// ---- exact pause and resume on two switches ----

use std::cell::RefCell;
use std::rc::Rc;
use t2_testbench::{Direction, Tap, TapFrame};
use t2sim::schemes::bfc::{PAUSE_BITS, PAUSE_COUNTERS};

/// Every BFC pause frame crossing a link: (cycle, node, port, leaving?, bitmap word 0).
type FrameLog = Rc<RefCell<Vec<(Cycle, usize, usize, bool, u32)>>>;

struct PauseFrames(FrameLog);

impl Tap for PauseFrames {
    fn frame(&mut self, f: &TapFrame<'_>) {
        if BfcPause::is_bfc(f.bytes) {
            let w = u32::from_be_bytes(f.bytes[16..20].try_into().unwrap());
            self.0
                .borrow_mut()
                .push((f.cycle, f.node.0, f.port, f.direction == Direction::Tx, w));
        }
    }
}

/// The placed BFC program's ingress: (parser cycles, each stage's cycles, the stage of each
/// table), from the compiler's report.
fn placed_ingress() -> (u64, Vec<u64>, std::collections::BTreeMap<String, usize>) {
    let params = t2sim::Tofino2Params::default();
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let checked = t2_pipeline::check::check_with(&p, &params.pipeline.phv).unwrap();
    let budget = t2_pipeline::place::Budget::tofino2();
    let placed = t2_pipeline::place::place(&checked, &budget);
    let r = t2_pipeline::report::Report::new(
        &checked,
        &placed,
        &budget,
        &params.pipeline,
        params.clock_hz,
    );
    let ing = r.latency.iter().find(|l| l.gress == "ingress").unwrap();
    let tables = r
        .tables
        .iter()
        .filter(|t| t.thread == "ingress")
        .map(|t| (t.name.clone(), t.stage))
        .collect();
    (
        ing.parser_cycles as u64,
        ing.stage_cycles.iter().map(|&c| c as u64).collect(),
        tables,
    )
}

/// The network and flows of `scenarios/bfc_story.toml` (its dump off): hosts 0 and 4 send
/// 200 frames each at line rate to host 3 of the two-switch dumbbell; host 0's flow crosses
/// the left switch (switch 0), host 4's enters the right switch (switch 1) directly.
fn pause_network() -> (ScenarioFile, Vec<FlowSpec>) {
    let mut s = ScenarioFile::load(Path::new("scenarios/bfc_story.toml")).unwrap();
    s.waves = None;
    (s, crate::common::flows_at_start(&[(0, 3), (4, 3)], 200_000))
}

/// What happens to the pause of the left switch's queue `uq` (the queue host 0's flow leaves
/// it by, so its uq at the right switch), cycle by cycle.
#[derive(Debug, PartialEq, Default)]
struct PauseTimeline {
    /// The left switch's queue toward the right one that host 0's flow took.
    uq: usize,
    /// Right switch, counter (port from the left switch, uq): first 0 -> 1, last 1 -> 0.
    counter_set: Cycle,
    bit_set: Cycle,
    counter_zero: Cycle,
    bit_clear: Cycle,
    /// Pause frames out of the right switch toward the left one carrying bit uq: the first,
    /// and the first with it clear after the counter fell to 0 (the resume).
    pause_tx: Cycle,
    previous_tx_clear: bool,
    resume_tx: Cycle,
    /// The first two frames toward the left switch after the counter fell to 0, with
    /// whether bit uq was set.
    after_zero: Vec<(Cycle, bool)>,
    pause_rx: Cycle,
    resume_rx: Cycle,
    /// Left switch, its queue uq toward the right switch.
    afc_paused: Cycle,
    afc_resumed: Cycle,
    /// Data frames received by the right switch from the left one, and the cycles its
    /// recirculation port (pipe 3) sent a record.
    data_rx: Vec<Cycle>,
    records: Vec<Cycle>,
    peak_counter: u64,
}

/// Data frames (not BFC frames) into node `node` port `port`.
struct DataIn(Rc<RefCell<Vec<Cycle>>>, usize, usize);

impl Tap for DataIn {
    fn frame(&mut self, f: &TapFrame<'_>) {
        if f.node.0 == self.1
            && f.port == self.2
            && f.direction == Direction::Rx
            && !BfcPause::is_bfc(f.bytes)
        {
            self.0.borrow_mut().push(f.cycle);
        }
    }
}

struct Both(PauseFrames, DataIn);

impl Tap for Both {
    fn frame(&mut self, f: &TapFrame<'_>) {
        self.0.frame(f);
        self.1.frame(f);
    }
}

/// With `stage_by_stage` the switches run each stage in its own cycle, so the register
/// cells read here change in the cycle of the stage that writes them; otherwise a packet's
/// writes show from the cycle it reaches stage 0 (what leaves the switches is the same).
fn pause_timeline(stepping: Stepping, stage_by_stage: bool) -> PauseTimeline {
    let (mut s, flows) = pause_network();
    s.topology.stepping = stepping;
    let mut topo = s.build().unwrap();
    topo.add_flows(&flows).unwrap();
    let (left, right) = (topo.chips[0], topo.chips[1]);
    for chip in [left, right] {
        topo.net
            .node_mut::<Chip>(chip)
            .run_stage_by_stage(stage_by_stage);
    }
    // Port 3 of each switch faces the other (device port 392: pipe 3).
    assert_eq!(topo.net.peer(right, 3), Some((left, 3)));
    let log: FrameLog = Rc::new(RefCell::new(Vec::new()));
    let data = Rc::new(RefCell::new(Vec::new()));
    topo.net.set_tap(Some(Box::new(Both(
        PauseFrames(log.clone()),
        DataIn(data.clone(), right.0, 3),
    ))));
    let prog = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let index = |name: &str| prog.registers.iter().position(|x| x.name == name).unwrap();
    let (ctr, bits) = (index(PAUSE_COUNTERS), index(PAUSE_BITS));
    let dev = topo.net.node::<Chip>(right).dev_port(3) as usize;
    let recirc = topo.net.node::<Chip>(right).recirculation_port(3).unwrap();
    let mut tl = PauseTimeline::default();
    let (mut last_ctr, mut last_bit, mut last_paused, mut records) = (0, false, false, 0);
    let mut uq = None;
    let mut t = 0;
    while t < 40_000 {
        t += 1;
        topo.net.run_until(t);
        // The left switch's queue toward the right one that host 0's flow took (its first
        // data frame is queued long before anything pauses).
        let left_tm = topo.net.node::<Chip>(left).tm();
        let taken = (0..t2sim::schemes::bfc::DATA_QUEUES as usize)
            .find(|&q| left_tm.queue_stats(3, q).enqueued > 0);
        let Some(q) = uq.or(taken) else {
            continue;
        };
        uq = Some(q);
        let r = topo.net.node::<Chip>(right);
        let regs = r.ingress_registers(dev >> 7).unwrap();
        let (c, b) = (
            regs[ctr].get((dev << 5) + q),
            regs[bits].get(dev) & 0x8000_0000 >> q != 0,
        );
        if tl.counter_zero == 0 {
            tl.peak_counter = tl.peak_counter.max(c);
        }
        match (last_ctr, c) {
            (0, 1) if tl.counter_set == 0 => tl.counter_set = t,
            (1, 0) if tl.counter_zero == 0 => tl.counter_zero = t,
            _ => {}
        }
        match (last_bit, b) {
            (false, true) if tl.bit_set == 0 => tl.bit_set = t,
            (true, false) if tl.bit_clear == 0 => tl.bit_clear = t,
            _ => {}
        }
        let n = r.port_frames(recirc).1;
        if n != records {
            tl.records.push(t);
            records = n;
        }
        let paused = topo.net.node::<Chip>(left).tm().queue_stats(3, q).paused;
        match (last_paused, paused) {
            (false, true) if tl.afc_paused == 0 => tl.afc_paused = t,
            (true, false) if tl.afc_resumed == 0 => tl.afc_resumed = t,
            _ => {}
        }
        (last_ctr, last_bit, last_paused) = (c, b, paused);
    }
    tl.uq = uq.expect("host 0's flow reached the left switch's TM");
    let frames = log.borrow();
    let bit = 0x8000_0000u32 >> tl.uq;
    let out = |tx: bool, node: usize| {
        frames
            .iter()
            .filter(move |f| f.3 == tx && f.1 == node && f.2 == 3)
            .map(move |f| (f.0, f.4 & bit != 0))
    };
    let sent: Vec<(Cycle, bool)> = out(true, right.0).collect();
    let k = sent.iter().position(|f| f.1).unwrap();
    (tl.pause_tx, tl.previous_tx_clear) = (sent[k].0, k > 0 && !sent[k - 1].1);
    tl.after_zero = sent
        .iter()
        .filter(|f| f.0 > tl.counter_zero)
        .take(2)
        .copied()
        .collect();
    tl.resume_tx = tl.after_zero[0].0;
    let got: Vec<(Cycle, bool)> = out(false, left.0).collect();
    tl.pause_rx = got.iter().find(|f| f.1).unwrap().0;
    tl.resume_rx = got.iter().find(|f| f.0 > tl.resume_tx && !f.1).unwrap().0;
    tl.data_rx = data.borrow().clone();
    tl
}

/// The pause of an upstream queue at the exact cycle its downstream queue passes Th, and its
/// resume on the last decrement, on two switches (`scenarios/bfc_story.toml`: hosts 0 and 4
/// send 200 frames each at line rate to host 3; host 0's flow leaves the left switch by its
/// queue `uq` (5, from its random start), which it carries at the right switch, coming in
/// on port 3, device port 392).
/// The cycles are the model's for this input (the story's waves show the same ones); each is
/// derived from the one before it:
///
/// - **Counter**: a data frame from the left switch whose ingress reads its queue above
///   Th(N_active = 2) = 106 cells, with a packet of its flow already in the switch, adds 1 to
///   `pause_ctr[(392 << 5) + 0]` in `count_pause`'s stage (15): it enters the parser in the
///   cycle its last bit arrives (8472, the tap's `data_rx`), and the counter holds the new
///   value 64 (parser) + 266 (stages 0-14) = 330 cycles later (8802).
/// - **Bit**: the same packet sets the bit of uq in `pause_bits[392]` in stage 18, the
///   cycles of stages 15-17 (27 + 2 + 27 = 56) later (8858).
/// - **Pause frame**: the next refresh (pipe 3's pktgen, every 1,500 cycles) makes its frame
///   at the next multiple of 1,500 (9000); it enters the ingress 8 cycles later (150 bytes
///   through the pktgen's 384 Gb/s MAC) and its last bit leaves port 3
///   `unloaded_latency(148 B)` = 992 cycles after that (10000): ingress 479, TM, egress 189,
///   serialization. The frame before it (1,500 cycles earlier) had the bit clear.
/// - **AFC**: the frame's last bit reaches the left switch 1,500 cycles (1 us) later
///   (11500); the first ingress pass finds the bit changed and resubmits (479 + 1), the
///   second records it and its deparser's AFC word (479) takes effect `afc_latency_cycles`
///   (100) later: queue uq of the left switch's port 3 is paused from 12559, 3,757 cycles
///   (2.5 us) after the crossing packet's counter went up. By then 44 of the flow's frames had
///   passed Th (the counter's peak).
/// - **Last decrement**: each dequeue record of a packet that paused comes back through the
///   recirculation port of pipe 3 and enters the parser the cycle after the port sends it;
///   it lowers the counter 330 cycles later in stage 15. The record sent at 25038 takes it
///   to 0 (25369) and clears the bit 56 cycles later in stage 18 (25425), setting the
///   deparser's pktgen trigger.
/// - **Resume**: two frames with the bit clear leave port 3. The periodic refresh made at
///   25500 reads the cleared word and leaves first (26500); the resume burst, made the cycle
///   after the record left the ingress deparser (25038 + 1 + 479 + 1 = 25519), would leave
///   unloaded at 26519 but finds the port sending the refresh and follows it one frame
///   time later (26520). The refresh's frame reaches the left switch at 28000, which
///   un-pauses its queue 479 + 1 + 479 + 100 cycles after that (29059), 3,690 cycles
///   (2.5 us) after the last decrement.
#[test]
fn a_pause_is_sent_when_th_is_crossed_and_lifted_on_the_last_decrement() {
    let i = 479;
    let (stage15, stages15to17) = (64 + 266, 27 + 2 + 27);
    let (ser_in, through) = (8, 992);
    let (link, afc) = (1500, 100);
    let (parser, stages, tables) = placed_ingress();
    assert_eq!(parser + stages[..15].iter().sum::<u64>(), stage15);
    assert_eq!(stages[15..18].iter().sum::<u64>(), stages15to17);
    assert_eq!(parser + stages.iter().sum::<u64>() + 64, i);
    assert_eq!((tables["count_pause_t"], tables["pause_bits_t"]), (15, 18));
    let (s, _) = pause_network();
    let chip = s.build().unwrap();
    let r = chip.net.node::<Chip>(chip.chips[1]);
    assert_eq!(r.ingress_latency(), i);
    assert_eq!(r.unloaded_latency(148, 3), through);
    assert_eq!(r.params().tm.afc_latency_cycles as Cycle, afc);

    let tl = pause_timeline(Stepping::EveryCycle, true);
    // Pause: the frame from the left switch whose last bit arrived at 8472.
    assert_eq!(tl.counter_set, 8802);
    assert!(tl.data_rx.contains(&(tl.counter_set - stage15)));
    assert_eq!(tl.bit_set, tl.counter_set + stages15to17);
    let m = tl.bit_set.div_ceil(1500) * 1500;
    assert_eq!(m, 9000);
    assert_eq!(tl.pause_tx, m + ser_in + through);
    assert!(tl.previous_tx_clear);
    assert_eq!(tl.pause_rx, tl.pause_tx + link);
    assert_eq!(tl.afc_paused, tl.pause_rx + i + 1 + i + afc);
    assert_eq!(
        (tl.pause_tx, tl.pause_rx, tl.afc_paused),
        (10000, 11500, 12559)
    );
    // 44 of the flow's frames passed Th before the pause took effect upstream.
    assert_eq!(tl.peak_counter, 44);
    // Resume: the record the recirculation port sent at 25038.
    assert_eq!(tl.counter_zero, 25369);
    assert!(tl.records.contains(&(tl.counter_zero - stage15 - 1)));
    assert_eq!(tl.bit_clear, tl.counter_zero + stages15to17);
    // The periodic refresh made at 25,500 reads the cleared word (stage 18 is 386 cycles
    // after its parser entry at 25,508) and leaves first; the resume burst the last record
    // triggered (made at 25,519, unloaded out at 26,519) finds port 3 still sending it and
    // follows one frame time later (168 wire bytes at 100 Gb/s: 20.16 cycles).
    let burst_made = tl.counter_zero - stage15 + i + 1;
    let refresh_made = tl.bit_clear.div_ceil(1500) * 1500;
    assert_eq!((refresh_made, burst_made), (25_500, 25_519));
    assert!(refresh_made + ser_in + parser + stages[..18].iter().sum::<u64>() > tl.bit_clear);
    let refresh_tx = refresh_made + ser_in + through;
    assert!(burst_made + ser_in + through < refresh_tx + 20);
    assert_eq!(
        tl.after_zero,
        [(refresh_tx, false), (refresh_tx + 20, false)]
    );
    assert_eq!(tl.resume_rx, tl.resume_tx + link);
    assert_eq!(tl.afc_resumed, tl.resume_rx + i + 1 + i + afc);
    assert_eq!(
        (tl.resume_tx, tl.resume_rx, tl.afc_resumed),
        (26500, 28000, 29059)
    );
    // The left switch's queue, from its random start (seed 1, switch 0: chip::stream_seed).
    assert_eq!(tl.uq, 5);
    assert_eq!(pause_timeline(Stepping::Jump, true), tl);
    // Whole passes at once: the same frames at the same cycles on every wire, the same
    // records; the counter's changes show from the packets' stage-0 cycles.
    for stepping in [Stepping::EveryCycle, Stepping::Jump] {
        let batched = pause_timeline(stepping, false);
        let wire = |t: &PauseTimeline| {
            (
                t.uq,
                t.pause_tx,
                t.previous_tx_clear,
                t.resume_tx,
                t.after_zero.clone(),
                t.pause_rx,
                t.resume_rx,
                t.afc_paused,
                t.afc_resumed,
                t.data_rx.clone(),
                t.records.clone(),
                t.peak_counter,
            )
        };
        assert_eq!(wire(&batched), wire(&tl));
        assert_eq!(batched.counter_set, tl.counter_set - stage15 + parser);
    }
}

// ---- queue assignment ----

/// A BFC chip (pipe 0: port 0 from an upstream probe, port 1 to a downstream probe; host
/// 10.0.0.2 behind port 1) set up as a scheme run sets it up, with port 1's data queues
/// shaped so that a queue holding a second frame stays busy long enough to be seen taken:
/// queues 1-30 at 1 Gb/s (12,792 cycles a 1,066-byte frame on the wire), queue 0 (the one
/// the downstream pauses) at 10 Gb/s (1,280).
fn assignment_chip() -> Chip {
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let dst = std::net::Ipv4Addr::new(10, 0, 0, 2);
    let mut c = crate::common::pipe0_chip(&[(0, 0), (0, 2)], vec![(dst, 1)], p);
    let mut q = t2sim::schemes::bfc::port_queues();
    c.set_port_queues(0, &q).unwrap();
    for data in &mut q[..t2sim::schemes::bfc::DATA_QUEUES as usize] {
        data.max_rate_bps = Some(1_000_000_000);
    }
    q[0].max_rate_bps = Some(10_000_000_000);
    c.set_port_queues(1, &q).unwrap();
    t2sim::schemes::bfc::setup_chip(&mut c, 1500).unwrap();
    c
}

/// A 1,042-byte UDP frame (1,000 bytes of payload) of flow `src` to 10.0.0.2.
fn flow_frame(src: u8) -> Vec<u8> {
    crate::common::udp_frame(
        std::net::Ipv4Addr::new(10, 1, 0, src),
        std::net::Ipv4Addr::new(10, 0, 0, 2),
        64,
        1000,
    )
}

/// Flows (by source) A = 1, B = 2, C = 3, D_k = 10 + k (k = 1..=30), E = 50.
const ASSIGN_E: u8 = 51;

/// The upstream script: (cycle the last bit leaves, flow). Frames of one flow or of
/// consecutive flows at least 130 cycles apart (128 at 100 Gb/s).
fn assignment_script() -> Vec<(Cycle, u8)> {
    let mut s = vec![
        (100, 1),
        (230, 1),
        (1000, 2),
        (1130, 2),
        (1400, 1),
        // B again once its frames and records are gone, within the sticky window.
        (17_000, 2),
        // B again after more than 6 us idle with nothing in the switch.
        (40_000, 2),
        // C after queue 0 was paused by the downstream (frame at 42,000).
        (46_000, 3),
    ];
    // 30 flows of 3 frames, each flow 600 cycles after the one before: each finds the
    // queues of those before it busy (held by the shaper) and takes the next.
    for k in 1..=30u64 {
        for j in 0..3 {
            s.push((48_000 + 600 * (k - 1) + 130 * j, 10 + k as u8));
        }
    }
    s.push((48_000 + 600 * 30, ASSIGN_E));
    s
}

/// One frame's enqueue into port 1: its cycle, its queue, and the data queues that were
/// busy (holding a frame) or paused in the cycle before, as a bitmap with queue q at bit q.
#[derive(Debug, PartialEq, Clone, Copy)]
struct Enqueue {
    cycle: Cycle,
    queue: usize,
    blocked_before: u32,
}

/// The enqueues into port 1's data queues, in order (one per frame of the script), the
/// flow-table index of flow E (the new entry of `flow_last` once its frame has passed) and
/// the `flow_queue` array at the end.
fn assignments(stepping: Stepping) -> (Vec<Enqueue>, usize, Vec<u64>) {
    let mut net = Network::new(stepping);
    let chip = net.add(assignment_chip());
    let script = assignment_script();
    let up = net.add(Probe::new(
        G100,
        script.iter().map(|&(t, f)| (t, flow_frame(f))).collect(),
    ));
    let down = net.add(Probe::new(G100, vec![(42_000, bitmap(&[0]))]));
    net.link(up, 0, chip, 0, 1).unwrap();
    net.link(chip, 1, down, 0, 1).unwrap();
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let last = p
        .registers
        .iter()
        .position(|r| r.name == "flow_last")
        .unwrap();
    let used = |net: &Network| -> Vec<usize> {
        net.node::<Chip>(chip).ingress_registers(0).unwrap()[last]
            .iter()
            .enumerate()
            .filter(|&(_, v)| v != 0)
            .map(|(k, _)| k)
            .collect()
    };
    let mut enqueued = vec![0u64; 32];
    let mut order = Vec::new();
    let e_sent = script.last().unwrap().0;
    let mut before_e = Vec::new();
    let mut e_index = None;
    let mut blocked = 0u32;
    let mut t = 0;
    while t < e_sent + 3000 {
        t += 1;
        net.run_until(t);
        let c = net.node::<Chip>(chip);
        let blocked_before = blocked;
        blocked = (0..t2sim::schemes::bfc::DATA_QUEUES as usize)
            .filter(|&q| {
                let s = c.tm().queue_stats(1, q);
                s.depth_cells > 0 || s.paused
            })
            .map(|q| 1 << q)
            .sum();
        for (q, n) in enqueued.iter_mut().enumerate() {
            let now = c.tm().queue_stats(1, q).enqueued;
            if now != *n {
                assert_eq!(now, *n + 1, "one enqueue per queue per cycle");
                if q != t2sim::schemes::bfc::CONTROL_QUEUE as usize {
                    order.push(Enqueue {
                        cycle: t,
                        queue: q,
                        blocked_before,
                    });
                }
                *n = now;
            }
        }
        if t == e_sent {
            before_e = used(&net);
        }
        if t == e_sent + 2000 {
            let after = used(&net);
            let new: Vec<usize> = after
                .into_iter()
                .filter(|k| !before_e.contains(k))
                .collect();
            assert_eq!(new.len(), 1, "flow E has an entry of its own");
            e_index = Some(new[0]);
        }
    }
    let queues = net.node::<Chip>(chip).ingress_registers(0).unwrap()[p
        .registers
        .iter()
        .position(|r| r.name == "flow_queue")
        .unwrap()]
    .to_vec();
    (order, e_index.unwrap(), queues)
}

/// Whether each frame of `assignment_script` finds its flow's entry free for a new queue
/// (never used, or nothing of the flow in the switch and idle more than `sticky_ns`), in
/// script order; the others keep their flow's queue.
fn assignment_is_new() -> Vec<bool> {
    // A: new, sticky, sticky (its second frame still inside); B: new, sticky; B at 17,000:
    // sticky (its last record under 6 us before); B at 40,000: new; C: new.
    let mut new = vec![true, false, true, false, false, false, true, true];
    for _ in 1..=30 {
        new.extend([true, false, false]);
    }
    new.push(true);
    new
}

/// The first data queue not in `blocked` (bit q = queue q) scanning from `start` as the
/// program's `first_free` does: s, s+1, ..., 30, 0, ..., s-1, the start value 31 as 0.
fn first_free_from(start: u32, blocked: u32) -> Option<usize> {
    let data = t2sim::schemes::bfc::DATA_QUEUES as u32;
    (0..data)
        .map(|k| ((start % data + k) % data) as usize)
        .find(|&q| blocked & 1 << q == 0)
}

/// A flow's queue at one switch (`assignment_chip`, `assignment_script`), read from the TM's
/// enqueues into port 1 and the `flow_queue` register. Every frame reaches the TM 481 cycles
/// after the probe sends it (1 cycle of link, 479 of ingress, 1 into the TM).
///
/// A frame whose flow gets a new queue takes the first data queue neither busy nor paused,
/// scanning from the random start it drew: every data frame draws one number in table
/// `port_key` (ingress of pipe 0, seeded 0: `t2_pipeline::run::exec::random_draws`), and the
/// start is its low 5 bits. The others keep their flow's queue. So:
///
/// - A (2 frames at 100 and 230) finds the port idle; B (1000, 1130) finds A's queue busy.
/// - A's third frame (1400) has A's second still in the switch: it keeps its busy queue.
/// - B again at 17,000: its frames and records are gone (size 0) and its queue is free, but
///   B was last seen (its second frame's record) less than `sticky_ns` (6 us) before: it
///   keeps its queue.
/// - B again at 40,000, idle more than 6 us with nothing in the switch: reassigned.
/// - The downstream pauses queue 0 at 42,000 (a BFC frame naming it; applied by AFC and
///   recorded in `queue_paused`). C's first frame (46,000) skips it.
/// - D_1..D_30 (3 frames each, 600 cycles apart): each finds the queues of those before it
///   held by the shaper and takes a free one; the 30 take the 30 unpaused data queues.
/// - E (66,000) finds every data queue busy or paused: its queue is the hashed one,
///   `(flow index & 31) mod 31`, the flow index being the CRC-32 of its 5-tuple taken mod
///   the table's 65,536 entries: 56,582 & 31 = 6, so queue 6.
#[test]
fn a_flow_gets_a_free_queue_from_a_random_start_keeps_it_while_sticky_and_else_a_hashed_one() {
    let (order, e, flow_queue) = assignments(Stepping::EveryCycle);
    let script = assignment_script();
    assert_eq!(order.len(), script.len(), "one enqueue per frame");
    for (frame, enq) in script.iter().zip(&order) {
        assert_eq!(enq.cycle, frame.0 + 481, "{frame:?}: {enq:?}");
    }
    let p = t2sim::schemes::bfc::program(&t2sim::schemes::bfc::Config::default_100g());
    let draws = p
        .tables
        .iter()
        .position(|t| t.name == "port_key_t")
        .unwrap();
    let starts: Vec<u32> = t2_pipeline::run::exec::random_draws(0, draws)
        .take(script.len())
        .map(|v| v & 31)
        .collect();
    let mut flow_queues = std::collections::BTreeMap::new();
    let mut expected = Vec::new();
    for (k, (&(_, flow), &new)) in script.iter().zip(&assignment_is_new()).enumerate() {
        let q = if new {
            first_free_from(starts[k], order[k].blocked_before).unwrap_or(6)
        } else {
            flow_queues[&flow]
        };
        flow_queues.insert(flow, q);
        expected.push(q);
    }
    let queues: Vec<usize> = order.iter().map(|e| e.queue).collect();
    assert_eq!(queues, expected);
    // The queues this run drew, pinned so that a change of generator or scan shows.
    assert_eq!(&queues[..8], &[16, 16, 28, 28, 16, 28, 10, 22]);
    // A's third frame: its queue held A's second, and A kept it.
    assert_ne!(order[4].blocked_before & 1 << queues[4], 0);
    // B at 17,000: its own queue empty (A's, at 1 Gb/s, still drains); B kept its queue.
    assert_eq!(order[5].blocked_before, 1 << queues[0]);
    assert_eq!(queues[5], queues[3]);
    // C: queue 0 paused (and nothing else busy), so C is elsewhere.
    assert_eq!(order[7].blocked_before, 1);
    assert_ne!(queues[7], 0);
    // D_1..D_30 took the 30 unpaused data queues, one each.
    let mut d: Vec<usize> = (0..30).map(|k| queues[8 + 3 * k]).collect();
    d.sort_unstable();
    assert_eq!(d, (1..=30).collect::<Vec<_>>());
    // E: all 31 data queues busy or paused: the hashed queue.
    assert_eq!(order.last().unwrap().blocked_before, (1 << 31) - 1);
    assert_eq!(e, 56_582);
    assert_eq!((e & 31) % 31, 6);
    assert_eq!(flow_queue[e], 6);
    assert_eq!(*queues.last().unwrap(), 6);
    assert_eq!(assignments(Stepping::Jump), (order, e, flow_queue));
}

/// The story scenario's waves (docs/schemes/bfc.md, "Waves"), on the right switch: the same
/// run and cycles as `a_pause_is_sent_when_th_is_crossed_and_lifted_on_the_last_decrement`,
/// seen in the dump, with the frames from the left switch stopping while its AFC pause holds.
#[test]
fn story_waves_show_a_pause_from_th_to_the_upstream_and_its_resume() {
    let story = run_story("bfc_story");
    let r = &story.results;
    assert_eq!(r.drops.total(), 0);
    assert_eq!((r.flows, r.completed), (2, 2));

    // The save file tells the story in the order the scenario file gives it.
    let titles: Vec<&str> = story.groups.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles.len(), 6, "{titles:?}");
    assert!(titles[0].starts_with("1 queues toward host 3"));
    assert!(titles[5].starts_with("6 host 4's flow"));
    assert_eq!(
        story.groups[1].1,
        [
            "chip.pipe3.reg.pause_ctr.sum[63:0]",
            "chip.pipe3.reg.pause_bits.sum[63:0]"
        ]
    );
    let traced: usize = story.groups.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(traced, 3 + 2 + 2 + 1 + 2 + 2);

    // 1. Host 0's flow (queue 28 toward host 3, from its random start) passes Th = 106 cells
    //    (two busy queues) and peaks at 280.
    let d = &story.dump;
    let q3 = "chip.tm.pipe0.port8.q28.depth_cells";
    assert_eq!(first(d, q3, |v| v > 106), Some((8427, 112)));
    assert_eq!(numbers(d, q3).iter().map(|&(_, v)| v).max(), Some(280));

    // 2. Its pause counter goes up at 8802 and its bit (uq 5, the left switch's queue: bit
    //    26 of the word, 0x8000_0000 >> 5) at 8858;
    //    the counter is back at 0 at 25369 and the bit clears at 25425.
    let (ctr, bits) = (
        "chip.pipe3.reg.pause_ctr.sum",
        "chip.pipe3.reg.pause_bits.sum",
    );
    assert_eq!(first(d, ctr, |v| v > 0), Some((8802, 1)));
    assert_eq!(numbers(d, bits)[..3], [(0, 0), (8858, 1 << 26), (25425, 0)]);
    assert_eq!(
        numbers(d, ctr)
            .into_iter()
            .find(|&(c, v)| c > 8802 && v == 0),
        Some((25369, 0))
    );
    assert_eq!(numbers(d, ctr).iter().map(|&(_, v)| v).max(), Some(44));

    // 3. The refresh made at 9000 is queued in the control queue (9000 + 8 + 479 + 1) and
    //    is on the wire toward the left switch from 9979 to 10000 (148 + 20 bytes).
    assert_eq!(at(d, "chip.tm.pipe3.port392.q31.depth_cells", 9488), "1");
    let tx = numbers(d, "chip.port392.tx_pkt");
    let k = tx.iter().position(|&(c, _)| c == 9979).unwrap();
    assert!(tx[k].1 > 0);
    assert_eq!(tx[k + 1], (10000, 0));

    // 4. The left switch's queue is paused from 12559: the last data frame it had dequeued
    //    arrives at 14329; then only its refresh frames (every 1,500 cycles, arriving at
    //    1,000 mod 1,500) until it is resumed at 29059 and its next frame arrives at 30880
    //    (dequeue, egress and serialization, 1,500 of link).
    let arrivals: Vec<Cycle> = numbers(d, "chip.port392.rx_pkt")
        .into_iter()
        .filter(|&(_, v)| v > 0)
        .map(|(c, _)| c)
        .collect();
    let data: Vec<Cycle> = arrivals
        .iter()
        .copied()
        .filter(|&c| c % 1500 != 1000)
        .collect();
    let gap = data.windows(2).max_by_key(|w| w[1] - w[0]).unwrap();
    assert_eq!(gap, [14329, 30880]);

    // 5. The record that takes the counter to 0 leaves pipe 3's recirculation port at 25038
    //    (80 + 20 bytes at 384 Gb/s: busy 3 cycles) and is recirculation number 301.
    let busy = numbers(d, "chip.recirc.pipe3.tx_busy");
    assert!(busy.contains(&(25035, 1)) && busy.contains(&(25038, 0)));
    assert!(numbers(d, "chip.recirculated").contains(&(25038, 301)));

    // 6. Host 4's flow (NIC queue 1: bit 30) is paused at its own port from 8508 to 24355.
    assert_eq!(
        numbers(d, "chip.pipe1.reg.pause_bits.sum")[..3],
        [(0, 0), (8508, 1 << 30), (24355, 0)]
    );
    crate::common::waves::assert_gtkwave_shows_save_file(&story.dir, &story.vcd, &story.gtkw);
    std::fs::remove_dir_all(&story.dir).unwrap();
}
