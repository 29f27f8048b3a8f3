//! The Tofino2 parameter set: every number the model uses, with its default.
//!
//! `docs/tofino2.md` lists each one with its source and says which are documented facts and
//! which are our defaults. The set (de)serializes as JSON; `t2sim params` prints the defaults
//! and `t2sim run --params FILE` reads an edited copy.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use t2_clock::Clock;
use t2_pipeline::PipelineParams;
use t2_tm::TmParams;

/// The slowest clock t2sim accepts, Hz (100 MHz): below it a 400G frame would take under a
/// cycle per 4 bytes and the stage latencies in cycles would mean nothing.
pub const MIN_CLOCK_HZ: u64 = 100_000_000;

/// The fastest clock t2sim accepts, Hz (10 GHz).
pub const MAX_CLOCK_HZ: u64 = 10_000_000_000;

/// The fastest MAC t2sim accepts, b/s (1.6 Tb/s; Tofino2's is 400G).
pub const MAX_MAC_BPS: u64 = 1_600_000_000_000;

/// Chip-level parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tofino2Params {
    /// Packet-processing clock in Hz (1.5 GHz).
    pub clock_hz: u64,
    /// Pipes per chip (4).
    pub pipes: u32,
    /// Front-panel MACs per pipe (8 x 400G).
    pub macs_per_pipe: u32,
    /// Channels (SerDes lanes) per MAC (8).
    pub channels_per_mac: u32,
    /// Line rate of a whole MAC in b/s (400G).
    pub mac_bps: u64,
    /// Recirculation bandwidth as a percentage of the chip's front-panel capacity (12).
    pub recirculation_cap_percent: u32,
    /// Frames each port's receive FIFO holds while waiting for an ingress slot (ours).
    pub rx_fifo_frames: u32,
    pub pipeline: PipelineParams,
    pub tm: TmParams,
}

impl Default for Tofino2Params {
    fn default() -> Tofino2Params {
        Tofino2Params {
            clock_hz: 1_500_000_000,
            pipes: 4,
            macs_per_pipe: 8,
            channels_per_mac: 8,
            mac_bps: 400_000_000_000,
            recirculation_cap_percent: 12,
            rx_fifo_frames: 128,
            pipeline: PipelineParams::default(),
            tm: TmParams::default(),
        }
    }
}

/// A parameter set that cannot be used, naming the parameter (and file, when read from one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub origin: String,
    pub problem: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.problem)
    }
}

impl std::error::Error for ParamError {}

impl Tofino2Params {
    pub fn clock(&self) -> Clock {
        Clock::new(self.clock_hz)
    }

    /// Line rate of one pipe's front-panel MACs together, in b/s.
    pub fn front_panel_bps_per_pipe(&self) -> u64 {
        self.macs_per_pipe as u64 * self.mac_bps
    }

    /// Bandwidth of one pipe's recirculation port: the pipe's share of the chip's
    /// recirculation cap, in b/s.
    pub fn recirculation_bps_per_pipe(&self) -> u64 {
        (self.front_panel_bps_per_pipe() as u128 * self.recirculation_cap_percent as u128 / 100)
            as u64
    }

    /// Checks every value the model relies on.
    pub fn validate(&self) -> Result<(), ParamError> {
        let err = |name: &str, problem: String| {
            Err(ParamError {
                origin: format!("parameter `{name}`"),
                problem,
            })
        };
        if !(MIN_CLOCK_HZ..=MAX_CLOCK_HZ).contains(&self.clock_hz) {
            return err(
                "clock_hz",
                format!(
                    "{} is outside {MIN_CLOCK_HZ}..={MAX_CLOCK_HZ} (100 MHz to 10 GHz; Tofino2: 1.5 GHz)",
                    self.clock_hz
                ),
            );
        }
        if !(1..=4).contains(&self.pipes) {
            return err(
                "pipes",
                format!("{} is outside 1..=4 (2-bit pipe ids)", self.pipes),
            );
        }
        if !(1..=8).contains(&self.macs_per_pipe) {
            return err(
                "macs_per_pipe",
                format!(
                    "{} is outside 1..=8 (device ports 8..71)",
                    self.macs_per_pipe
                ),
            );
        }
        if !(1..=8).contains(&self.channels_per_mac) {
            return err(
                "channels_per_mac",
                format!("{} is outside 1..=8", self.channels_per_mac),
            );
        }
        if self.mac_bps == 0
            || self.mac_bps > MAX_MAC_BPS
            || !self.mac_bps.is_multiple_of(self.channels_per_mac as u64)
        {
            return err(
                "mac_bps",
                format!(
                    "{} must be in 1..={MAX_MAC_BPS} (1.6 Tb/s) and divide into {} channels",
                    self.mac_bps, self.channels_per_mac
                ),
            );
        }
        if self.recirculation_cap_percent > 100 {
            return err(
                "recirculation_cap_percent",
                format!("{} is above 100", self.recirculation_cap_percent),
            );
        }
        if self.rx_fifo_frames == 0 {
            return err("rx_fifo_frames", "must be at least 1".into());
        }
        self.pipeline.validate().map_err(|e| ParamError {
            origin: format!("parameter `{}`", e.name),
            problem: e.problem,
        })?;
        self.tm.validate().map_err(|(name, problem)| ParamError {
            origin: format!("parameter `{name}`"),
            problem,
        })?;
        // Values that size the model's state (rings of pipeline slots, FIFOs, delay lines,
        // the cell buffer): bounded so that a typo cannot ask for gigabytes. Each bound is
        // far above Tofino2's value.
        let l = &self.pipeline.stage_latency;
        let t = &self.tm;
        let bounds: [(&str, u64, u64); 15] = [
            (
                "pipeline.parser_cycles",
                self.pipeline.parser_cycles as u64,
                4_096,
            ),
            (
                "pipeline.deparser_cycles",
                self.pipeline.deparser_cycles as u64,
                4_096,
            ),
            (
                "pipeline.stage_latency.match_base",
                l.match_base as u64,
                1_024,
            ),
            ("pipeline.stage_latency.tcam", l.tcam as u64, 1_024),
            ("pipeline.stage_latency.stateful", l.stateful as u64, 1_024),
            ("pipeline.stage_latency.divide", l.divide as u64, 1_024),
            ("pipeline.stage_latency.selector", l.selector as u64, 1_024),
            (
                "pipeline.stage_latency.action_dependent",
                l.action_dependent as u64,
                1_024,
            ),
            ("rx_fifo_frames", self.rx_fifo_frames as u64, 65_536),
            ("tm.buffer_cells", t.buffer_cells as u64, 1 << 24),
            ("tm.cell_bytes", t.cell_bytes as u64, 16_384),
            (
                "tm.queue_latency_cycles",
                t.queue_latency_cycles as u64,
                1_000_000,
            ),
            (
                "tm.afc_latency_cycles",
                t.afc_latency_cycles as u64,
                1_000_000,
            ),
            (
                "tm.ghost_latency_cycles",
                t.ghost_latency_cycles as u64,
                1_000_000,
            ),
            (
                "tm.ghost_updates_per_cycle",
                t.ghost_updates_per_cycle as u64,
                4_096,
            ),
        ];
        for (name, value, max) in bounds {
            if value > max {
                return err(name, format!("{value} is above {max}"));
            }
        }
        Ok(())
    }

    /// Reads and validates a JSON parameter file. Every field must be present; unknown
    /// fields are errors, so a typo cannot silently leave a default in place.
    pub fn from_json_file(path: &Path) -> Result<Tofino2Params, ParamError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ParamError {
            origin: origin.clone(),
            problem: format!("cannot read: {e}"),
        })?;
        let params: Tofino2Params = serde_json::from_str(&text).map_err(|e| ParamError {
            origin: origin.clone(),
            problem: e.to_string(),
        })?;
        params.validate().map_err(|e| ParamError {
            origin: format!("{origin}: {}", e.origin),
            problem: e.problem,
        })?;
        Ok(params)
    }

    /// The parameter set as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("parameters always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip() {
        let p = Tofino2Params::default();
        p.validate().unwrap();
        let back: Tofino2Params = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            p.tm.buffer_cells as u64 * p.tm.cell_bytes as u64,
            69_206_016
        );
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let p = Tofino2Params {
            pipes: 5,
            ..Tofino2Params::default()
        };
        let e = p.validate().unwrap_err();
        assert_eq!(e.origin, "parameter `pipes`");
        let mut p = Tofino2Params::default();
        p.pipeline.parser_cycles = 0;
        assert_eq!(
            p.validate().unwrap_err().origin,
            "parameter `pipeline.parser_cycles`"
        );
        let mut p = Tofino2Params::default();
        p.tm.default_queues_per_port = 200;
        assert!(p.validate().unwrap_err().problem.contains("1..=128"));
        let mut p = Tofino2Params::default();
        p.tm.app_pool_cells = Some([300_000, 100_000, 0, 0]);
        let e = p.validate().unwrap_err();
        assert_eq!(e.origin, "parameter `tm.app_pool_cells`");
        assert!(e.problem.contains("400000"), "{e}");
    }

    #[test]
    fn files_with_typos_or_missing_fields_are_errors() {
        let dir = std::env::temp_dir().join(format!("t2sim-params-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let typo = dir.join("typo.json");
        let text = Tofino2Params::default()
            .to_json()
            .replace("\"pipes\"", "\"pipez\"");
        std::fs::write(&typo, text).unwrap();
        let e = Tofino2Params::from_json_file(&typo).unwrap_err();
        assert!(e.origin.ends_with("typo.json"), "{e}");
        assert!(e.problem.contains("pipez"), "{e}");
        let bad = dir.join("bad.json");
        let text = Tofino2Params::default()
            .to_json()
            .replace("\"clock_hz\": 1500000000", "\"clock_hz\": 0");
        std::fs::write(&bad, text).unwrap();
        let e = Tofino2Params::from_json_file(&bad).unwrap_err();
        assert!(e.to_string().contains("clock_hz"), "{e}");
        let missing = dir.join("missing.json");
        let e = Tofino2Params::from_json_file(&missing).unwrap_err();
        assert!(e.problem.starts_with("cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
