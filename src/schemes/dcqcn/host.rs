//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015), as the HPCC ns-3 artifact's NIC runs it
//! ("Mellanox's version", `RdmaHw::*Mlx` in `simulation/src/point-to-point/model/rdma-hw.cc`),
//! with the paper's byte counter as an option: the rate control ([`Dcqcn`], built by
//! [`spec`]) the RDMA NIC runs for the `dcqcn` scheme ([`nic`]).
//!
//! One QP's state: current rate `Rc`, target rate `Rt`, `alpha`, and three timers.
//! - A CNP sets two flags. The first CNP of the QP also sets `alpha = 1`, starts the alpha
//!   and decrease timers, and sets `Rt = Rc` (the artifact's `RateOnFirstCnp` of 1).
//! - Every `alpha_interval`: `alpha = (1 - g) alpha + g` if a CNP came since the last update,
//!   else `alpha = (1 - g) alpha`.
//! - Every `decrease_interval` (the first one after the first CNP): if a CNP came since the
//!   last check, `Rt = Rc` (unless the QP is in its first fast-recovery stage and
//!   `clamp_target` is off), `Rc = max(min_rate, Rc (1 - alpha / 2))`, the increase stage
//!   goes back to 0 and the increase timer restarts.
//! - Every `increase_interval` after the last decrease, an increase event, then the stage
//!   counts up: below `fast_recovery_stages`, fast recovery `Rc = (Rc + Rt) / 2`; at it,
//!   additive increase `Rt += ai` (at most the line) then the same; above it, hyper increase
//!   with `hai`.
//! - With a byte counter (the paper's; the artifact has none), every `byte_counter_bytes`
//!   sent is an increase event too, counted in a stage of its own; then the paper's rule
//!   picks the phase: fast recovery while both stages are below F, hyper increase once both
//!   are above it, additive increase otherwise.
//!
//! When the alpha update and the decrease check fall in the same cycle the alpha update goes
//! first, as the artifact's one-nanosecond offset makes it. Rates are whole b/s, rounded down
//! after each step as the artifact's `DataRate` arithmetic does.
//!
//! Only the timers that change the rate wake the host: the increase timer, and the decrease
//! check while a CNP waits for it. The alpha updates and the checks that find no CNP change
//! nothing anyone sees until alpha is next read, so they run late, when a CNP or a decrease
//! needs them (or `on_time` is called), with the same floating-point steps in the same order.
//! A QP that is open but not being marked then costs nothing per microsecond (a host with n
//! such QPs was woken n times a microsecond and did O(n) work on each).

use std::any::Any;
use t2_clock::{Clock, Cycle};
use t2_testbench::rdma::{RateControl, RateControlSpec, RdmaConfig, CONTROL_DSCP};

/// The reaction point's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnParams {
    /// The EWMA gain g is `1 / g_denominator`.
    pub g_denominator: u64,
    /// Period of the alpha update, cycles.
    pub alpha_interval: Cycle,
    /// Period of the rate-decrease check, cycles.
    pub decrease_interval: Cycle,
    /// Period of the rate-increase timer, cycles.
    pub increase_interval: Cycle,
    /// Increase stages of fast recovery (F).
    pub fast_recovery_stages: u32,
    /// Additive and hyper increase steps, b/s.
    pub ai_bps: u64,
    pub hai_bps: u64,
    /// The lowest rate a decrease leaves, b/s.
    pub min_rate_bps: u64,
    /// Whether every decrease sets the target rate (the artifact's `ClampTargetRate`).
    pub clamp_target: bool,
    /// Bytes per byte-counter increase event; `None`: no byte counter (the artifact's).
    pub byte_counter_bytes: Option<u64>,
}

impl DcqcnParams {
    /// The HPCC artifact's DCQCN for NICs of `line_bps` (`simulation/run.py`, `--cc dcqcn`):
    /// alpha every 1 us, decrease check every 4 us, increase every 300 us, g = 1/256, one
    /// fast-recovery stage, AI 5 Mb/s and HAI 50 Mb/s per 25 Gb/s of line rate, minimum rate
    /// 1 Gb/s (`MIN_RATE 1000Mb/s`), no target clamp, no byte counter.
    pub fn artifact(clock: Clock, line_bps: u64) -> DcqcnParams {
        let us = |n: u64| clock.ns_to_cycles_ceil(n * 1000);
        let per_25g = line_bps / 25_000_000_000;
        DcqcnParams {
            g_denominator: 256,
            alpha_interval: us(1),
            decrease_interval: us(4),
            increase_interval: us(300),
            fast_recovery_stages: 1,
            ai_bps: 5_000_000 * per_25g.max(1),
            hai_bps: 50_000_000 * per_25g.max(1),
            min_rate_bps: 1_000_000_000,
            clamp_target: false,
            byte_counter_bytes: None,
        }
    }

    /// Checks the parameters against NICs of `line_bps`; the error names the field.
    pub fn validate(&self, host: &str, line_bps: u64) -> Result<(), String> {
        let bad = |what: &str, why: String| Err(format!("{host}: dcqcn.{what}: {why}"));
        if self.g_denominator < 2 {
            return bad(
                "g_denominator",
                format!("{} is below 2 (g = 1/denominator < 1)", self.g_denominator),
            );
        }
        for (name, v) in [
            ("alpha_interval", self.alpha_interval),
            ("decrease_interval", self.decrease_interval),
            ("increase_interval", self.increase_interval),
        ] {
            if v == 0 {
                return bad(name, "must be at least one cycle".into());
            }
        }
        if self.min_rate_bps == 0 || self.min_rate_bps > line_bps {
            return bad(
                "min_rate_bps",
                format!(
                    "{} is outside 1..={line_bps} (the line rate)",
                    self.min_rate_bps
                ),
            );
        }
        if self.byte_counter_bytes == Some(0) {
            return bad("byte_counter_bytes", "must be above 0 (or unset)".into());
        }
        Ok(())
    }
}

/// What a reaction point did at one event (for traces and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpEvent {
    Decrease,
    FastRecovery,
    AdditiveIncrease,
    HyperIncrease,
}

/// One QP's reaction point.
#[derive(Clone, Debug, PartialEq)]
pub struct ReactionPoint {
    params: DcqcnParams,
    line_bps: u64,
    rate_bps: u64,
    target_bps: u64,
    alpha: f64,
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// Increase events since the last decrease, by timer and by byte counter.
    timer_stage: u32,
    byte_stage: u32,
    bytes_counted: u64,
    /// The cycle of the first alpha update not yet applied (updates run late, see above).
    next_alpha: Option<Cycle>,
    /// The next decrease check while `decrease_cnp` is set; otherwise a check at or before
    /// it (the checks between find no CNP and are skipped).
    next_decrease: Option<Cycle>,
    next_increase: Option<Cycle>,
    cnps: u64,
}

impl ReactionPoint {
    /// A QP sending at `line_bps`, no CNP seen yet.
    pub fn new(line_bps: u64, params: DcqcnParams) -> ReactionPoint {
        ReactionPoint {
            params,
            line_bps,
            rate_bps: line_bps,
            target_bps: line_bps,
            alpha: 1.0,
            alpha_cnp: false,
            decrease_cnp: false,
            timer_stage: 0,
            byte_stage: 0,
            bytes_counted: 0,
            next_alpha: None,
            next_decrease: None,
            next_increase: None,
            cnps: 0,
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    pub fn target_bps(&self) -> u64 {
        self.target_bps
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// CNPs received.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// A CNP received in cycle `now`, before the timers due in `now` fire.
    pub fn on_cnp(&mut self, now: Cycle) {
        self.cnps += 1;
        if self.next_alpha.is_none() {
            self.alpha = 1.0;
            self.next_alpha = Some(now + self.params.alpha_interval);
            self.next_decrease = Some(now + self.params.decrease_interval);
            self.target_bps = self.rate_bps;
            self.decrease_cnp = true;
            return;
        }
        // The updates before this CNP see no CNP since theirs.
        self.update_alpha(now);
        self.alpha_cnp = true;
        if !self.decrease_cnp {
            // The checks before `now` found no CNP: the next that counts is the first at or
            // after `now`.
            let interval = self.params.decrease_interval;
            if let Some(d) = self.next_decrease.as_mut() {
                if *d < now {
                    *d += (now - *d).div_ceil(interval) * interval;
                }
            }
            self.decrease_cnp = true;
        }
    }

    /// Applies the alpha updates due before cycle `before`, in order.
    fn update_alpha(&mut self, before: Cycle) {
        let Some(mut t) = self.next_alpha else {
            return;
        };
        let g = 1.0 / self.params.g_denominator as f64;
        while t < before {
            self.alpha = (1.0 - g) * self.alpha + if self.alpha_cnp { g } else { 0.0 };
            self.alpha_cnp = false;
            t += self.params.alpha_interval;
        }
        self.next_alpha = Some(t);
    }

    /// `bytes` of a frame sent (the byte counter's input).
    pub fn on_sent(&mut self, bytes: u64) -> Option<RpEvent> {
        let bc = self.params.byte_counter_bytes?;
        // Counting starts with the first decrease, as the increase timer does.
        self.next_increase?;
        self.bytes_counted += bytes;
        if self.bytes_counted < bc {
            return None;
        }
        self.bytes_counted -= bc;
        let e = self.increase();
        self.byte_stage += 1;
        Some(e)
    }

    /// The first cycle a timer that can change the rate is due: the increase timer, or the
    /// decrease check a CNP waits for.
    pub fn timer_at(&self) -> Option<Cycle> {
        let decrease = self.next_decrease.filter(|_| self.decrease_cnp);
        [decrease, self.next_increase].into_iter().flatten().min()
    }

    /// Fires every timer due by `now`, in time order (the alpha update first, then the
    /// decrease check, in a tie), pushing what the rate did onto `events`.
    pub fn on_time(&mut self, now: Cycle, events: &mut Vec<(Cycle, RpEvent)>) {
        while let Some(t) = self.timer_at().filter(|&t| t <= now) {
            if self.decrease_cnp && self.next_decrease == Some(t) {
                self.update_alpha(t + 1);
                self.next_decrease = Some(t + self.params.decrease_interval);
                self.decrease(t);
                events.push((t, RpEvent::Decrease));
            } else {
                self.next_increase = Some(t + self.params.increase_interval);
                let e = self.increase();
                self.timer_stage += 1;
                events.push((t, e));
            }
        }
        self.update_alpha(now + 1);
    }

    fn decrease(&mut self, now: Cycle) {
        if self.params.clamp_target || self.timer_stage != 0 {
            self.target_bps = self.rate_bps;
        }
        let cut = self.rate_bps as f64 * (1.0 - self.alpha / 2.0);
        self.rate_bps = (cut as u64).max(self.params.min_rate_bps);
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes_counted = 0;
        self.decrease_cnp = false;
        self.next_increase = Some(now + self.params.increase_interval);
    }

    /// One increase event with the stages as they are.
    fn increase(&mut self) -> RpEvent {
        let f = self.params.fast_recovery_stages;
        let (t, b) = (self.timer_stage, self.byte_stage);
        let event = match self.params.byte_counter_bytes {
            None if t < f => RpEvent::FastRecovery,
            None if t == f => RpEvent::AdditiveIncrease,
            None => RpEvent::HyperIncrease,
            Some(_) if t.max(b) < f => RpEvent::FastRecovery,
            Some(_) if t.min(b) > f => RpEvent::HyperIncrease,
            Some(_) => RpEvent::AdditiveIncrease,
        };
        let step = match event {
            RpEvent::AdditiveIncrease => self.params.ai_bps,
            RpEvent::HyperIncrease => self.params.hai_bps,
            _ => 0,
        };
        self.target_bps = (self.target_bps + step).min(self.line_bps);
        self.rate_bps = self.rate_bps / 2 + self.target_bps / 2;
        event
    }
}

/// DCQCN as one QP's rate control: its reaction point, and what it did with the cycles
/// (kept for tests and traces).
#[derive(Clone, Debug, PartialEq)]
pub struct Dcqcn {
    rp: ReactionPoint,
    events: Vec<(Cycle, RpEvent)>,
}

impl Dcqcn {
    pub fn new(line_bps: u64, params: DcqcnParams) -> Dcqcn {
        Dcqcn {
            rp: ReactionPoint::new(line_bps, params),
            events: Vec::new(),
        }
    }

    pub fn reaction_point(&self) -> &ReactionPoint {
        &self.rp
    }

    /// What the reaction point did, with the cycles.
    pub fn events(&self) -> &[(Cycle, RpEvent)] {
        &self.events
    }
}

impl RateControl for Dcqcn {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn rate_bps(&self) -> u64 {
        self.rp.rate_bps()
    }

    fn on_cnp(&mut self, now: Cycle) -> bool {
        self.rp.on_cnp(now);
        true
    }

    /// A byte-counter increase happens as the frame starts.
    fn on_sent(&mut self, bytes: u64, at: Cycle) {
        if let Some(e) = self.rp.on_sent(bytes) {
            self.events.push((at, e));
        }
    }

    fn timer_at(&self) -> Option<Cycle> {
        self.rp.timer_at()
    }

    fn on_time(&mut self, now: Cycle) {
        self.rp.on_time(now, &mut self.events);
    }
}

/// The NIC's rate control under `params`.
pub fn spec(params: DcqcnParams) -> RateControlSpec {
    RateControlSpec::new(
        "dcqcn",
        params,
        false,
        |p, host, line| p.validate(host, line),
        |p, line| Box::new(Dcqcn::new(line, *p)),
    )
}

/// The HPCC artifact's NIC for DCQCN at `line_bps` (`run.py --cc dcqcn`): its NIC
/// ([`RdmaConfig::artifact`]) with DCQCN's artifact parameters, and ACKs, NACKs and CNPs in
/// a class of their own (DSCP [`CONTROL_DSCP`], `ACK_HIGH_PRIO 1`); `rto` ours.
pub fn nic(clock: Clock, line_bps: u64, rto: Cycle) -> RdmaConfig {
    RdmaConfig {
        control: Some(spec(DcqcnParams::artifact(clock, line_bps))),
        control_dscp: Some(CONTROL_DSCP),
        ..RdmaConfig::artifact(clock, rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    fn clock() -> Clock {
        Clock::tofino2()
    }

    #[test]
    fn the_reaction_point_follows_the_artifacts_formulas_step_by_step() {
        // The artifact's DCQCN at 100 Gb/s: alpha every 1 us (1,500 cycles), decrease checks
        // every 4 us (6,000), increases every 300 us (450,000), g = 1/256, F = 1, AI 20 Mb/s.
        let p = DcqcnParams::artifact(clock(), G100);
        assert_eq!(
            (p.alpha_interval, p.decrease_interval, p.increase_interval),
            (1_500, 6_000, 450_000)
        );
        assert_eq!(
            (p.ai_bps, p.hai_bps, p.min_rate_bps),
            (20_000_000, 200_000_000, 1_000_000_000)
        );
        let mut rp = ReactionPoint::new(G100, p);
        let mut events = Vec::new();
        // First CNP at 0: alpha = 1, Rt = Rc = 100 Gb/s, timers from 0. The first timer that
        // can change the rate is the decrease check the CNP waits for (the alpha updates before
        // it run when it does).
        rp.on_cnp(0);
        assert_eq!(rp.timer_at(), Some(6_000));
        rp.on_time(5_999, &mut events);
        assert!(events.is_empty(), "no decrease before the first check");
        // Alpha decays four times without a CNP by 6,000 (the update runs before the check in
        // the same cycle): alpha = (255/256)^4 = 0.98447; Rc = floor(100e9 (1 - alpha / 2)).
        rp.on_time(6_000, &mut events);
        assert_eq!(events, [(6_000, RpEvent::Decrease)]);
        assert_eq!(rp.alpha(), (255.0f64 / 256.0).powi(4));
        assert_eq!(rp.rate_bps(), 50_776_684_272);
        assert_eq!(rp.target_bps(), G100, "stage 0: the target is not clamped");
        // A CNP at 7,000: the 7,500 update adds g, then 9,000, 10,500, 12,000 decay:
        // alpha = ((1 - g) a4 + g)(1 - g)^3 = 0.97303; the check at 12,000 cuts again.
        rp.on_cnp(7_000);
        rp.on_time(12_000, &mut events);
        let a = ((1.0 - 1.0 / 256.0) * (255.0f64 / 256.0).powi(4) + 1.0 / 256.0)
            * (255.0f64 / 256.0).powi(3);
        assert_eq!(rp.alpha(), a);
        assert_eq!(events[1], (12_000, RpEvent::Decrease));
        assert_eq!(rp.rate_bps(), 26_072_949_528);
        // No more CNPs: the increase timer runs from the last decrease. 462,000: fast recovery
        // Rc = (Rc + Rt) / 2; 912,000: stage 1 = F, additive increase (Rt stays at the line);
        // 1,362,000: hyper increase.
        rp.on_time(1_362_000, &mut events);
        assert_eq!(
            &events[2..],
            [
                (462_000, RpEvent::FastRecovery),
                (912_000, RpEvent::AdditiveIncrease),
                (1_362_000, RpEvent::HyperIncrease),
            ]
        );
        assert_eq!(rp.rate_bps(), 90_759_118_691);
        assert_eq!(rp.cnps(), 2);
    }

    #[test]
    fn the_byte_counter_follows_the_papers_stage_rule() {
        let p = DcqcnParams {
            byte_counter_bytes: Some(10_000),
            increase_interval: 1_000_000,
            ..DcqcnParams::artifact(clock(), G100)
        };
        let mut rp = ReactionPoint::new(G100, p);
        let mut ev = Vec::new();
        rp.on_cnp(0);
        rp.on_time(6_000, &mut ev);
        assert_eq!(ev, [(6_000, RpEvent::Decrease)]);
        // Byte stage 0 and timer stage 0 are below F = 1: fast recovery; then byte stage 1
        // with timer stage 0: additive increase (max(T, B) >= F, min(T, B) <= F).
        assert_eq!(rp.on_sent(9_999), None);
        assert_eq!(rp.on_sent(1), Some(RpEvent::FastRecovery));
        assert_eq!(rp.on_sent(10_000), Some(RpEvent::AdditiveIncrease));
        assert_eq!(rp.target_bps(), G100);
    }

    /// DCQCN's reaction point as the artifact runs it, every timer firing in its own cycle: the
    /// reference the late alpha updates and skipped checks of `ReactionPoint` must equal.
    struct EveryTimer {
        p: DcqcnParams,
        line: u64,
        rate: u64,
        target: u64,
        alpha: f64,
        alpha_cnp: bool,
        decrease_cnp: bool,
        timer_stage: u32,
        byte_stage: u32,
        bytes: u64,
        timers: Option<[Cycle; 2]>,
        increase_at: Option<Cycle>,
    }

    impl EveryTimer {
        fn new(line: u64, p: DcqcnParams) -> EveryTimer {
            EveryTimer {
                p,
                line,
                rate: line,
                target: line,
                alpha: 1.0,
                alpha_cnp: false,
                decrease_cnp: false,
                timer_stage: 0,
                byte_stage: 0,
                bytes: 0,
                timers: None,
                increase_at: None,
            }
        }

        fn on_cnp(&mut self, now: Cycle) {
            self.alpha_cnp = true;
            self.decrease_cnp = true;
            if self.timers.is_none() {
                self.alpha = 1.0;
                self.alpha_cnp = false;
                self.timers = Some([now + self.p.alpha_interval, now + self.p.decrease_interval]);
                self.target = self.rate;
            }
        }

        fn increase(&mut self) -> RpEvent {
            let f = self.p.fast_recovery_stages;
            let (t, b) = (self.timer_stage, self.byte_stage);
            let e = match self.p.byte_counter_bytes {
                None if t < f => RpEvent::FastRecovery,
                None if t == f => RpEvent::AdditiveIncrease,
                None => RpEvent::HyperIncrease,
                Some(_) if t.max(b) < f => RpEvent::FastRecovery,
                Some(_) if t.min(b) > f => RpEvent::HyperIncrease,
                Some(_) => RpEvent::AdditiveIncrease,
            };
            let step = match e {
                RpEvent::AdditiveIncrease => self.p.ai_bps,
                RpEvent::HyperIncrease => self.p.hai_bps,
                _ => 0,
            };
            self.target = (self.target + step).min(self.line);
            self.rate = self.rate / 2 + self.target / 2;
            e
        }

        fn on_sent(&mut self, bytes: u64) -> Option<RpEvent> {
            let bc = self.p.byte_counter_bytes?;
            self.increase_at?;
            self.bytes += bytes;
            if self.bytes < bc {
                return None;
            }
            self.bytes -= bc;
            let e = self.increase();
            self.byte_stage += 1;
            Some(e)
        }

        /// Every cycle from `from` to `to`, each timer due in it firing (alpha, then the check,
        /// then the increase).
        fn run(&mut self, from: Cycle, to: Cycle, events: &mut Vec<(Cycle, RpEvent)>) {
            let g = 1.0 / self.p.g_denominator as f64;
            for t in from..=to {
                let Some([alpha_at, decrease_at]) = self.timers.as_mut() else {
                    return;
                };
                if *alpha_at == t {
                    self.alpha = (1.0 - g) * self.alpha + if self.alpha_cnp { g } else { 0.0 };
                    self.alpha_cnp = false;
                    *alpha_at += self.p.alpha_interval;
                }
                if *decrease_at == t {
                    *decrease_at += self.p.decrease_interval;
                    if self.decrease_cnp {
                        if self.p.clamp_target || self.timer_stage != 0 {
                            self.target = self.rate;
                        }
                        let cut = self.rate as f64 * (1.0 - self.alpha / 2.0);
                        self.rate = (cut as u64).max(self.p.min_rate_bps);
                        (self.timer_stage, self.byte_stage, self.bytes) = (0, 0, 0);
                        self.decrease_cnp = false;
                        self.increase_at = Some(t + self.p.increase_interval);
                        events.push((t, RpEvent::Decrease));
                        continue;
                    }
                }
                if self.increase_at == Some(t) {
                    self.increase_at = Some(t + self.p.increase_interval);
                    let e = self.increase();
                    self.timer_stage += 1;
                    events.push((t, e));
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// CNPs, sent frames and looks at the state at random cycles, handled as the host does:
        /// it wakes only for `timer_at`, and a CNP arrives before the cycle's timers fire, a
        /// frame leaves after them. Rates, target, alpha and every rate event equal a reaction
        /// point whose every timer fires in its own cycle.
        #[test]
        fn late_alpha_updates_equal_every_timer_firing(
            ops in proptest::collection::vec((1u64..4_000, 0u8..3, 1u64..3_000), 1..120),
            byte_counter in proptest::option::of(2_000u64..40_000),
            clamp in proptest::bool::ANY,
        ) {
            // Short intervals (alpha 7 cycles, checks 30, increases 400) so that random ops
            // land on every kind of tie.
            let p = DcqcnParams {
                alpha_interval: 7,
                decrease_interval: 30,
                increase_interval: 400,
                clamp_target: clamp,
                byte_counter_bytes: byte_counter,
                ..DcqcnParams::artifact(clock(), G100)
            };
            let (mut late, mut every) = (ReactionPoint::new(G100, p), EveryTimer::new(G100, p));
            let (mut late_events, mut every_events) = (Vec::new(), Vec::new());
            let (mut now, mut ran_to) = (0, 0);
            for (gap, kind, bytes) in ops {
                now += gap;
                // The host's visits before `now`: one at each cycle a timer is due.
                while let Some(t) = late.timer_at().filter(|&t| t < now) {
                    late.on_time(t, &mut late_events);
                }
                every.run(ran_to, now - 1, &mut every_events);
                ran_to = now;
                match kind {
                    0 => {
                        late.on_cnp(now);
                        every.on_cnp(now);
                    }
                    1 => {
                        late.on_time(now, &mut late_events);
                        every.run(now, now, &mut every_events);
                        ran_to = now + 1;
                        proptest::prop_assert_eq!(late.on_sent(bytes), every.on_sent(bytes));
                    }
                    _ => {
                        late.on_time(now, &mut late_events);
                        every.run(now, now, &mut every_events);
                        ran_to = now + 1;
                        proptest::prop_assert_eq!(late.alpha(), every.alpha);
                    }
                }
                proptest::prop_assert_eq!(
                    (late.rate_bps(), late.target_bps()),
                    (every.rate, every.target)
                );
                proptest::prop_assert_eq!(&late_events, &every_events);
            }
        }
    }
}
