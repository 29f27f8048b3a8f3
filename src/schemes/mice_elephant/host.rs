//! Mice/elephant classes at the source (Mice/Elephant's hosts; `docs/schemes/mice-elephant.md`):
//! a data frame travels in [`MICE_PFC_CLASS`] with DSCP [`MICE_DSCP`] while the IPv4 bytes
//! its flow has sent before it (retransmissions included) are fewer than the threshold, and
//! in class 0 with DSCP 0 after; ACKs always travel as mice. The count is the one a switch's
//! per-flow byte counter keeps on the same frames, so both sides agree on every frame's class.

use std::any::Any;
use t2_testbench::host_feature::{FeatureSpec, FlowView, FrameTag, HostFeature};

/// The PFC class mice frames travel in; elephants travel in class 0.
pub const MICE_PFC_CLASS: u8 = 1;
/// The DSCP mice frames carry: 46, Expedited Forwarding (RFC 3246), the code point for
/// latency-sensitive traffic (our choice).
pub const MICE_DSCP: u8 = 46;

/// Mice while a flow has sent fewer than `bytes` IPv4 bytes.
pub struct Mice {
    pub bytes: u64,
}

/// The spec of [`Mice`] with threshold `bytes`, for a scheme's `Hosts`.
pub fn spec(bytes: u64) -> FeatureSpec {
    FeatureSpec::new("mice", format!("{bytes} B"), move |_| {
        Ok(Box::new(Mice { bytes }) as Box<dyn HostFeature>)
    })
}

impl HostFeature for Mice {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn tag(&self, tag: &mut FrameTag, flow: Option<&FlowView>) {
        if flow.is_none_or(|f| f.ipv4_bytes_sent < self.bytes) {
            tag.class = MICE_PFC_CLASS;
            tag.dscp = MICE_DSCP;
        } else {
            tag.class = 0;
            tag.dscp = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag_after(m: &Mice, ipv4_bytes_sent: Option<u64>) -> FrameTag {
        let flow = ipv4_bytes_sent.map(|b| FlowView {
            index: 0,
            id: 9,
            bytes_sent: 0,
            ipv4_bytes_sent: b,
        });
        let mut t = FrameTag::default();
        m.tag(&mut t, flow.as_ref());
        t
    }

    #[test]
    fn a_frame_is_a_mouse_until_its_flow_has_sent_the_threshold_and_acks_always_are() {
        let m = Mice { bytes: 3000 };
        let mouse = FrameTag {
            class: MICE_PFC_CLASS,
            dscp: MICE_DSCP,
            ipv4_id: 0,
        };
        assert_eq!(tag_after(&m, Some(0)), mouse);
        assert_eq!(tag_after(&m, Some(2999)), mouse);
        assert_eq!(tag_after(&m, Some(3000)), FrameTag::default());
        assert_eq!(tag_after(&m, Some(1 << 40)), FrameTag::default());
        assert_eq!(tag_after(&m, None), mouse, "ACKs travel as mice");
    }
}
