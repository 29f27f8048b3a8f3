//! The dynamic PFC threshold (the HPCC ns-3 artifact's `switch-mmu.cc`): a lossless group's
//! XOFF threshold is a fraction of its pool's free cells, recomputed at every enqueue and
//! dequeue; past it the group fills its headroom; XON once the headroom is empty and the
//! shared cells plus the resume offset are within the threshold again. Every figure below
//! is worked by hand from that rule.

use t2_clock::{Clock, Cycle, LineRate};
use t2_tm::{Descriptor, PfcEvent, QueueConfig, TmDrop, TmParams, TmPort, TrafficManager};

/// A 1,000-cell buffer, class 3 lossless with the dynamic threshold at 1/8 (the artifact's
/// `pfc_a_shift` of 3), 30 cells of headroom, the artifact's 18-cell resume offset.
fn params() -> TmParams {
    TmParams {
        buffer_cells: 1000,
        pfc_lossless_classes: 1 << 3,
        pfc_dynamic_per_mille: Some(125),
        pfc_headroom_cells: 30,
        ..TmParams::default()
    }
}

fn tm(params: TmParams) -> TrafficManager {
    let port = TmPort {
        queues: Some(vec![QueueConfig::default(); 16]),
        ..TmPort::new(0, LineRate::new(Clock::tofino2(), 100_000_000_000), 0, 2, 8)
    };
    TrafficManager::new(params, Clock::tofino2(), 1, &[port], 10).unwrap()
}

/// One 176-byte frame (one cell) of class `cos` into queue `qid`.
fn cell(pkt: u32, qid: u8, cos: u8) -> Descriptor {
    Descriptor {
        pkt,
        frame_bytes: 176,
        ingress_port: 0,
        egress_port: 0,
        qid,
        ingress_cos: cos,
    }
}

/// Enqueues one-cell lossless frames, the k-th (from 1) in cycle k, until one is dropped;
/// returns how many were admitted.
fn fill(t: &mut TrafficManager, first_pkt: u32) -> u32 {
    for k in 1.. {
        if let Err(e) = t.enqueue(k as Cycle, cell(first_pkt + k, 0, 3)) {
            assert_eq!(e, TmDrop::PfcHeadroom);
            return k - 1;
        }
    }
    unreachable!()
}

#[test]
fn xoff_comes_at_the_computed_fraction_of_the_free_buffer_to_the_cell() {
    let mut t = tm(params());
    assert_eq!(t.pfc_dynamic_threshold(0), Some(125));
    // After the n-th cell the group holds n shared cells against floor((1000 - n) / 8):
    // n = 110 leaves 110 < floor(890 / 8) = 111; n = 111 reaches floor(889 / 8) = 111.
    for k in 1..=110u32 {
        t.enqueue(k as Cycle, cell(k, 0, 3)).unwrap();
    }
    assert_eq!(
        t.pop_pfc_event(1_000),
        None,
        "110 cells are below the threshold"
    );
    t.enqueue(111, cell(111, 0, 3)).unwrap();
    assert_eq!(
        t.pop_pfc_event(1_000),
        Some(PfcEvent {
            at: 111,
            ingress_port: 0,
            class: 3,
            xoff: true
        })
    );
    assert_eq!(t.priority_group_headroom_cells(0, 3), 0);
    // The 112th cell finds 111 shared against floor(889 / 8) = 111: past it, into the
    // headroom, whose 30 cells take cells 112 to 141; the 142nd is dropped.
    let admitted = 111 + fill(&mut t, 111);
    assert_eq!(admitted, 141);
    assert_eq!(t.priority_group_headroom_cells(0, 3), 30);
    assert_eq!(t.priority_group_cells(0, 3), 141);
    assert_eq!(t.drops(TmDrop::PfcHeadroom), 1);
    assert_eq!(t.pop_pfc_event(1_000), None, "one XOFF per crossing");
}

#[test]
fn xon_comes_once_the_headroom_is_empty_and_the_offset_fits_under_the_threshold() {
    let mut t = tm(params());
    assert_eq!(fill(&mut t, 0), 141);
    assert!(t.pop_pfc_event(1_000).unwrap().xoff);
    // Dequeues drain the headroom count first: after 30 it is empty, 111 shared cells remain
    // and 111 + 18 > floor(889 / 8) = 111. After 30 + d, 111 - d + 18 <= floor((889 + d) / 8)
    // first holds at d = 16 (113 <= 113; d = 15 gives 114 > 113): the 46th dequeue.
    let mut at = Vec::new();
    let mut now = 200;
    while at.len() < 60 {
        if t.dequeue(0, now).is_some() {
            at.push(now);
            if let Some(e) = t.pop_pfc_event(now) {
                assert!(!e.xoff);
                assert_eq!(e.at, now);
                assert_eq!(at.len(), 46, "XON at the 46th dequeue");
                assert_eq!(t.priority_group_cells(0, 3), 141 - 46);
                assert_eq!(t.priority_group_headroom_cells(0, 3), 0);
                return;
            }
            if at.len() == 30 {
                assert_eq!(t.priority_group_headroom_cells(0, 3), 0);
            }
        }
        now = t.next_event(now).expect("frames are queued");
    }
    panic!("no XON after 60 dequeues");
}

#[test]
fn other_traffic_in_the_pool_lowers_the_threshold() {
    let mut t = tm(params());
    // 200 lossy cells of class 0 in queue 1 leave 800 free: n >= floor((800 - n) / 8) first
    // holds at n = 89 (floor(711 / 8) = 88; n = 88 gives floor(712 / 8) = 89).
    for k in 0..200 {
        t.enqueue(0, cell(10_000 + k, 1, 0)).unwrap();
    }
    assert_eq!(t.pfc_dynamic_threshold(0), Some(100));
    for k in 1..=88u32 {
        t.enqueue(k as Cycle, cell(k, 0, 3)).unwrap();
    }
    assert_eq!(t.pop_pfc_event(1_000), None);
    t.enqueue(89, cell(89, 0, 3)).unwrap();
    assert_eq!(
        t.pop_pfc_event(1_000).map(|e| (e.at, e.xoff)),
        Some((89, true))
    );
}

#[test]
fn the_static_thresholds_stay_as_they_were_without_the_dynamic_one() {
    let mut p = params();
    p.pfc_dynamic_per_mille = None;
    p.pfc_xoff_cells = 40;
    p.pfc_xon_cells = 20;
    let mut t = tm(p);
    // Static: XOFF when the group passes 40 cells, drops past 40 + 30.
    assert_eq!(fill(&mut t, 0), 70);
    assert_eq!(
        t.pop_pfc_event(1_000).map(|e| (e.at, e.xoff)),
        Some((41, true))
    );
    assert_eq!(t.priority_group_headroom_cells(0, 3), 0);
}

#[test]
fn a_dynamic_fraction_outside_its_range_is_named() {
    for bad in [0, 1001] {
        let p = TmParams {
            pfc_dynamic_per_mille: Some(bad),
            ..TmParams::default()
        };
        let (key, problem) = p.validate().unwrap_err();
        assert_eq!(key, "tm.pfc_dynamic_per_mille");
        assert!(problem.contains("outside 1..=1000"), "{problem}");
    }
}
