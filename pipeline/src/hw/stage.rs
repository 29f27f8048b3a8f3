//! Stage timing: how placement turns into cycles.
//!
//! Tofino2 stages form a fixed pipeline. A stage whose tables match on something an earlier
//! stage computed (a match dependency), and stage 0, costs its full pipeline length: 23 cycles,
//! plus 2 if its stage group uses TCAM, plus 8 / 6 / 4 if the group has a selector / a
//! dividing stateful ALU / any other stateful ALU, meter, LPF or WRED (the larger one only).
//! A stage that only depends on the previous one's actions (or on nothing: Tofino2 has no
//! concurrent mode) costs 2 cycles. The stage group of a match-dependent stage is that stage
//! and the action-dependent stages that follow it; the extras of any of them lengthen the
//! group's one full-length stage. (bf-asm `stage.cpp` and bf-p4c `mau_power.cpp`; see
//! `docs/tofino2.md`.)

use crate::hw::params::StageLatency;
use serde::{Deserialize, Serialize};

/// How a stage depends on the stage before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dependency {
    /// Its tables match on a result of the previous stage.
    Match,
    /// It only needs the previous stage's actions to have run (or nothing at all).
    Action,
}

/// What a placed stage holds that affects its timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageTiming {
    pub dependency: Dependency,
    #[serde(default)]
    pub tcam: bool,
    #[serde(default)]
    pub stateful: bool,
    #[serde(default)]
    pub divide: bool,
    #[serde(default)]
    pub selector: bool,
}

impl StageTiming {
    pub const fn new(dependency: Dependency) -> StageTiming {
        StageTiming {
            dependency,
            tcam: false,
            stateful: false,
            divide: false,
            selector: false,
        }
    }

    fn address_distribution_extra(&self, lat: &StageLatency) -> u32 {
        if self.selector {
            lat.selector
        } else if self.divide {
            lat.divide
        } else if self.stateful {
            lat.stateful
        } else {
            0
        }
    }
}

/// The timing of every stage of one gress, as placement decided it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub stages: Vec<StageTiming>,
}

impl Placement {
    /// `n` stages of which only stage 0 is match-dependent: the shortest pipeline.
    pub fn shortest(n: usize) -> Placement {
        let mut stages = vec![StageTiming::new(Dependency::Action); n];
        if let Some(first) = stages.first_mut() {
            first.dependency = Dependency::Match;
        }
        Placement { stages }
    }

    /// Cycles each stage adds to the pipeline.
    pub fn stage_cycles(&self, lat: &StageLatency) -> Vec<u32> {
        let n = self.stages.len();
        let mut out = vec![0; n];
        let mut k = 0;
        while k < n {
            // A group: a full-length stage (stage 0 or match-dependent) and the
            // action-dependent stages after it.
            let mut end = k + 1;
            while end < n && self.stages[end].dependency == Dependency::Action {
                end += 1;
            }
            let group = &self.stages[k..end];
            let tcam = if group.iter().any(|s| s.tcam) {
                lat.tcam
            } else {
                0
            };
            let dist = group
                .iter()
                .map(|s| s.address_distribution_extra(lat))
                .max()
                .unwrap_or(0);
            out[k] = lat.match_base + tcam + dist;
            for c in &mut out[k + 1..end] {
                *c = lat.action_dependent;
            }
            k = end;
        }
        out
    }

    /// Cycles from the PHV entering stage 0 to it entering each stage.
    pub fn stage_offsets(&self, lat: &StageLatency) -> Vec<u32> {
        let mut at = 0;
        self.stage_cycles(lat)
            .into_iter()
            .map(|c| {
                let here = at;
                at += c;
                here
            })
            .collect()
    }

    /// Cycles from entering stage 0 to leaving the last stage.
    pub fn mau_cycles(&self, lat: &StageLatency) -> u32 {
        self.stage_cycles(lat).iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_twenty_stages_take_61_cycles() {
        let p = Placement::shortest(20);
        let lat = StageLatency::default();
        assert_eq!(p.mau_cycles(&lat), 23 + 19 * 2);
        let offs = p.stage_offsets(&lat);
        assert_eq!(offs[0], 0);
        assert_eq!(offs[1], 23);
        assert_eq!(offs[19], 23 + 18 * 2);
    }

    #[test]
    fn all_match_dependent_with_salu_take_540_cycles() {
        let mut p = Placement::shortest(20);
        for s in &mut p.stages {
            s.dependency = Dependency::Match;
            s.stateful = true;
        }
        assert_eq!(p.mau_cycles(&StageLatency::default()), 20 * 27);
    }

    #[test]
    fn extras_of_a_group_lengthen_its_head() {
        let lat = StageLatency::default();
        let mut p = Placement::shortest(4);
        p.stages[1].tcam = true; // action-dependent, so it lengthens stage 0
        p.stages[2].dependency = Dependency::Match;
        p.stages[3].selector = true;
        p.stages[3].stateful = true;
        assert_eq!(p.stage_cycles(&lat), vec![25, 2, 31, 2]);
        p.stages[3].selector = false;
        p.stages[3].divide = true;
        assert_eq!(p.stage_cycles(&lat), vec![25, 2, 29, 2]);
        p.stages[3].divide = false;
        assert_eq!(p.stage_cycles(&lat), vec![25, 2, 27, 2]);
    }
}
