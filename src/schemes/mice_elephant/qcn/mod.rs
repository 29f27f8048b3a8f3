//! The QCN reaction point (IEEE 802.1Qau; Alizadeh et al., "Data center transport
//! mechanisms: congestion control theory and IEEE standardization", 2008): a per-flow rate
//! limiter at the NIC that a congestion notification message ([`cnm::Cnm`]) cuts
//! and that a byte counter and a timer raise again.
//!
//! - On a CNM with feedback |Fb|: target `TR <- CR`, then `CR <- CR (1 - Gd |Fb|)` (not below
//!   `min_rate_bps`); both stage counters restart, the byte counter reloads, the timer
//!   restarts.
//! - Each time the byte counter has counted `byte_counter_bytes` sent (frame bytes with FCS),
//!   or the timer has run `timer` cycles, that counter completes a stage and the rate rises:
//!   - fast recovery while both counters have completed at most F stages: `TR` stays;
//!   - active increase once either has completed more than F: `TR <- TR + R_AI`;
//!   - hyper-active increase once both have: `TR <- TR + i R_HAI`, `i = min(stages) - F`;
//!
//!   then `CR <- (CR + TR) / 2`, rounded up (so that CR reaches TR instead of stalling one
//!   bit per second below it), with TR and CR capped at the line rate. When CR is back at
//!   line rate the limiter is released (no timer, no counting) until the next CNM.
//!
//! Rates count bits on the wire (frame, preamble and inter-frame gap), as the line rate does,
//! so a limiter at line rate sends back to back. The standard randomizes stage lengths
//! (to 85-115%); we do not, so runs stay exact.

pub mod blocks;
pub mod cnm;
pub mod host;
pub mod scenario;

use t2_clock::{Clock, Cycle};

/// The reaction point's parameters. [`QcnParams::standard`] gives the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QcnParams {
    /// Gd = 1 / `gd_denominator` (standard: 128, so the largest cut, |Fb| = 63, is 63/128).
    pub gd_denominator: u64,
    /// Bytes per byte-counter stage (standard: 150 KB, taken as 150,000 bytes).
    pub byte_counter_bytes: u64,
    /// Cycles per timer stage.
    pub timer: Cycle,
    /// F: stages of fast recovery (standard: 5).
    pub fast_recovery_stages: u32,
    /// R_AI, b/s (standard: 5 Mb/s).
    pub r_ai_bps: u64,
    /// R_HAI, b/s (standard: 50 Mb/s).
    pub r_hai_bps: u64,
    /// The lowest rate a cut reaches, b/s.
    pub min_rate_bps: u64,
}

impl QcnParams {
    /// The standard QCN defaults (IEEE 802.1Qau; Alizadeh et al., "Data center transport
    /// mechanisms", 2008; not re-verified here): Gd = 1/128, 150 KB byte-counter stages, 5 fast-recovery stages, R_AI = 5 Mb/s,
    /// R_HAI = 50 Mb/s. Not in that list, our choices: a 15 ms timer stage and a 10 Mb/s
    /// floor.
    pub fn standard(clock: Clock) -> QcnParams {
        QcnParams {
            gd_denominator: 128,
            byte_counter_bytes: 150_000,
            timer: clock.ns_to_cycles_ceil(15_000_000),
            fast_recovery_stages: 5,
            r_ai_bps: 5_000_000,
            r_hai_bps: 50_000_000,
            min_rate_bps: 10_000_000,
        }
    }

    /// Checks the parameters against a NIC of `line_bps`, naming `what` in the error.
    pub fn validate(&self, what: &str, line_bps: u64) -> Result<(), String> {
        let nonzero = [
            ("gd_denominator", self.gd_denominator),
            ("byte_counter_bytes", self.byte_counter_bytes),
            ("timer", self.timer),
            ("min_rate_bps", self.min_rate_bps),
        ];
        if let Some((name, _)) = nonzero.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{what}.qcn.{name}: must be above 0"));
        }
        if self.gd_denominator < 63 {
            return Err(format!(
                "{what}.qcn.gd_denominator: {} is below 63, so a cut could exceed the rate",
                self.gd_denominator
            ));
        }
        if self.min_rate_bps > line_bps {
            return Err(format!(
                "{what}.qcn.min_rate_bps: {} is above the line rate {line_bps}",
                self.min_rate_bps
            ));
        }
        Ok(())
    }
}

/// One flow's reaction point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReactionPoint {
    p: QcnParams,
    line_bps: u64,
    /// Current rate CR and target rate TR, b/s.
    cr: u64,
    tr: u64,
    /// Bytes left in the current byte-counter stage.
    bytes_left: u64,
    bc_stages: u32,
    timer_stages: u32,
    /// When the current timer stage ends (meaningful while limiting).
    timer_at: Cycle,
    cnms: u64,
}

impl ReactionPoint {
    /// A reaction point at line rate (not limiting).
    pub fn new(line_bps: u64, p: QcnParams) -> ReactionPoint {
        ReactionPoint {
            p,
            line_bps,
            cr: line_bps,
            tr: line_bps,
            bytes_left: p.byte_counter_bytes,
            bc_stages: 0,
            timer_stages: 0,
            timer_at: 0,
            cnms: 0,
        }
    }

    /// The current rate CR, b/s.
    pub fn rate_bps(&self) -> u64 {
        self.cr
    }

    /// The target rate TR, b/s.
    pub fn target_bps(&self) -> u64 {
        self.tr
    }

    /// Stages completed since the last CNM: (byte counter, timer).
    pub fn stages(&self) -> (u32, u32) {
        (self.bc_stages, self.timer_stages)
    }

    /// CNMs applied.
    pub fn cnms(&self) -> u64 {
        self.cnms
    }

    /// Whether the limiter holds the flow below line rate.
    pub fn limiting(&self) -> bool {
        self.cr < self.line_bps
    }

    /// When the timer completes its next stage, while limiting.
    pub fn timer_at(&self) -> Option<Cycle> {
        self.limiting().then_some(self.timer_at)
    }

    /// A CNM with quantized feedback `qntz_fb` arrived in cycle `now`.
    pub fn on_cnm(&mut self, now: Cycle, qntz_fb: u8) {
        self.cnms += 1;
        self.tr = self.cr;
        let cut = (self.cr as u128 * qntz_fb as u128 / self.p.gd_denominator as u128) as u64;
        self.cr = (self.cr - cut).max(self.p.min_rate_bps);
        self.bytes_left = self.p.byte_counter_bytes;
        self.bc_stages = 0;
        self.timer_stages = 0;
        self.timer_at = now + self.p.timer;
    }

    /// The flow started a frame of `bytes` (FCS included).
    pub fn on_sent(&mut self, mut bytes: u64) {
        while self.limiting() && bytes >= self.bytes_left {
            bytes -= self.bytes_left;
            self.bytes_left = self.p.byte_counter_bytes;
            self.bc_stages += 1;
            self.increase();
        }
        if self.limiting() {
            self.bytes_left -= bytes;
        }
    }

    /// Completes the timer stages due by `now`.
    pub fn on_time(&mut self, now: Cycle) {
        while self.limiting() && self.timer_at <= now {
            self.timer_at += self.p.timer;
            self.timer_stages += 1;
            self.increase();
        }
    }

    fn increase(&mut self) {
        let f = self.p.fast_recovery_stages;
        let (bc, t) = (self.bc_stages, self.timer_stages);
        if bc > f && t > f {
            let i = (bc.min(t) - f) as u64;
            self.tr = self.tr.saturating_add(i.saturating_mul(self.p.r_hai_bps));
        } else if bc > f || t > f {
            self.tr = self.tr.saturating_add(self.p.r_ai_bps);
        }
        self.tr = self.tr.min(self.line_bps);
        self.cr = ((self.cr as u128 + self.tr as u128).div_ceil(2) as u64).min(self.line_bps);
    }
}

/// The flow id our transport puts after the TCP header, found in the first bytes of an IPv4
/// packet (a CNM's encapsulated MSDU). `None` if they are not IPv4/TCP or too short.
pub fn flow_id_in_msdu(msdu: &[u8]) -> Option<u32> {
    let ihl = (*msdu.first()? & 0x0f) as usize * 4;
    if *msdu.first()? >> 4 != 4 || *msdu.get(9)? != 6 || ihl < 20 {
        return None;
    }
    let tcp_len = (*msdu.get(ihl + 12)? >> 4) as usize * 4;
    let at = ihl + tcp_len;
    Some(u32::from_be_bytes(msdu.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    fn params() -> QcnParams {
        QcnParams::standard(Clock::tofino2())
    }

    #[test]
    fn standard_defaults() {
        let p = params();
        assert_eq!(p.timer, 22_500_000, "15 ms at 1.5 GHz");
        assert_eq!(
            (
                p.gd_denominator,
                p.byte_counter_bytes,
                p.fast_recovery_stages
            ),
            (128, 150_000, 5)
        );
        assert_eq!((p.r_ai_bps, p.r_hai_bps), (5_000_000, 50_000_000));
        assert_eq!(p.validate("t", G100), Ok(()));
        let bad = QcnParams {
            byte_counter_bytes: 0,
            ..p
        };
        assert_eq!(
            bad.validate("transport", G100).unwrap_err(),
            "transport.qcn.byte_counter_bytes: must be above 0"
        );
        assert!(p
            .validate("t", 1_000_000)
            .unwrap_err()
            .contains("min_rate_bps"));
    }

    #[test]
    fn one_cnm_cuts_by_gd_times_fb() {
        let mut rp = ReactionPoint::new(G100, params());
        assert!(!rp.limiting() && rp.timer_at().is_none());
        rp.on_cnm(1000, 32);
        // 100 G x (1 - 32/128) = 75 G; the target remembers the rate before the cut.
        assert_eq!((rp.rate_bps(), rp.target_bps()), (75_000_000_000, G100));
        assert_eq!(rp.timer_at(), Some(1000 + 22_500_000));
        // The largest feedback cuts 63/128: 75 G - 36,914,062,500 = 38,085,937,500.
        rp.on_cnm(2000, 63);
        assert_eq!(
            (rp.rate_bps(), rp.target_bps()),
            (38_085_937_500, 75_000_000_000)
        );
        // Never below the floor.
        for _ in 0..20 {
            rp.on_cnm(3000, 63);
        }
        assert_eq!(rp.rate_bps(), 10_000_000);
    }

    #[test]
    fn byte_counter_stages_recover_then_increase() {
        let mut rp = ReactionPoint::new(G100, params());
        rp.on_cnm(0, 63);
        rp.on_cnm(0, 63);
        // CR = 50,781,250,000 - floor(50,781,250,000 x 63 / 128) = 25,787,353,516.
        assert_eq!(
            (rp.rate_bps(), rp.target_bps()),
            (25_787_353_516, 50_781_250_000)
        );
        // 149,999 bytes complete no stage; one more byte completes the first.
        rp.on_sent(149_999);
        assert_eq!(rp.stages(), (0, 0));
        rp.on_sent(1);
        assert_eq!(rp.stages(), (1, 0));
        // Fast recovery: CR <- ceil((CR + TR) / 2), TR fixed.
        assert_eq!(rp.rate_bps(), 38_284_301_758);
        let mut rates = vec![rp.rate_bps()];
        for _ in 0..6 {
            rp.on_sent(150_000);
            rates.push(rp.rate_bps());
        }
        assert_eq!(
            rates,
            vec![
                38_284_301_758,
                44_532_775_879,
                47_657_012_940,
                49_219_131_470,
                50_000_190_735, // stage 5: the last of fast recovery
                50_393_220_368, // stage 6: active increase, TR = 50,786,250,000
                50_592_235_184, // stage 7: TR = 50,791,250,000
            ]
        );
        assert_eq!(rp.target_bps(), 50_791_250_000);
        assert_eq!(rp.stages(), (7, 0));
        // A frame that spans two stages completes both.
        rp.on_sent(300_000);
        assert_eq!(rp.stages(), (9, 0));
    }

    #[test]
    fn timer_stages_and_hyper_active_increase() {
        let p = QcnParams {
            timer: 100,
            ..params()
        };
        let mut rp = ReactionPoint::new(G100, p);
        rp.on_cnm(0, 63);
        rp.on_cnm(0, 63);
        for _ in 0..6 {
            rp.on_sent(150_000);
        }
        // Six timer stages, due at 100..600: the first five are active increase (the byte
        // counter is past fast recovery), the sixth hyper-active with i = 1.
        rp.on_time(599);
        assert_eq!(rp.stages(), (6, 5));
        let tr = rp.target_bps();
        assert_eq!(tr, 50_781_250_000 + 6 * 5_000_000);
        rp.on_time(600);
        assert_eq!(rp.stages(), (6, 6));
        assert_eq!(rp.target_bps(), tr + 50_000_000);
        // Back at line rate the limiter lets go: no timer, the counters stop.
        for _ in 0..2000 {
            rp.on_sent(150_000);
        }
        assert_eq!(rp.rate_bps(), G100);
        assert!(!rp.limiting() && rp.timer_at().is_none());
        let stages = rp.stages();
        rp.on_sent(1_000_000);
        assert_eq!(rp.stages(), stages);
    }

    #[test]
    fn the_flow_id_is_found_after_the_tcp_header() {
        let mut m = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 6];
        m.resize(20, 0);
        m.extend_from_slice(&[0; 12]);
        m.push(0x50);
        m.resize(40, 0);
        m.extend_from_slice(&77u32.to_be_bytes());
        assert_eq!(flow_id_in_msdu(&m), Some(77));
        assert_eq!(flow_id_in_msdu(&m[..42]), None);
        m[9] = 17;
        assert_eq!(flow_id_in_msdu(&m), None);
    }
}
