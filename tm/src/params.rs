//! Traffic-manager parameters with their Tofino2 defaults. Sources are in `docs/tofino2.md`.

use serde::{Deserialize, Serialize};

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
    /// Queue-depth updates each TM pipe sends to the ingress pipes per cycle, for queues
    /// whose depth changed; 0 turns the ghost feed off (ours).
    pub ghost_updates_per_cycle: u32,
    /// Cycles from a ghost update being sent to the ingress pipes having it (ours).
    pub ghost_latency_cycles: u32,
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
            ghost_updates_per_cycle: 1,
            ghost_latency_cycles: 100,
        }
    }
}

impl TmParams {
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
        if self.pfc_pause_quanta == 0 {
            return err(
                "pfc_pause_quanta",
                "0 would make every XOFF a resume".into(),
            );
        }
        if self.ghost_latency_cycles == 0 {
            return err(
                "ghost_latency_cycles",
                "must be at least 1 (signals are registered)".into(),
            );
        }
        Ok(())
    }
}
