//! Application pools, priority-group minimums and the congestion status the TM hands the
//! egress, with exact cell counts.

use t2_clock::{Clock, LineRate};
use t2_tm::{Descriptor, QueueConfig, TmDrop, TmParams, TmPort, TrafficManager};

/// One 100G port on pipe 0 whose queue `q` is in pool `pools[q]` (16 queues, priority
/// `prio[q]`, default otherwise).
fn one_port(params: TmParams, pools: [u8; 16], prio: [u8; 16]) -> Result<TrafficManager, String> {
    let line = LineRate::new(Clock::tofino2(), 100_000_000_000);
    let queues = (0..16)
        .map(|q| QueueConfig {
            app_pool: pools[q],
            priority: prio[q],
            ..QueueConfig::default()
        })
        .collect();
    let port = TmPort {
        queues: Some(queues),
        ..TmPort::new(0, line, 0, 2, 8)
    };
    TrafficManager::new(params, Clock::tofino2(), 1, &[port], 10).map_err(|e| e.to_string())
}

fn desc(pkt: u32, qid: u8, cos: u8, frame_bytes: u32) -> Descriptor {
    Descriptor {
        pkt,
        frame_bytes,
        ingress_port: 0,
        egress_port: 0,
        qid,
        ingress_cos: cos,
    }
}

/// Queue 1 in pool 1, the rest in pool 0.
const Q1_IN_POOL_1: [u8; 16] = [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// Enqueues `frame_bytes` frames to queue `qid` at cycle 0 until one is dropped; returns
/// how many were admitted and why the next was not.
fn fill(t: &mut TrafficManager, qid: u8, cos: u8, frame_bytes: u32) -> (u32, TmDrop) {
    for k in 0.. {
        if let Err(reason) = t.enqueue(0, desc(k, qid, cos, frame_bytes)) {
            return (k, reason);
        }
    }
    unreachable!()
}

#[test]
fn the_dynamic_threshold_is_alpha_times_the_free_cells_of_the_queues_pool() {
    // Pool 0 has 1000 cells, pool 1 200. 64-byte frames are one cell. With alpha = 1 a
    // queue is admitted while depth < free cells of its pool: at depth 499 the pool has 501
    // free (admitted), at depth 500 it has 500 (dropped), so exactly 500 frames get in.
    let params = TmParams {
        app_pool_cells: Some([1000, 200, 0, 0]),
        dynamic_threshold_alpha_percent: Some(100),
        ..TmParams::default()
    };
    let mut t = one_port(params, Q1_IN_POOL_1, [0; 16]).unwrap();
    assert_eq!(fill(&mut t, 0, 0, 64), (500, TmDrop::DynamicThreshold));
    assert_eq!(t.pool_stats(0).used_cells, 500);
    // Another queue of pool 0 starts empty: threshold 500 free, so it gets 250 (depth 250
    // with 250 free).
    assert_eq!(fill(&mut t, 2, 0, 64), (250, TmDrop::DynamicThreshold));
    // Pool 1 is untouched by pool 0's 750 cells: 100 of its 200.
    assert_eq!(fill(&mut t, 1, 0, 64), (100, TmDrop::DynamicThreshold));
    assert_eq!(
        (t.pool_stats(0).used_cells, t.pool_stats(0).peak_cells),
        (750, 750)
    );
    assert_eq!(t.pool_stats(1).used_cells, 100);
    assert_eq!(t.drops(TmDrop::DynamicThreshold), 3);
    assert_eq!(t.free_cells(), 393_216 - 850);
    // alpha = 1/2: admitted while 2 x depth < free, i.e. depth < 1000 / 3: 334 frames.
    let mut t = one_port(
        TmParams {
            dynamic_threshold_alpha_percent: Some(50),
            ..params
        },
        Q1_IN_POOL_1,
        [0; 16],
    )
    .unwrap();
    assert_eq!(fill(&mut t, 0, 0, 64), (334, TmDrop::DynamicThreshold));
}

#[test]
fn filling_pool_0_never_drops_pool_1_traffic() {
    // No dynamic threshold: pools are the only limit. 1480-byte frames are 9 cells; 33 fit
    // in 300 cells (297) and the 34th does not.
    let params = TmParams {
        app_pool_cells: Some([300, 300, 0, 0]),
        dynamic_threshold_alpha_percent: None,
        ..TmParams::default()
    };
    let mut t = one_port(params, Q1_IN_POOL_1, [0; 16]).unwrap();
    assert_eq!(fill(&mut t, 0, 0, 1480), (33, TmDrop::PoolFull));
    assert_eq!(fill(&mut t, 2, 0, 1480), (0, TmDrop::PoolFull));
    assert_eq!(fill(&mut t, 1, 0, 1480), (33, TmDrop::PoolFull));
    assert_eq!(t.pool_stats(0).used_cells, 297);
    assert_eq!(t.pool_stats(1).used_cells, 297);
    assert_eq!(t.drops(TmDrop::PoolFull), 3);
    assert_eq!(t.drops(TmDrop::BufferFull), 0);
    // The buffer itself still has room: the pools, not the buffer, refused.
    assert_eq!(t.free_cells(), 393_216 - 594);
}

#[test]
fn a_priority_groups_minimum_admits_past_a_full_pool() {
    // Mice/Elephant isolation reserves 48 KB per ingress port for the mice class: 48,000 B
    // is 273 cells (272.7 rounded up). Class 1 is the mice here; pool 0 has 100 cells.
    let mut ppg_min_cells = [0; 8];
    ppg_min_cells[1] = 273;
    let params = TmParams {
        app_pool_cells: Some([100, 0, 0, 0]),
        dynamic_threshold_alpha_percent: None,
        ppg_min_cells,
        ..TmParams::default()
    };
    let mut t = one_port(params, [0; 16], [0; 16]).unwrap();
    // Elephants (class 0) fill the pool: 11 frames of 9 cells.
    assert_eq!(fill(&mut t, 0, 0, 1480), (11, TmDrop::PoolFull));
    // Mice still get their 273 cells: 30 frames (270); the 31st would need the pool.
    assert_eq!(fill(&mut t, 0, 1, 1480), (30, TmDrop::PoolFull));
    assert_eq!(t.priority_group_min_cells(0, 1), 270);
    assert_eq!(t.priority_group_cells(0, 1), 270);
    assert_eq!(t.pool_stats(0).used_cells, 99);
    assert_eq!(t.queue_stats(0, 0).depth_cells, 369);
    // Dequeued mice give their cells back to the minimum, elephants to the pool.
    let mut dequeued = 0;
    let mut now = 0;
    while let Some(next) = t.next_event(now) {
        now = next;
        dequeued += t.dequeue(0, now).is_some() as u32;
    }
    assert_eq!(dequeued, 41);
    assert_eq!(t.priority_group_min_cells(0, 1), 0);
    assert_eq!(
        (t.pool_stats(0).used_cells, t.pool_stats(0).peak_cells),
        (0, 99)
    );
    // Without explicit pools, pool 0 is the buffer less every port's minimums (1 port).
    let t = one_port(
        TmParams {
            app_pool_cells: None,
            ..params
        },
        [0; 16],
        [0; 16],
    )
    .unwrap();
    assert_eq!(t.pool_stats(0).size_cells, 393_216 - 273);
    assert_eq!(t.pool_stats(1).size_cells, 0);
}

#[test]
fn the_static_queue_limit_caps_the_minimum_too() {
    // A 20-cell queue limit: the group's 273-cell minimum does not lift it. Two 9-cell
    // frames (18) get in, both charged to the minimum; the third (27) is a QueueLimit drop.
    let mut ppg_min_cells = [0; 8];
    ppg_min_cells[1] = 273;
    let params = TmParams {
        queue_limit_cells: Some(20),
        ppg_min_cells,
        ..TmParams::default()
    };
    let mut t = one_port(params, [0; 16], [0; 16]).unwrap();
    assert_eq!(fill(&mut t, 0, 1, 1480), (2, TmDrop::QueueLimit));
    assert_eq!(t.priority_group_min_cells(0, 1), 18);
    assert_eq!(t.pool_stats(0).used_cells, 0);
}

#[test]
fn congestion_status_of_queue_and_pools_reaches_the_egress() {
    // Queue thresholds 10/20/30 cells; pools 60 and 20 cells, thresholds 50/75/90 %.
    let params = TmParams {
        app_pool_cells: Some([60, 20, 0, 0]),
        dynamic_threshold_alpha_percent: None,
        queue_congest_cells: [10, 20, 30],
        ..TmParams::default()
    };
    // Queue 0 (pool 0) at priority 7 drains before queue 1 (pool 1).
    let mut prio = [0; 16];
    prio[0] = 7;
    let mut t = one_port(params, Q1_IN_POOL_1, prio).unwrap();
    for k in 0..5 {
        t.enqueue(0, desc(k, 0, 0, 1480)).unwrap(); // depths before: 0, 9, 18, 27, 36
    }
    for k in 5..7 {
        t.enqueue(0, desc(k, 1, 0, 1480)).unwrap(); // pool 1: 18 of 20 cells, 90 %
    }
    // Pool 0 at 45 of 60 cells is 75 %: level 2; pool 1 level 3 in bits 2-3.
    assert_eq!(t.app_pool_congest_stat(), 2 | 3 << 2);
    let mut got = Vec::new();
    let mut now = 0;
    while got.len() < 5 {
        now = t.next_event(now).unwrap();
        if let Some(d) = t.dequeue(0, now) {
            got.push((
                d.enq_congest_stat,
                d.deq_qdepth,
                d.deq_congest_stat,
                d.app_pool_congest_stat,
            ));
        }
    }
    // After each dequeue pool 0 holds 36, 27, 18, 9, 0 of 60 cells: 60 % (level 1), then 0.
    assert_eq!(
        got,
        vec![
            (0, 36, 3, 1 | 12),
            (0, 27, 2, 12),
            (1, 18, 1, 12),
            (2, 9, 0, 12),
            (3, 0, 0, 12),
        ]
    );
}

#[test]
fn bad_pool_configurations_name_the_key() {
    let e = TmParams {
        app_pool_cells: Some([393_216, 1, 0, 0]),
        ..TmParams::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.0, "tm.app_pool_cells");
    assert!(e.1.contains("393217") && e.1.contains("393216"), "{}", e.1);
    let mut bad = [0; 16];
    bad[3] = 4;
    let e = one_port(TmParams::default(), bad, [0; 16]).unwrap_err();
    assert_eq!(e, "port 0 queue 3: app_pool 4 is outside 0..=3");
    // The default pools: pool 1 is empty, so a queue in it could never take lossy traffic.
    let e = one_port(TmParams::default(), Q1_IN_POOL_1, [0; 16]).unwrap_err();
    assert_eq!(
        e,
        "port 0 queue 1: app_pool 1 has no cells (tm.app_pool_cells)"
    );
    let mut ppg_min_cells = [0; 8];
    ppg_min_cells[0] = 200;
    let e = one_port(
        TmParams {
            app_pool_cells: Some([393_100, 0, 0, 0]),
            ppg_min_cells,
            ..TmParams::default()
        },
        [0; 16],
        [0; 16],
    )
    .unwrap_err();
    assert!(e.starts_with("tm.ppg_min_cells: "), "{e}");
    assert!(e.contains("393300"), "{e}");
    let e = TmParams {
        queue_congest_cells: [10, 10, 30],
        ..TmParams::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.0, "tm.queue_congest_cells");
    let e = TmParams {
        app_pool_congest_percent: [50, 75, 101],
        ..TmParams::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.0, "tm.app_pool_congest_percent");
}
