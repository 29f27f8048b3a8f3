//! PIAS's host side (Bai et al., NSDI 2015; `docs/schemes/pias.md`): every data segment
//! carries in its DSCP the priority level its flow has reached by the bytes it has sent
//! ([`MlfqTags`]). ACKs carry DSCP 0.

use std::any::Any;
use t2_testbench::host_feature::{FeatureSpec, FlowView, FrameTag, HostFeature, HostInfo};

/// PIAS's packet tagging: multi-level feedback queue by bytes sent. A flow starts at level 0
/// (DSCP 0, the switches' highest priority) and moves one level down each time the payload
/// bytes it has sent (retransmissions included, as the PIAS kernel module counts what it
/// sends) pass the next threshold: a segment sent after `b` bytes carries DSCP = the number
/// of thresholds that are `<= b`, from 0 to `MLFQ_LEVELS - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlfqTags {
    /// Demotion thresholds in payload bytes, strictly increasing.
    pub thresholds: [u64; MLFQ_LEVELS - 1],
}

/// Priority levels of [`MlfqTags`]: 8, the queues PIAS uses (and its ns-2 artifact's
/// `prio_num_`).
pub const MLFQ_LEVELS: usize = 8;

impl MlfqTags {
    /// The level (DSCP) of a segment sent after `bytes_sent` payload bytes of its flow.
    pub fn level(&self, bytes_sent: u64) -> u8 {
        self.thresholds.iter().filter(|&&t| t <= bytes_sent).count() as u8
    }

    /// Checks that the thresholds increase strictly from above 0.
    pub fn validate(&self) -> Result<(), String> {
        let mut last = 0;
        for (i, &t) in self.thresholds.iter().enumerate() {
            if t <= last {
                return Err(if i == 0 {
                    format!("mlfq threshold 0 ({t} B) must be above 0")
                } else {
                    format!("mlfq threshold {i} ({t} B) must be above the one before ({last} B)")
                });
            }
            last = t;
        }
        Ok(())
    }
}

/// Hosts that tag by [`MlfqTags`].
pub struct Pias {
    pub tags: MlfqTags,
}

/// The spec of [`Pias`] with `tags`, for a scheme's `Hosts`; a host refuses thresholds that
/// do not increase.
pub fn spec(tags: MlfqTags) -> FeatureSpec {
    FeatureSpec::new(
        "pias",
        format!("{:?}", tags.thresholds),
        move |h: &HostInfo| {
            tags.validate().map_err(|e| format!("{}: {e}", h.name))?;
            Ok(Box::new(Pias { tags }) as Box<dyn HostFeature>)
        },
    )
}

impl HostFeature for Pias {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn tag(&self, tag: &mut FrameTag, flow: Option<&FlowView>) {
        if let Some(f) = flow {
            tag.dscp = self.tags.level(f.bytes_sent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_is_tagged_by_the_thresholds_its_flow_has_passed() {
        let p = Pias {
            tags: MlfqTags {
                thresholds: [100, 200, 300, 400, 500, 600, 700],
            },
        };
        let dscp = |bytes_sent| {
            let f = FlowView {
                index: 0,
                id: 1,
                bytes_sent,
                ipv4_bytes_sent: 0,
            };
            let mut t = FrameTag::default();
            p.tag(&mut t, Some(&f));
            t.dscp
        };
        assert_eq!(
            [0, 99, 100, 199, 200, 699, 700, u64::MAX].map(dscp),
            [0, 0, 1, 1, 2, 6, 7, 7]
        );
        let mut ack = FrameTag::default();
        p.tag(&mut ack, None);
        assert_eq!(ack, FrameTag::default(), "ACKs carry DSCP 0");
        let bad = MlfqTags {
            thresholds: [100, 100, 300, 400, 500, 600, 700],
        };
        assert_eq!(
            bad.validate(),
            Err("mlfq threshold 1 (100 B) must be above the one before (100 B)".into())
        );
    }
}
