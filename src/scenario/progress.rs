//! A progress line for long runs: how far simulated time has got, and how fast it goes in
//! simulated time per wall-clock second.
//!
//! It writes to standard error, redrawing one line, and only when standard error is a
//! terminal, so piped or captured output (and the byte-identical standard output a run
//! promises) never sees it. Redraws are at most ten a second so a fast run is not slowed
//! by printing.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};
use t2_clock::{Clock, Cycle};

/// Width of the bar in characters.
const BAR: usize = 30;
/// Least wall time between two redraws.
const REDRAW: Duration = Duration::from_millis(100);

/// The progress line of one run.
pub struct Progress {
    clock: Clock,
    end: Cycle,
    started: Instant,
    last_drawn: Option<Instant>,
    enabled: bool,
}

impl Progress {
    /// A progress line for a run to cycle `end`, drawn only if standard error is a terminal.
    pub fn new(clock: Clock, end: Cycle) -> Progress {
        Progress {
            clock,
            end,
            started: Instant::now(),
            last_drawn: None,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Notes that the run has reached cycle `now`, redrawing if it is time to.
    pub fn update(&mut self, now: Cycle) {
        if !self.enabled {
            return;
        }
        let at = Instant::now();
        if self.last_drawn.is_some_and(|t| at - t < REDRAW) && now < self.end {
            return;
        }
        self.last_drawn = Some(at);
        let line = line(self.clock, now, self.end, at - self.started);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}");
        let _ = err.flush();
    }

    /// Clears the line so what follows starts on a clean one.
    pub fn finish(&mut self) {
        if self.enabled && self.last_drawn.is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{:width$}\r", "", width = BAR + 80);
            let _ = err.flush();
        }
    }
}

/// Runs `net` to cycle `end` in 10 us slices, keeping a progress line. Stopping the kernel
/// between slices changes nothing: it visits the same cycles as one `run_until(end)`.
pub fn run_until(net: &mut t2_testbench::Network, clock: Clock, end: Cycle) {
    let mut progress = Progress::new(clock, end);
    let slice = clock.ns_to_cycles_ceil(SLICE_NS).max(1);
    let mut now = 0;
    while now < end {
        now = (now + slice).min(end);
        net.run_until(now);
        progress.update(now);
    }
    net.run_until(end);
    progress.finish();
}

/// Simulated time between two progress updates of [`run_until`].
pub const SLICE_NS: u64 = 10_000;

/// The text of the progress line at cycle `now` of `end`, `wall` after the start.
pub fn line(clock: Clock, now: Cycle, end: Cycle, wall: Duration) -> String {
    let done = if end == 0 {
        1.0
    } else {
        (now.min(end) as f64) / end as f64
    };
    let filled = ((done * BAR as f64).floor() as usize).min(BAR);
    let sim_us = clock.cycles_to_ps_round(now) as f64 / 1e6;
    let end_us = clock.cycles_to_ps_round(end) as f64 / 1e6;
    let secs = wall.as_secs_f64();
    let rate = if secs > 0.0 {
        format!("{:.1} us/s", sim_us / secs)
    } else {
        "- us/s".to_string()
    };
    format!(
        "[{}{}] {:>3.0}% {:.1} of {:.1} us simulated, {rate}",
        "#".repeat(filled),
        "-".repeat(BAR - filled),
        done * 100.0,
        sim_us,
        end_us
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_share_simulated_time_and_rate() {
        let clock = Clock::new(1_500_000_000);
        // 37,500 of 150,000 cycles (25 us of 100 us) after 2 s: 12.5 us per second.
        let l = line(clock, 37_500, 150_000, Duration::from_secs(2));
        assert_eq!(
            l,
            "[#######-----------------------]  25% 25.0 of 100.0 us simulated, 12.5 us/s"
        );
        let l = line(clock, 150_000, 150_000, Duration::ZERO);
        assert_eq!(
            l,
            "[##############################] 100% 100.0 of 100.0 us simulated, - us/s"
        );
    }
}
