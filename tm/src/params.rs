//! Traffic-manager parameters with their Tofino2 defaults. Sources are in `docs/tofino2.md`.

use serde::{Deserialize, Serialize};

/// Application pools the egress queues share the buffer in (Tofino2: 4).
pub const APP_POOLS: usize = 4;
/// Ingress classes (`ingress_cos`), one priority group per ingress port and class.
pub const CLASSES: usize = 8;

/// Everything the TM needs to know about the chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmParams {
    /// Cells in the shared buffer (Tofino2: 384 Ki = 393,216).
    pub buffer_cells: u32,
    /// Bytes per cell (Tofino2: 176).
    pub cell_bytes: u32,
    /// Queues per 8-channel port group (Tofino2: 128). A port may have at most its channels'
    /// share of them.
    pub queues_per_port_group: u32,
    /// Queues a port gets unless configured otherwise, and the fewest it may have (Tofino2
    /// driver: 16).
    pub default_queues_per_port: u32,
    /// Cycles from a descriptor's enqueue to the earliest cycle it can be dequeued, with the
    /// queue otherwise empty (ours: no public figure).
    pub queue_latency_cycles: u32,
    /// Static limit on the cells of every queue that does not set its own; `null` for none
    /// (ours).
    pub queue_limit_cells: Option<u32>,
    /// Dynamic threshold: a queue may grow while its depth is below `alpha x` the free cells
    /// of the shared buffer; alpha in percent (100 = 1: a lone congested queue settles at
    /// half the buffer); `null` turns the threshold off (ours).
    pub dynamic_threshold_alpha_percent: Option<u32>,
    /// DWRR credit, in wire bytes, a queue gets per unit of weight each round (ours).
    pub dwrr_quantum_bytes: u32,
    /// Cycles from an AFC pause/resume request to the scheduler obeying it (ours).
    pub afc_latency_cycles: u32,
    /// Classes (bit `c` for class `c`) whose traffic is lossless: held back by PFC instead of
    /// dropped by the egress thresholds; 0 turns PFC off (ours).
    pub pfc_lossless_classes: u8,
    /// Cells an (ingress port, class) priority group may hold before the TM asks for XOFF.
    pub pfc_xoff_cells: u32,
    /// The group asks for XON once it holds this many cells or fewer.
    pub pfc_xon_cells: u32,
    /// Cells beyond the XOFF threshold a lossless group may still take (in-flight data) before
    /// its packets are dropped.
    pub pfc_headroom_cells: u32,
    /// Pause time, in quanta of 512 bit times, that an XOFF frame asks for (ours).
    pub pfc_pause_quanta: u16,
    /// While a group stays in XOFF, the TM sends the XOFF again each time this percentage of
    /// the pause time has passed since the last one (0..=99; 0 never refreshes, so a pause
    /// lapses after `pfc_pause_quanta` however long the group stays over its threshold).
    /// 802.1Qbb pauses last only their quanta; a sender keeps a class paused by sending
    /// again before they run out. Ours: 50.
    #[serde(default = "default_refresh_percent")]
    pub pfc_refresh_percent: u32,
    /// The dynamic PFC threshold of the HPCC ns-3 artifact (`switch-mmu.cc`): with `Some(a)`
    /// a lossless group's XOFF threshold is `a / 1000` of the free cells of its queue's pool,
    /// recomputed at every enqueue and dequeue, in place of `pfc_xoff_cells` and
    /// `pfc_xon_cells`. Its cells beyond its minimum go to the shared pool while they stay
    /// within the threshold and to its headroom (`pfc_headroom_cells`) past it; it asks for
    /// XOFF once its headroom holds a cell or its shared cells reach the threshold, and for
    /// XON once its headroom is empty and its shared cells plus `pfc_resume_offset_cells`
    /// are within the threshold (or none are left). `null`: the static thresholds (ours).
    #[serde(default)]
    pub pfc_dynamic_per_mille: Option<u32>,
    /// Hysteresis of the dynamic threshold, cells (the artifact's `resume_offset`, 3 KB:
    /// 18 cells of 176 bytes, rounded up).
    #[serde(default = "default_resume_offset_cells")]
    pub pfc_resume_offset_cells: u32,
    /// Queue-depth updates each TM pipe sends to the ingress pipes per cycle, for queues
    /// whose depth changed; 0 turns the ghost feed off (ours).
    pub ghost_updates_per_cycle: u32,
    /// Cycles from a ghost update being sent to the ingress pipes having it (ours).
    pub ghost_latency_cycles: u32,
    /// Cells of each of the 4 application pools (Tofino2: 4 pools). A queue's cells beyond
    /// its priority group's minimum are charged to its pool ([`crate::QueueConfig::app_pool`]);
    /// the pools and the minimums together must fit in the buffer. `null`: pool 0 holds the
    /// whole buffer less the minimums, pools 1-3 nothing (ours; the driver's pool 0 is the
    /// default one).
    pub app_pool_cells: Option<[u32; APP_POOLS]>,
    /// Cells every (ingress port, class) priority group is guaranteed, per class: a packet
    /// whose group holds fewer is admitted whatever its pool and queue thresholds say (only a
    /// full buffer drops it). Reserved out of the buffer for every port (ours: none).
    pub ppg_min_cells: [u32; CLASSES],
    /// Queue depths in cells at which `enq_congest_stat` / `deq_congest_stat` step to 1, 2
    /// and 3 (ascending; ours).
    pub queue_congest_cells: [u32; 3],
    /// Pool occupancies, in percent of the pool, at which a pool's 2 bits of
    /// `app_pool_congest_stat` step to 1, 2 and 3 (ascending, 1..=100; ours).
    pub app_pool_congest_percent: [u32; 3],
}

impl Default for TmParams {
    fn default() -> TmParams {
        TmParams {
            buffer_cells: 393_216,
            cell_bytes: 176,
            queues_per_port_group: 128,
            default_queues_per_port: 16,
            queue_latency_cycles: 300,
            queue_limit_cells: None,
            dynamic_threshold_alpha_percent: Some(100),
            dwrr_quantum_bytes: 2048,
            afc_latency_cycles: 100,
            pfc_lossless_classes: 0,
            pfc_xoff_cells: 2048,
            pfc_xon_cells: 1536,
            pfc_headroom_cells: 1024,
            pfc_pause_quanta: 0xffff,
            pfc_refresh_percent: default_refresh_percent(),
            pfc_dynamic_per_mille: None,
            pfc_resume_offset_cells: default_resume_offset_cells(),
            ghost_updates_per_cycle: 1,
            ghost_latency_cycles: 100,
            app_pool_cells: None,
            ppg_min_cells: [0; CLASSES],
            queue_congest_cells: [256, 1024, 4096],
            app_pool_congest_percent: [50, 75, 90],
        }
    }
}

/// Refresh an XOFF when half its pause time has passed (ours).
fn default_refresh_percent() -> u32 {
    50
}

/// The artifact's `resume_offset` of 3 KB (3,072 bytes) in 176-byte cells, rounded up.
fn default_resume_offset_cells() -> u32 {
    18
}

impl TmParams {
    /// Cells reserved for the priority groups' minimums of `ports` ingress ports.
    pub fn reserved_min_cells(&self, ports: usize) -> u64 {
        self.ppg_min_cells.iter().map(|&c| c as u64).sum::<u64>() * ports as u64
    }

    /// The pools' sizes for a TM of `ports` ports, or the error naming the parameter when
    /// the pools and the priority-group minimums do not fit in the buffer together.
    pub fn pool_sizes(&self, ports: usize) -> Result<[u32; APP_POOLS], (String, String)> {
        let reserved = self.reserved_min_cells(ports);
        let buffer = self.buffer_cells as u64;
        let pools = match self.app_pool_cells {
            Some(p) => p,
            None => {
                let mut p = [0; APP_POOLS];
                p[0] = buffer.saturating_sub(reserved) as u32;
                p
            }
        };
        let total = pools.iter().map(|&c| c as u64).sum::<u64>() + reserved;
        if total > buffer {
            return Err((
                "tm.ppg_min_cells".into(),
                format!(
                    "{:?} per port reserve {reserved} cells for {ports} ports; with the pools' {} cells that is {total}, more than buffer_cells {buffer}",
                    self.ppg_min_cells,
                    total - reserved
                ),
            ));
        }
        Ok(pools)
    }

    /// Cells a frame of `frame_bytes` occupies.
    pub fn cells_for(&self, frame_bytes: u64) -> u32 {
        (frame_bytes.div_ceil(self.cell_bytes as u64)).max(1) as u32
    }

    /// Checks that the TM can run with these values; the error names the parameter.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |n: &str, p: String| Err((format!("tm.{n}"), p));
        if self.buffer_cells == 0 {
            return err("buffer_cells", "must be at least 1".into());
        }
        if self.cell_bytes == 0 {
            return err("cell_bytes", "must be at least 1".into());
        }
        if !(1..=128).contains(&self.queues_per_port_group) {
            return err(
                "queues_per_port_group",
                format!(
                    "{} is outside 1..=128 (7-bit queue ids)",
                    self.queues_per_port_group
                ),
            );
        }
        if self.default_queues_per_port == 0
            || self.default_queues_per_port > self.queues_per_port_group
        {
            return err(
                "default_queues_per_port",
                format!(
                    "{} is outside 1..={} (queues_per_port_group)",
                    self.default_queues_per_port, self.queues_per_port_group
                ),
            );
        }
        if self.queue_latency_cycles == 0 {
            return err("queue_latency_cycles", "must be at least 1".into());
        }
        if self.queue_limit_cells == Some(0) {
            return err("queue_limit_cells", "0 would drop every packet".into());
        }
        if let Some(a) = self.dynamic_threshold_alpha_percent {
            if !(1..=100_000).contains(&a) {
                return err(
                    "dynamic_threshold_alpha_percent",
                    format!("{a} is outside 1..=100000 (use null to turn it off)"),
                );
            }
        }
        if self.dwrr_quantum_bytes == 0 {
            return err("dwrr_quantum_bytes", "must be at least 1".into());
        }
        if self.afc_latency_cycles == 0 {
            return err(
                "afc_latency_cycles",
                "must be at least 1 (signals are registered)".into(),
            );
        }
        if self.pfc_xon_cells > self.pfc_xoff_cells {
            return err(
                "pfc_xon_cells",
                format!(
                    "{} is above pfc_xoff_cells {}",
                    self.pfc_xon_cells, self.pfc_xoff_cells
                ),
            );
        }
        if let Some(a) = self.pfc_dynamic_per_mille {
            if !(1..=1000).contains(&a) {
                return err(
                    "pfc_dynamic_per_mille",
                    format!("{a} is outside 1..=1000 (use null for the static thresholds)"),
                );
            }
        }
        if self.pfc_pause_quanta == 0 {
            return err(
                "pfc_pause_quanta",
                "0 would make every XOFF a resume".into(),
            );
        }
        if self.pfc_refresh_percent > 99 {
            return err(
                "pfc_refresh_percent",
                format!(
                    "{} would let a pause lapse before its refresh (0..=99; 0 never refreshes)",
                    self.pfc_refresh_percent
                ),
            );
        }
        if self.ghost_latency_cycles == 0 {
            return err(
                "ghost_latency_cycles",
                "must be at least 1 (signals are registered)".into(),
            );
        }
        if let Some(pools) = self.app_pool_cells {
            let total: u64 = pools.iter().map(|&c| c as u64).sum();
            if total > self.buffer_cells as u64 {
                return err(
                    "app_pool_cells",
                    format!(
                        "{pools:?} add up to {total} cells, more than buffer_cells {}",
                        self.buffer_cells
                    ),
                );
            }
        }
        let ascending = |t: &[u32; 3]| t[0] < t[1] && t[1] < t[2];
        if !ascending(&self.queue_congest_cells) || self.queue_congest_cells[0] == 0 {
            return err(
                "queue_congest_cells",
                format!(
                    "{:?} must be three ascending depths above 0",
                    self.queue_congest_cells
                ),
            );
        }
        let pct = self.app_pool_congest_percent;
        if !ascending(&pct) || pct[0] == 0 || pct[2] > 100 {
            return err(
                "app_pool_congest_percent",
                format!("{pct:?} must be three ascending percentages within 1..=100"),
            );
        }
        Ok(())
    }
}
