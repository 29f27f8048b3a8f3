//! Replaying captured frames into a node's port: when each frame's last bit arrives, and
//! putting them on the wire.

use super::{read_capture, CapturedFrame, PortRef};
use std::path::PathBuf;
use t2_clock::{Clock, Cycle, LineRate, FCS_BYTES};
use t2_testbench::{Network, NodeId};

/// When replayed frames arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayTiming {
    /// At their recorded times relative to the first frame.
    Recorded,
    /// Back to back at this rate in bits per second (preamble and gap included).
    Paced(u64),
}

/// The cycle each frame's last bit arrives at a port of `port_bps`; the first frame's in
/// cycle `start`.
///
/// Recorded: frame `k` at `start + ceil((t_k - t_0) x clock_hz)` cycles, later if the port's
/// line rate could not have carried it by then. The line-rate floor keeps consecutive frames
/// at least a serialization time apart (FCS, preamble and gap included), measured from the
/// earliest time each frame can really have ended given that its time stamp is rounded (up to
/// one time-stamp unit and one cycle earlier than stamped). So a capture of back-to-back frames
/// replays at exactly its recorded cycles, and a denser one at the line rate, never faster.
/// Paced at `r` b/s: back to back at `r`, the first frame in `start`.
/// Errors: times going backwards; a pace of 0 or above the port's rate.
pub fn replay_schedule(
    frames: &[CapturedFrame],
    clock: Clock,
    port_bps: u64,
    timing: ReplayTiming,
    start: Cycle,
) -> Result<Vec<Cycle>, String> {
    let rate = match timing {
        ReplayTiming::Recorded => port_bps,
        ReplayTiming::Paced(0) => return Err("a replay rate must be above 0 b/s".into()),
        ReplayTiming::Paced(r) if r > port_bps => {
            return Err(format!(
                "a replay rate of {r} b/s is above the port's {port_bps} b/s"
            ))
        }
        ReplayTiming::Paced(r) => r,
    };
    let line = LineRate::new(clock, rate);
    let tpc = line.ticks_per_cycle() as u128;
    let hz = clock.hz as u128;
    let mut out = Vec::with_capacity(frames.len());
    let Some(first) = frames.first() else {
        return Ok(out);
    };
    let (u0, per0) = (first.units, first.units_per_second);
    // The earliest end of the previous frame, in line ticks.
    let mut floor: u128 = 0;
    let mut prev_since = 0u128;
    for (k, f) in frames.iter().enumerate() {
        let ser = line.serialization_ticks(f.bytes.len() as u64 + FCS_BYTES) as u128;
        let end = match timing {
            ReplayTiming::Paced(_) => {
                let end = if k == 0 {
                    line.cycle_to_ticks(start) as u128
                } else {
                    floor + ser
                };
                floor = end;
                end
            }
            ReplayTiming::Recorded => {
                // t_k - t_0 = units_k / per_k - u0 / per0, exact over per0 * per_k. Checked:
                // a time stamp far out (or a fine unit) must be refused, not wrapped.
                let too_far = || {
                    format!(
                        "packet {}: its time stamp is too far from the first packet's to \
                         replay",
                        k + 1
                    )
                };
                let num = f.units.checked_mul(per0).ok_or_else(too_far)?;
                let base = u0.checked_mul(f.units_per_second).ok_or_else(too_far)?;
                let denom = per0.checked_mul(f.units_per_second).ok_or_else(too_far)?;
                let since = num.checked_sub(base).ok_or_else(|| {
                    format!("packet {} is stamped before the first packet", k + 1)
                })?;
                // Compare times over a common denominator (units may differ per interface).
                let since_ps = since.checked_mul(1_000_000_000_000).ok_or_else(too_far)? / denom;
                if since_ps < prev_since {
                    return Err(format!(
                        "packet {} is stamped before packet {k}: times must not go backwards",
                        k + 1
                    ));
                }
                prev_since = since_ps;
                let cycles = since.checked_mul(hz).ok_or_else(too_far)?.div_ceil(denom);
                let stamped = (start as u128 + cycles)
                    .checked_mul(tpc)
                    .filter(|&t| t / tpc <= Cycle::MAX as u128)
                    .ok_or_else(too_far)?;
                // One time-stamp unit (rounded up to ticks) and one cycle of rounding.
                let slack = (hz * tpc).div_ceil(f.units_per_second) + tpc;
                let earliest = if k == 0 {
                    stamped.saturating_sub(slack)
                } else {
                    stamped.saturating_sub(slack).max(floor + ser)
                };
                floor = earliest;
                stamped.max(earliest)
            }
        };
        out.push(end.div_ceil(tpc) as Cycle);
    }
    Ok(out)
}

/// What to replay, into which node's port and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayRequest {
    pub file: PathBuf,
    pub node: String,
    pub port: PortRef,
    pub timing: ReplayTiming,
    /// The cycle the first frame may arrive, at the earliest.
    pub start: Cycle,
}

impl ReplayRequest {
    /// Reads the file and puts its frames on the wire into the node's port (before the run
    /// starts, or at cycles still ahead). Returns the number of frames.
    pub fn inject(&self, net: &mut Network, clock: Clock) -> Result<usize, String> {
        let frames = read_capture(&self.file)?;
        let node = (0..net.node_count())
            .map(NodeId)
            .find(|&id| net.node_dyn(id).name() == self.node)
            .ok_or_else(|| format!("replay: no node `{}`", self.node))?;
        let port = self.port.resolve(net, node, "replay")?;
        let n = net.node_dyn(node);
        let at = replay_schedule(&frames, clock, n.port_bps(port), self.timing, self.start)
            .map_err(|e| format!("{}: {e}", self.file.display()))?;
        for (f, &c) in frames.iter().zip(&at) {
            net.inject(node, port, &f.bytes, c)?;
        }
        Ok(frames.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{cycle_to_ns_round, CaptureSpec, CapturedFrame, PortRef};

    #[test]
    fn capture_points_parse_with_clear_errors() {
        assert_eq!(
            CaptureSpec::parse("chip:3").unwrap(),
            CaptureSpec {
                node: "chip".into(),
                port: PortRef::Index(3),
                link: false
            }
        );
        assert_eq!(
            CaptureSpec::parse("receiver").unwrap().port,
            PortRef::Index(0)
        );
        let d = CaptureSpec::parse("chip:d136").unwrap();
        assert_eq!(d.port, PortRef::Device(136));
        assert_eq!(d.file_name(), "chip-d136.pcapng");
        let l = CaptureSpec::parse("link:switch0:2").unwrap();
        assert!(l.link);
        assert_eq!(l.file_name(), "link-switch0-2.pcapng");
        assert_eq!(
            CaptureSpec::parse("chip:x").unwrap_err(),
            "capture point `chip:x`: port `x` is not a port number (3) or device port (d8)"
        );
        assert!(CaptureSpec::parse("")
            .unwrap_err()
            .contains("expected NODE"));
        assert_eq!(
            CaptureSpec::parse_list("chip:1,chip:1").unwrap_err(),
            "capture point `chip:1` is given twice"
        );
    }

    #[test]
    fn time_stamps_round_to_the_nearest_nanosecond() {
        // 1.5 GHz: cycle 1 is 0.667 ns, cycle 2 1.333 ns, cycle 3 2 ns; 0.5 rounds up.
        assert_eq!(cycle_to_ns_round(1, 1_500_000_000), 1);
        assert_eq!(cycle_to_ns_round(2, 1_500_000_000), 1);
        assert_eq!(cycle_to_ns_round(3, 1_500_000_000), 2);
        assert_eq!(cycle_to_ns_round(1, 2_000_000_000), 1);
        assert_eq!(
            cycle_to_ns_round(1_500_000_000, 1_500_000_000),
            1_000_000_000
        );
    }

    fn frame(units: u128, per_s: u128, len: usize) -> CapturedFrame {
        CapturedFrame {
            units,
            units_per_second: per_s,
            bytes: vec![0; len],
        }
    }

    #[test]
    fn replay_keeps_recorded_times_and_the_line_rate() {
        let clock = Clock::tofino2();
        let g100 = 100_000_000_000;
        // A 1496-byte frame (1500 with FCS) takes 1520 x 8 x 3 / 200 = 182.4 cycles at
        // 100 Gb/s. Stamped 1 us apart (in microsecond and in nanosecond units): 1500
        // cycles apart, the first in the start cycle.
        let f = [frame(5, 1_000_000, 1496), frame(6_000, 1_000_000_000, 1496)];
        assert_eq!(
            replay_schedule(&f, clock, g100, ReplayTiming::Recorded, 7).unwrap(),
            [7, 1507]
        );
        // Back-to-back frames stamped in ns (rounded): 182.4 -> 122 ns, 364.8 -> 243 ns,
        // 547.2 -> 365 ns: they replay at their stamped cycles, 182.4 x k rounded up by the
        // stamps, never pushed later by the line-rate floor.
        let b2b = [
            frame(122, 1_000_000_000, 1496),
            frame(243, 1_000_000_000, 1496),
            frame(365, 1_000_000_000, 1496),
            frame(487, 1_000_000_000, 1496),
        ];
        assert_eq!(
            replay_schedule(&b2b, clock, g100, ReplayTiming::Recorded, 183).unwrap(),
            [183, 183 + 182, 183 + 365, 183 + 548]
        );
        // All stamped in the same nanosecond: the line rate spaces them, from the earliest
        // the first can have ended (one ns and one cycle before its stamp: 97.5, then
        // 279.9 and 462.3, rounded up).
        let dense = [
            frame(0, 1_000_000_000, 1496),
            frame(0, 1_000_000_000, 1496),
            frame(0, 1_000_000_000, 1496),
        ];
        assert_eq!(
            replay_schedule(&dense, clock, g100, ReplayTiming::Recorded, 100).unwrap(),
            [100, 280, 463]
        );
        // Paced at 50 Gb/s from cycle 10: 364.8 cycles each.
        assert_eq!(
            replay_schedule(&b2b, clock, g100, ReplayTiming::Paced(50_000_000_000), 10).unwrap(),
            [10, 375, 740, 1105]
        );
        let back = [frame(2, 1_000_000_000, 64), frame(1, 1_000_000_000, 64)];
        assert_eq!(
            replay_schedule(&back, clock, g100, ReplayTiming::Recorded, 0).unwrap_err(),
            "packet 2 is stamped before the first packet"
        );
        let back = [
            frame(1, 1_000_000_000, 64),
            frame(3, 1_000_000_000, 64),
            frame(2, 1_000_000_000, 64),
        ];
        assert_eq!(
            replay_schedule(&back, clock, g100, ReplayTiming::Recorded, 0).unwrap_err(),
            "packet 3 is stamped before packet 2: times must not go backwards"
        );
        assert!(
            replay_schedule(&f, clock, g100, ReplayTiming::Paced(200_000_000_000), 0)
                .unwrap_err()
                .contains("above the port's")
        );
    }
}
