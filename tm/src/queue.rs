//! One egress queue: its configuration, its FIFO of descriptors, its depth in cells, its
//! pause bit and its rate buckets.
//!
//! A port owns 16 to 128 of these, carved from its port group's 128 (see
//! [`crate::TrafficManager`]). The scheduler reads a queue's priority, DWRR weight and rate
//! buckets; admission reads its depth and static limit.

use crate::params::APP_POOLS;
use crate::shaper::RateBucket;
use crate::Descriptor;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use t2_clock::{Clock, Cycle};

/// Strict-priority levels per port (Tofino2: 8, level 7 served first).
pub const PRIORITIES: usize = 8;
/// Largest DWRR weight (Tofino2: 10-bit weights).
pub const MAX_WEIGHT: u16 = 1023;

/// How one queue is scheduled and limited. Unset rates mean no guarantee / no shaping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    /// Strict priority, 0..=7; a backlogged higher priority is always served first.
    pub priority: u8,
    /// DWRR weight among the queues of the same priority, 0..=1023. A queue of weight 0 is
    /// served only when no queue of its priority with a weight above 0 can send.
    pub weight: u16,
    /// Guaranteed rate in b/s of wire bytes: while the queue has had less, it is served
    /// before any queue that has had its guarantee, whatever the priorities.
    pub min_rate_bps: Option<u64>,
    /// Shaped (highest) rate in b/s of wire bytes: the queue never sends faster.
    pub max_rate_bps: Option<u64>,
    /// Wire bytes, beyond one frame, that the rate buckets let a rested queue send early.
    pub burst_bytes: u32,
    /// Static limit on the queue's cells; `None` takes the TM-wide `queue_limit_cells`.
    pub limit_cells: Option<u32>,
    /// PFC class (0..=7) whose pause frames received on the port hold this queue.
    pub pfc_priority: Option<u8>,
    /// Application pool (0..=3) the queue's cells are charged to, and whose free cells its
    /// dynamic threshold follows.
    pub app_pool: u8,
}

impl Default for QueueConfig {
    fn default() -> QueueConfig {
        QueueConfig {
            priority: 0,
            weight: 1,
            min_rate_bps: None,
            max_rate_bps: None,
            burst_bytes: 0,
            limit_cells: None,
            pfc_priority: None,
            app_pool: 0,
        }
    }
}

impl QueueConfig {
    /// Checks the values; the error says which one is wrong and why.
    pub fn validate(&self) -> Result<(), String> {
        if self.priority as usize >= PRIORITIES {
            return Err(format!(
                "priority {} is outside 0..={}",
                self.priority,
                PRIORITIES - 1
            ));
        }
        if self.weight > MAX_WEIGHT {
            return Err(format!(
                "weight {} is outside 0..={MAX_WEIGHT}",
                self.weight
            ));
        }
        if self.min_rate_bps == Some(0) {
            return Err("min_rate_bps 0 guarantees nothing; leave it unset".into());
        }
        if self.max_rate_bps == Some(0) {
            return Err("max_rate_bps 0 would never send".into());
        }
        if let (Some(min), Some(max)) = (self.min_rate_bps, self.max_rate_bps) {
            if min > max {
                return Err(format!("min_rate_bps {min} is above max_rate_bps {max}"));
            }
        }
        if self.pfc_priority.is_some_and(|c| c as usize >= PRIORITIES) {
            return Err(format!(
                "pfc_priority {} is outside 0..={}",
                self.pfc_priority.unwrap_or(0),
                PRIORITIES - 1
            ));
        }
        if self.app_pool as usize >= APP_POOLS {
            return Err(format!(
                "app_pool {} is outside 0..={}",
                self.app_pool,
                APP_POOLS - 1
            ));
        }
        if self.limit_cells == Some(0) {
            return Err("limit_cells 0 would drop every packet".into());
        }
        Ok(())
    }
}

/// A descriptor waiting in a queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    pub desc: Descriptor,
    pub cells: u32,
    /// Cycle it was admitted.
    pub enq_at: Cycle,
    /// Queue depth in cells just before it joined.
    pub enq_qdepth: u32,
    /// `enq_congest_stat` of that depth.
    pub enq_congest_stat: u8,
    /// Where its cells are charged: its application pool, or (`None`) its priority group's
    /// guaranteed minimum.
    pub pool: Option<u8>,
    /// First cycle it may be dequeued.
    pub ready_at: Cycle,
}

/// Counters and state of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueStats {
    pub depth_cells: u32,
    pub peak_cells: u32,
    pub queued_packets: usize,
    pub enqueued: u64,
    pub dequeued: u64,
    pub paused: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Queue {
    pub config: QueueConfig,
    /// Static limit in effect (the queue's own, else the TM-wide one).
    pub limit_cells: Option<u32>,
    pub fifo: VecDeque<Queued>,
    pub depth_cells: u32,
    pub peak_cells: u32,
    pub enqueued: u64,
    pub dequeued: u64,
    /// Set by AFC: the scheduler does not look at a paused queue.
    pub paused: bool,
    /// Held by a received PFC frame until this cycle (exclusive).
    pub pfc_paused_until: Cycle,
    pub min_rate: Option<RateBucket>,
    pub max_rate: Option<RateBucket>,
    /// DWRR credit in wire bytes.
    pub deficit: u64,
}

impl Queue {
    pub fn new(config: QueueConfig, default_limit: Option<u32>, clock: Clock) -> Queue {
        let bucket =
            |rate: Option<u64>| rate.map(|r| RateBucket::new(clock, r, config.burst_bytes));
        Queue {
            config,
            limit_cells: config.limit_cells.or(default_limit),
            fifo: VecDeque::new(),
            depth_cells: 0,
            peak_cells: 0,
            enqueued: 0,
            dequeued: 0,
            paused: false,
            pfc_paused_until: 0,
            min_rate: bucket(config.min_rate_bps),
            max_rate: bucket(config.max_rate_bps),
            deficit: 0,
        }
    }

    /// The first cycle at which the head could be sent as far as this queue alone is
    /// concerned (queue latency and shaper), or `None` when empty or paused.
    pub fn eligible_from(&self) -> Option<Cycle> {
        if self.paused {
            return None;
        }
        let head = self.fifo.front()?;
        let shaper = self.max_rate.map_or(0, |b| b.conforms_from());
        Some(head.ready_at.max(shaper).max(self.pfc_paused_until))
    }

    /// Whether the head may be sent in cycle `now`.
    pub fn eligible(&self, now: Cycle) -> bool {
        self.eligible_from().is_some_and(|t| t <= now)
    }

    /// Whether the queue has had less than its guaranteed rate.
    pub fn below_guarantee(&self, now: Cycle) -> bool {
        self.min_rate.is_some_and(|b| b.conforms(now))
    }

    pub fn stats(&self) -> QueueStats {
        QueueStats {
            depth_cells: self.depth_cells,
            peak_cells: self.peak_cells,
            queued_packets: self.fifo.len(),
            enqueued: self.enqueued,
            dequeued: self.dequeued,
            paused: self.paused,
        }
    }
}
