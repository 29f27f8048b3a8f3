//! HPCC (Li et al., SIGCOMM 2019) at the NIC, as the HPCC ns-3 artifact runs it
//! (`alibaba-edu/High-Precision-Congestion-Control`, `simulation/src/point-to-point/model/
//! rdma-hw.cc`: `HandleAckHp`, `UpdateRateHp`, `FastReactHp`; `rdma-queue-pair.cc`:
//! `GetWin`): the rate control ([`Hpcc`]) the RDMA NIC runs for the `hpcc` scheme.
//!
//! The INT header it reads is the RDMA NIC's (`t2_testbench::rdma::int`).
//!
//! **Sender** ([`HpccSender`], one per QP; the artifact's single-rate mode, `MULTI_RATE 0`,
//! `SAMPLE_FEEDBACK 0`). State: the reference rate `Rc`, the increase stage, the
//! utilisation estimate `U`, the last update's sequence and the last hop records. An ACK of
//! byte `seq` with INT records:
//! - if `seq` is past the last update's sequence: a full update; else (with `fast_react`)
//!   a fast reaction, the same computation that leaves `Rc` and the stage as they are;
//! - the first ACK only stores the records and the sequence;
//! - per hop i: `tau` = time since the stored record, `txRate = dBytes * 8 / tau`,
//!   `u_i = txRate / B_i + min(qlen_i, qlen_i') * R_max / B_i / W`; the largest `u_i` and its
//!   `tau` are `u'` and `dt`;
//! - `U = (U (T - dt) + u' dt) / T` with `dt` at most `T`; `k = U / eta`;
//! - `k >= 1` or stage `>= maxStage`: `R = Rc / k + R_AI`, stage 0; else `R = Rc + R_AI`,
//!   stage + 1; `R` within `[min_rate, R_max]`; the QP sends at `R` at once (its next send
//!   time moves by the change in the last packet's time at the two rates, `ChangeRate`);
//!   a full update also sets `Rc = R` and the stage, and the last update's sequence to the
//!   QP's next byte to send.
//! - window (`HAS_WIN 1`, `VAR_WIN 1`): `W R / R_max` bytes in flight (at least 1); a QP
//!   sends while fewer are in flight.
//!
//! Rates are whole b/s, truncated after each division as the artifact's `DataRate` is.
//! A hop whose `tau` is 0 (two records of one nanosecond) is skipped (ours: the artifact
//! would divide by zero).

use std::any::Any;
use t2_clock::{Clock, Cycle};
use t2_testbench::rdma::int::{rate_code, IntHeader, IntHop, MAX_HOPS};
use t2_testbench::rdma::{RateControl, RateControlSpec, RdmaConfig};

/// HPCC's parameters at the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpccParams {
    /// Target utilisation eta, in millionths (the artifact's `U_TARGET`, run.py
    /// `--utgt 95`: 950,000).
    pub eta_ppm: u32,
    /// Additive-increase stages before a multiplicative step (maxStage; `MI_THRESH`).
    pub max_stage: u32,
    /// Additive increase R_AI, b/s (`RATE_AI`; run.py for HPCC: 10 Mb/s per 25 Gb/s).
    pub rate_ai_bps: u64,
    /// The lowest rate, b/s (`MIN_RATE 1000Mb/s`).
    pub min_rate_bps: u64,
    /// The base RTT T, ns (the artifact's global T, `GLOBAL_T 1`: the network's largest).
    pub base_rtt_ns: u64,
    /// The window at line rate W, bytes (the artifact's `maxBdp`: T at the line rate).
    pub window_bytes: u64,
    /// React to every ACK between full updates (`FAST_REACT 1`).
    pub fast_react: bool,
    /// Bytes per unit of a record's tx-byte field: 2^this.
    pub bytes_shift: u32,
    /// Bytes per unit of a record's queue length (the chip's cell).
    pub qlen_unit_bytes: u64,
}

impl HpccParams {
    /// eta as a fraction.
    pub fn eta(&self) -> f64 {
        self.eta_ppm as f64 / 1e6
    }

    /// The artifact's HPCC (`run.py --cc hp`) for NICs of `line_bps` and a base RTT of
    /// `base_rtt_ns`: eta 0.95, R_AI 10 Mb/s per 25 Gb/s of line, minimum rate 1 Gb/s,
    /// window = T at the line rate, fast reaction on; tx bytes in units of 128 B times
    /// line / 25 Gb/s (`INT_MULTI`); queue lengths in 176-byte cells; `max_stage` as given
    /// (the paper's maxStage is 5; run.py's `--mi` default is 0).
    pub fn artifact(line_bps: u64, base_rtt_ns: u64, max_stage: u32) -> HpccParams {
        let multi = (line_bps / 25_000_000_000).max(1);
        HpccParams {
            eta_ppm: 950_000,
            max_stage,
            rate_ai_bps: 10_000_000 * multi,
            min_rate_bps: 1_000_000_000,
            base_rtt_ns,
            window_bytes: (base_rtt_ns as u128 * line_bps as u128 / 8 / 1_000_000_000) as u64,
            fast_react: true,
            bytes_shift: 7 + multi.ilog2(),
            qlen_unit_bytes: 176,
        }
    }

    /// Checks the parameters against NICs of `line_bps`; the error names the field.
    pub fn validate(&self, host: &str, line_bps: u64) -> Result<(), String> {
        let bad = |what: &str, why: String| Err(format!("{host}: hpcc.{what}: {why}"));
        if self.eta_ppm == 0 || self.eta_ppm > 1_000_000 {
            return bad(
                "eta_ppm",
                format!("{} is outside 1..=1000000", self.eta_ppm),
            );
        }
        if self.base_rtt_ns == 0 {
            return bad("base_rtt_ns", "must be above 0".into());
        }
        if self.window_bytes == 0 {
            return bad("window_bytes", "must be above 0".into());
        }
        if self.min_rate_bps == 0 || self.min_rate_bps > line_bps {
            return bad(
                "min_rate_bps",
                format!("{} is outside 1..={line_bps}", self.min_rate_bps),
            );
        }
        if rate_code(line_bps).is_none() {
            return bad(
                "line",
                format!("{line_bps} b/s has no INT rate code (25/50/100/200/400 Gb/s)"),
            );
        }
        Ok(())
    }
}

/// What one ACK did to a QP's HPCC state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HpccUpdate {
    /// The first ACK: records stored.
    First,
    /// A full update (`Rc` and the stage set).
    Full,
    /// A fast reaction (the rate only).
    Fast,
    /// Nothing changed the rate (no hop usable, too many hops, or no fast reaction).
    None,
}

/// One QP's HPCC state.
#[derive(Clone, Debug, PartialEq)]
pub struct HpccSender {
    p: HpccParams,
    max_rate_bps: u64,
    /// The rate the QP sends at.
    rate_bps: u64,
    /// The reference rate Rc.
    cur_rate_bps: u64,
    inc_stage: u32,
    u: f64,
    last_update_seq: u64,
    hops: [IntHop; MAX_HOPS],
}

impl HpccSender {
    /// A QP starting at the line rate `line_bps` (as `AddQueuePair` starts it).
    pub fn new(line_bps: u64, p: HpccParams) -> HpccSender {
        HpccSender {
            p,
            max_rate_bps: line_bps,
            rate_bps: line_bps,
            cur_rate_bps: line_bps,
            inc_stage: 0,
            u: 0.0,
            last_update_seq: 0,
            hops: [IntHop::default(); MAX_HOPS],
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    pub fn reference_rate_bps(&self) -> u64 {
        self.cur_rate_bps
    }
    pub fn stage(&self) -> u32 {
        self.inc_stage
    }
    pub fn utilisation(&self) -> f64 {
        self.u
    }
    pub fn last_update_seq(&self) -> u64 {
        self.last_update_seq
    }

    /// The window, bytes: `W R / R_max`, at least 1 (`RdmaQueuePair::GetWin`).
    pub fn window_bytes(&self) -> u64 {
        let w = self.p.window_bytes as u128 * self.rate_bps as u128 / self.max_rate_bps as u128;
        (w as u64).max(1)
    }

    /// An ACK (or NACK) of byte `ack_seq` carrying `int`, when the QP's next byte to send is
    /// `next_seq` (`HandleAckHp`).
    pub fn on_ack(&mut self, ack_seq: u64, next_seq: u64, int: &IntHeader) -> HpccUpdate {
        if ack_seq > self.last_update_seq {
            self.update(next_seq, int, false)
        } else if self.p.fast_react {
            self.update(next_seq, int, true)
        } else {
            HpccUpdate::None
        }
    }

    fn update(&mut self, next_seq: u64, int: &IntHeader, fast: bool) -> HpccUpdate {
        let n = int.nhop as usize;
        if self.last_update_seq == 0 {
            self.last_update_seq = next_seq;
            for i in 0..n.min(MAX_HOPS) {
                self.hops[i] = int.hops[i];
            }
            return HpccUpdate::First;
        }
        let mut result = HpccUpdate::None;
        if n <= MAX_HOPS {
            let (mut big_u, mut dt, mut any) = (0.0f64, 0u64, false);
            let w = self.p.window_bytes as f64;
            for i in 0..n {
                let (h, old) = (int.hops[i], self.hops[i]);
                let tau = h.time_delta(&old);
                let line = h.line_bps();
                if tau > 0 && line > 0 {
                    any = true;
                    let bytes = h.bytes_delta(&old) << self.p.bytes_shift;
                    let tx_rate = bytes as f64 * 8.0 / (tau as f64 * 1e-9);
                    let qlen = h.qlen.min(old.qlen) as f64 * self.p.qlen_unit_bytes as f64;
                    let u =
                        tx_rate / line as f64 + qlen * self.max_rate_bps as f64 / line as f64 / w;
                    if u > big_u {
                        big_u = u;
                        dt = tau;
                    }
                }
                self.hops[i] = h;
            }
            if any {
                let t = self.p.base_rtt_ns;
                let dt = dt.min(t);
                self.u = (self.u * (t - dt) as f64 + big_u * dt as f64) / t as f64;
                let max_c = self.u / self.p.eta();
                let (mut rate, stage) = if max_c >= 1.0 || self.inc_stage >= self.p.max_stage {
                    (
                        (self.cur_rate_bps as f64 / max_c) as u64 + self.p.rate_ai_bps,
                        0,
                    )
                } else {
                    (self.cur_rate_bps + self.p.rate_ai_bps, self.inc_stage + 1)
                };
                rate = rate.clamp(self.p.min_rate_bps, self.max_rate_bps);
                self.rate_bps = rate;
                if !fast {
                    self.cur_rate_bps = rate;
                    self.inc_stage = stage;
                }
                result = if fast {
                    HpccUpdate::Fast
                } else {
                    HpccUpdate::Full
                };
            }
        }
        if !fast && next_seq > self.last_update_seq {
            self.last_update_seq = next_seq;
        }
        result
    }
}

impl RateControl for HpccSender {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    fn window_bytes(&self) -> Option<u64> {
        Some(HpccSender::window_bytes(self))
    }

    fn on_ack(&mut self, ack_seq: u64, next_seq: u64, int: &IntHeader) {
        HpccSender::on_ack(self, ack_seq, next_seq, int);
    }
}

/// The NIC's rate control under `params`: data frames carry INT.
pub fn spec(params: HpccParams) -> RateControlSpec {
    RateControlSpec::new(
        "hpcc",
        params,
        true,
        |p, host, line| p.validate(host, line),
        |p, line| Box::new(HpccSender::new(line, *p)),
    )
}

/// The HPCC artifact's NIC for HPCC (`run.py --cc hp`): its NIC ([`RdmaConfig::artifact`]:
/// 1000-byte packets, an ACK per packet, NACKs at most every 500 us, PFC honoured, ACKs in
/// the data's class, `ACK_HIGH_PRIO 0`) with HPCC under `p` (its window and rate: `HAS_WIN
/// 1`, `VAR_WIN 1`); `rto` ours.
pub fn nic(clock: Clock, p: HpccParams, rto: Cycle) -> RdmaConfig {
    RdmaConfig {
        control: Some(spec(p)),
        ..RdmaConfig::artifact(clock, rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_hop(time: u32, bytes: u32, qlen: u32) -> IntHeader {
        let mut h = IntHeader::default();
        h.push(IntHop {
            qlen,
            bytes,
            time,
            rate: 2,
        });
        h
    }

    #[test]
    fn the_senders_rate_and_window_follow_a_hand_worked_sequence_of_acks() {
        // 100 Gb/s, T = 8,320 ns: W = 104,000 B; eta 0.95, maxStage 5, R_AI 40 Mb/s, tx
        // bytes in 512-byte units, queue lengths in 176-byte cells.
        let p = HpccParams::artifact(100_000_000_000, 8_320, 5);
        assert_eq!(
            (p.window_bytes, p.rate_ai_bps, p.bytes_shift, p.eta_ppm),
            (104_000, 40_000_000, 9, 950_000)
        );
        let mut s = HpccSender::new(100_000_000_000, p);
        assert_eq!(s.window_bytes(), 104_000);
        // 1. The first ACK (byte 1,000; next to send 5,000) stores the record.
        assert_eq!(s.on_ack(1_000, 5_000, &one_hop(0, 0, 0)), HpccUpdate::First);
        assert_eq!(s.last_update_seq(), 5_000);
        // 2. Byte 2,000 <= 5,000: a fast reaction. tau = 1,000 ns, 24 units = 12,288 B:
        //    txRate = 98.304 Gb/s, u' = 0.98304 (the queue's min(100, 0) adds nothing);
        //    U = u' 1000 / 8320 = 0.11815; k = U / 0.95 < 1, stage 0 < 5: R = Rc + R_AI,
        //    capped at the line. Rc and the stage stay.
        assert_eq!(
            s.on_ack(2_000, 6_000, &one_hop(1_000, 24, 100)),
            HpccUpdate::Fast
        );
        let u2 = 0.98304f64 * 1000.0 / 8320.0;
        assert!((s.utilisation() - u2).abs() < 1e-12);
        assert_eq!((s.rate_bps(), s.stage()), (100_000_000_000, 0));
        assert_eq!(
            s.last_update_seq(),
            5_000,
            "a fast reaction keeps the sequence"
        );
        // 3. Byte 6,000 > 5,000: a full update. tau = 8,320 ns (= T, so U = u'), 203 units
        //    = 103,936 B: txRate / B = 0.99938; queue min(200, 100) = 100 cells = 17,600 B:
        //    17,600 / 104,000 = 0.16923; u' = 1.16862, k = 1.23012 >= 1:
        //    R = floor(100e9 / k) + 40e6 = 81,332,785,676 b/s, stage 0, Rc = R;
        //    W = floor(104,000 R / 100e9) = 84,586 B.
        assert_eq!(
            s.on_ack(6_000, 12_000, &one_hop(9_320, 227, 200)),
            HpccUpdate::Full
        );
        assert_eq!(s.rate_bps(), 81_332_785_676);
        assert_eq!(s.reference_rate_bps(), 81_332_785_676);
        assert_eq!(s.window_bytes(), 84_586);
        assert_eq!(s.last_update_seq(), 12_000);
        // 4. Byte 7,000: fast. tau = 1,000, u' = 0.98304, the queue min(0, 200) = 0;
        //    U = (1.16862 * 7320 + 0.98304 * 1000) / 8320 = 1.14631, k = 1.20664:
        //    R = floor(Rc / k) + R_AI = 67,444,194,781; W = 70,141 B; Rc stays.
        assert_eq!(
            s.on_ack(7_000, 13_000, &one_hop(10_320, 251, 0)),
            HpccUpdate::Fast
        );
        assert_eq!(s.rate_bps(), 67_444_194_781);
        assert_eq!(s.reference_rate_bps(), 81_332_785_676);
        assert_eq!(s.window_bytes(), 70_141);
        // 5. More than five hops: the header is ignored (the rate stays), as the
        //    artifact's `nhop <= maxHop` check.
        let mut long = one_hop(11_320, 275, 0);
        for _ in 0..5 {
            long.push(IntHop::default());
        }
        assert_eq!(s.on_ack(14_000, 20_000, &long), HpccUpdate::None);
        assert_eq!(s.rate_bps(), 67_444_194_781);
        assert_eq!(s.last_update_seq(), 20_000);
    }

    #[test]
    fn additive_steps_stop_at_max_stage() {
        // An idle link (u' = 0.5): k < 1, so Rc + R_AI for five full updates, then the
        // sixth is multiplicative (stage 5 = maxStage): Rc / k + R_AI.
        let p = HpccParams::artifact(100_000_000_000, 8_320, 5);
        let mut s = HpccSender::new(100_000_000_000, p);
        s.cur_rate_bps = 50_000_000_000;
        let mut seq = 1_000u64;
        let (mut t, mut b) = (0u32, 0u32);
        s.on_ack(seq, seq + 1, &one_hop(t, b, 0));
        // 8,320 ns at 50 Gb/s: 52,000 B = 101.5625 units; 101 units = 51,712 B.
        for stage in 1..=5u32 {
            seq += 2;
            t += 8_320;
            b += 101;
            assert_eq!(s.on_ack(seq, seq + 1, &one_hop(t, b, 0)), HpccUpdate::Full);
            assert_eq!(s.stage(), stage);
            assert_eq!(s.rate_bps(), 50_000_000_000 + stage as u64 * 40_000_000);
        }
        seq += 2;
        t += 8_320;
        b += 101;
        s.on_ack(seq, seq + 1, &one_hop(t, b, 0));
        let u = (101u64 << 9) as f64 * 8.0 / (8_320.0 * 1e-9) / 1e11;
        let k = u / 0.95;
        assert_eq!(s.stage(), 0);
        assert_eq!(s.rate_bps(), (50_200_000_000f64 / k) as u64 + 40_000_000);
    }
}
