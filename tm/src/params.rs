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
    /// Queues per 8-channel port group (Tofino2: 128).
    pub queues_per_port_group: u32,
    /// Queues a port gets unless configured otherwise (Tofino2 driver default: 16).
    pub default_queues_per_port: u32,
    /// Cycles from a descriptor's enqueue to the earliest cycle it can be dequeued, with the
    /// queue otherwise empty (ours: no public figure).
    pub queue_latency_cycles: u32,
    /// Most cells one port's queue may hold; `null` for no limit beyond the shared buffer
    /// (ours; Tofino2's dynamic thresholds come with the full TM).
    pub port_queue_limit_cells: Option<u32>,
}

impl Default for TmParams {
    fn default() -> TmParams {
        TmParams {
            buffer_cells: 393_216,
            cell_bytes: 176,
            queues_per_port_group: 128,
            default_queues_per_port: 16,
            queue_latency_cycles: 300,
            port_queue_limit_cells: None,
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
        if self.queues_per_port_group == 0 {
            return err("queues_per_port_group", "must be at least 1".into());
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
        if self.port_queue_limit_cells == Some(0) {
            return err("port_queue_limit_cells", "0 would drop every packet".into());
        }
        Ok(())
    }
}
