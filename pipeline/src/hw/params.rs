//! Pipeline parameters with their Tofino2 defaults. Sources are in `docs/tofino2.md`.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::hw::phv::PhvParams;

/// Cycles a MAU stage adds to the pipeline (Tofino2 assembler values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageLatency {
    /// Pipeline length of a match-dependent stage with no extras: 23.
    pub match_base: u32,
    /// Added when the stage group uses TCAM: 2.
    pub tcam: u32,
    /// Added when the stage group uses a stateful ALU, meter, LPF or WRED: 4.
    pub stateful: u32,
    /// Added (instead of `stateful`) when a stateful ALU divides: 6.
    pub divide: u32,
    /// Added (instead of the two above) when the group has a selector: 8.
    pub selector: u32,
    /// A stage that only action-depends on the previous one: 2.
    pub action_dependent: u32,
}

impl Default for StageLatency {
    fn default() -> StageLatency {
        StageLatency {
            match_base: 23,
            tcam: 2,
            stateful: 4,
            divide: 6,
            selector: 8,
            action_dependent: 2,
        }
    }
}

/// Everything the pipeline needs to know about the chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineParams {
    /// MAU stages per pipe (Tofino2: 20).
    pub stages: u32,
    pub phv: PhvParams,
    pub stage_latency: StageLatency,
    /// Cycles from a packet entering the parser to its PHV reaching MAU stage 0 (ours).
    pub parser_cycles: u32,
    /// Cycles from the PHV leaving the last MAU stage to the deparser handing the packet on
    /// (ours).
    pub deparser_cycles: u32,
}

impl Default for PipelineParams {
    fn default() -> PipelineParams {
        PipelineParams {
            stages: 20,
            phv: PhvParams::default(),
            stage_latency: StageLatency::default(),
            parser_cycles: 64,
            deparser_cycles: 64,
        }
    }
}

/// A pipeline parameter that cannot work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// Dotted name of the parameter, e.g. `pipeline.parser_cycles`.
    pub name: String,
    pub problem: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parameter `{}`: {}", self.name, self.problem)
    }
}

impl std::error::Error for ParamError {}

impl PipelineParams {
    /// Checks that the model can run with these values.
    pub fn validate(&self) -> Result<(), ParamError> {
        let err = |name: &str, problem: String| {
            Err(ParamError {
                name: format!("pipeline.{name}"),
                problem,
            })
        };
        if self.stages == 0 || self.stages > 64 {
            return err("stages", format!("{} is outside 1..=64", self.stages));
        }
        if self.parser_cycles == 0 {
            return err("parser_cycles", "must be at least 1".into());
        }
        if self.deparser_cycles == 0 {
            return err("deparser_cycles", "must be at least 1".into());
        }
        if self.stage_latency.match_base == 0 || self.stage_latency.action_dependent == 0 {
            return err(
                "stage_latency",
                "match_base and action_dependent must be at least 1".into(),
            );
        }
        let p = &self.phv;
        let totals = [p.containers_8, p.containers_16, p.containers_32];
        for (i, name) in ["8", "16", "32"].iter().enumerate() {
            if p.normal[i] + p.mocha[i] + p.dark[i] != totals[i] {
                return err(
                    &format!("phv.containers_{name}"),
                    format!(
                        "{} containers, but normal + mocha + dark = {}",
                        totals[i],
                        p.normal[i] + p.mocha[i] + p.dark[i]
                    ),
                );
            }
        }
        // The intrinsic metadata sits in fixed containers past the header layout; a PHV
        // without them could not hold a packet (each width's containers are one array).
        let metadata = crate::hw::fields::FIRST_FREE;
        for (i, name) in ["8", "16", "32"].iter().enumerate() {
            if totals[i] < metadata[i] {
                return err(
                    &format!("phv.containers_{name}"),
                    format!(
                        "the built-in header layout and intrinsic metadata need {} {name}-bit \
                         containers, have {}",
                        metadata[i], totals[i]
                    ),
                );
            }
        }
        let need = crate::hw::layout::CONTAINERS_USED;
        for (i, name) in ["8", "16", "32"].iter().enumerate() {
            if p.normal[i] < need[i] {
                return err(
                    &format!("phv.normal[{i}]"),
                    format!(
                        "the built-in header layout needs {} normal {name}-bit containers, have {}",
                        need[i], p.normal[i]
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PHV too small for the intrinsic metadata's fixed containers is an error naming the
    /// width, not a packet writing past the end of its array.
    #[test]
    fn a_phv_without_room_for_the_intrinsic_metadata_is_refused() {
        assert_eq!(PipelineParams::default().validate(), Ok(()));
        let mut p = PipelineParams::default();
        // 7 normal 32-bit containers hold the header layout (6), not the metadata (12).
        p.phv.normal[2] = 7;
        p.phv.containers_32 = 7;
        p.phv.mocha[2] = 0;
        p.phv.dark[2] = 0;
        let e = p.validate().unwrap_err();
        assert_eq!(e.name, "pipeline.phv.containers_32");
        assert!(
            e.problem.contains("need 12 32-bit containers, have 7"),
            "{e}"
        );
    }
}
