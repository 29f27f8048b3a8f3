//! A test harness in the cocotb spirit around a [`Network`]: drivers act before a cycle's
//! tick, monitors observe after it, scoreboards compare what was expected with what was seen.
//!
//! The harness visits the cycles the kernel would (every cycle, or only the eventful ones
//! when jumping) plus every cycle a driver asks for, so jumping stays exact: nothing changes
//! between visited cycles, and a monitor that sees every visited cycle sees every change.

use crate::network::{Network, NodeId};
use std::any::Any;
use std::fmt;
use t2_clock::Cycle;

/// Something that acts on the network before the nodes tick in chosen cycles: it injects
/// frames (`Network::inject`) or changes nodes (`Network::node_mut`; the harness then makes
/// every node due in that cycle, so the change is seen in both stepping modes).
pub trait Driver: Any {
    /// The first cycle at or after `now` in which this driver acts, if any.
    fn next_action(&self, now: Cycle) -> Option<Cycle>;

    /// Acts in cycle `now`, before the nodes tick in it. Errors stop the run.
    fn act(&mut self, now: Cycle, net: &mut Network) -> Result<(), String>;
}

/// Something that looks at the network after every visited cycle.
pub trait Monitor: Any {
    fn observe(&mut self, now: Cycle, net: &Network);
}

/// A driver that puts given frames into one node's port at given cycles (each frame's last
/// bit arrives in its cycle), as a wire would, without a node of its own.
#[derive(Clone, Debug)]
pub struct FrameDriver {
    node: NodeId,
    port: usize,
    /// (arrival cycle, frame bytes without FCS), in cycle order.
    script: Vec<(Cycle, Vec<u8>)>,
    next: usize,
}

impl FrameDriver {
    /// Frames must be in cycle order.
    pub fn new(node: NodeId, port: usize, script: Vec<(Cycle, Vec<u8>)>) -> FrameDriver {
        debug_assert!(script.windows(2).all(|w| w[0].0 <= w[1].0));
        FrameDriver {
            node,
            port,
            script,
            next: 0,
        }
    }

    /// Frames put in so far.
    pub fn driven(&self) -> usize {
        self.next
    }
}

impl Driver for FrameDriver {
    fn next_action(&self, now: Cycle) -> Option<Cycle> {
        self.script.get(self.next).map(|f| f.0.max(now))
    }

    fn act(&mut self, now: Cycle, net: &mut Network) -> Result<(), String> {
        while let Some((at, bytes)) = self.script.get(self.next) {
            if *at > now {
                break;
            }
            net.inject(self.node, self.port, bytes, now)?;
            self.next += 1;
        }
        Ok(())
    }
}

/// A monitor from a closure.
pub struct FnMonitor<F>(pub F);

impl<F: FnMut(Cycle, &Network) + 'static> Monitor for FnMonitor<F> {
    fn observe(&mut self, now: Cycle, net: &Network) {
        (self.0)(now, net)
    }
}

/// Expected items against seen ones, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Scoreboard<T> {
    name: String,
    expected: Vec<T>,
    seen: Vec<T>,
}

/// How a scoreboard's seen items differ from the expected ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub scoreboard: String,
    pub expected: usize,
    pub seen: usize,
    /// The first position where they differ: (index, expected, seen), `None` for a missing
    /// or extra item.
    pub first: (usize, Option<String>, Option<String>),
    /// Positions that differ in all.
    pub differing: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (i, e, s) = &self.first;
        let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "nothing".into());
        write!(
            f,
            "scoreboard {}: {} expected, {} seen, {} positions differ; first at #{i}: expected {}, saw {}",
            self.scoreboard,
            self.expected,
            self.seen,
            self.differing,
            show(e),
            show(s)
        )
    }
}

impl std::error::Error for Mismatch {}

impl<T: PartialEq + fmt::Debug> Scoreboard<T> {
    pub fn new(name: &str) -> Scoreboard<T> {
        Scoreboard {
            name: name.to_string(),
            expected: Vec::new(),
            seen: Vec::new(),
        }
    }

    pub fn expect(&mut self, item: T) {
        self.expected.push(item);
    }

    pub fn saw(&mut self, item: T) {
        self.seen.push(item);
    }

    pub fn seen(&self) -> &[T] {
        &self.seen
    }

    /// Ok if what was seen is exactly what was expected, in order.
    pub fn check(&self) -> Result<(), Mismatch> {
        let n = self.expected.len().max(self.seen.len());
        let differs = |i: usize| self.expected.get(i) != self.seen.get(i);
        let Some(first) = (0..n).find(|&i| differs(i)) else {
            return Ok(());
        };
        let show = |x: Option<&T>| x.map(|v| format!("{v:?}"));
        Err(Mismatch {
            scoreboard: self.name.clone(),
            expected: self.expected.len(),
            seen: self.seen.len(),
            first: (
                first,
                show(self.expected.get(first)),
                show(self.seen.get(first)),
            ),
            differing: (0..n).filter(|&i| differs(i)).count(),
        })
    }
}

/// A network with drivers and monitors.
pub struct Harness {
    pub net: Network,
    drivers: Vec<Box<dyn Driver>>,
    monitors: Vec<Box<dyn Monitor>>,
}

impl Harness {
    pub fn new(net: Network) -> Harness {
        Harness {
            net,
            drivers: Vec::new(),
            monitors: Vec::new(),
        }
    }

    /// Adds a driver; the index finds it again with [`Harness::driver`].
    pub fn add_driver<D: Driver>(&mut self, d: D) -> usize {
        self.drivers.push(Box::new(d));
        self.drivers.len() - 1
    }

    /// Adds a monitor; the index finds it again with [`Harness::monitor`].
    pub fn add_monitor<M: Monitor>(&mut self, m: M) -> usize {
        self.monitors.push(Box::new(m));
        self.monitors.len() - 1
    }

    /// Driver `i` as its type. Panics on a wrong index or type: a test bug.
    pub fn driver<D: Driver>(&self, i: usize) -> &D {
        let any: &dyn Any = self.drivers[i].as_ref();
        any.downcast_ref::<D>().expect("driver has another type")
    }

    /// Monitor `i` as its type. Panics on a wrong index or type: a test bug.
    pub fn monitor<M: Monitor>(&self, i: usize) -> &M {
        let any: &dyn Any = self.monitors[i].as_ref();
        any.downcast_ref::<M>().expect("monitor has another type")
    }

    /// Visits the next cycle through `limit` (drivers, nodes, monitors); the visited cycle,
    /// or `None` if nothing happens through `limit`.
    fn visit_next(&mut self, limit: Cycle) -> Result<Option<Cycle>, String> {
        let started = self.net.visited_cycles() > 0;
        let from = if started { self.net.now() + 1 } else { 0 };
        let driven = self
            .drivers
            .iter()
            .filter_map(|d| d.next_action(from))
            .min();
        let Some(t) = [self.net.next_visit(), driven].into_iter().flatten().min() else {
            return Ok(None);
        };
        if t > limit {
            return Ok(None);
        }
        let mut acted = false;
        for d in &mut self.drivers {
            if d.next_action(t) == Some(t) {
                d.act(t, &mut self.net)?;
                acted = true;
            }
        }
        if acted {
            self.net.wake_all(t);
        }
        self.net.visit_cycle(t);
        for m in &mut self.monitors {
            m.observe(t, &self.net);
        }
        Ok(Some(t))
    }

    /// Runs `n` more cycles (the first `n` from the start); afterwards the network's time is
    /// the last of them.
    pub fn run_cycles(&mut self, n: Cycle) -> Result<(), String> {
        if n == 0 {
            return Ok(());
        }
        let end = if self.net.visited_cycles() == 0 {
            n - 1
        } else {
            self.net.now() + n
        };
        while self.visit_next(end)?.is_some() {}
        self.net.run_until(end); // only moves the clock: nothing is left to do through `end`
        Ok(())
    }

    /// Runs until `cond` holds after a visited cycle, or through `limit`; whether it held.
    pub fn run_until(
        &mut self,
        mut cond: impl FnMut(&Network) -> bool,
        limit: Cycle,
    ) -> Result<bool, String> {
        if self.net.visited_cycles() > 0 && cond(&self.net) {
            return Ok(true);
        }
        while self.visit_next(limit)?.is_some() {
            if cond(&self.net) {
                return Ok(true);
            }
        }
        self.net.run_until(limit);
        Ok(cond(&self.net))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Stepping;
    use crate::probe::Probe;

    const G100: u64 = 100_000_000_000;

    /// Counts visited cycles and the frames a probe has at each.
    struct Counter {
        probe: NodeId,
        seen: Vec<(Cycle, usize)>,
    }

    impl Monitor for Counter {
        fn observe(&mut self, now: Cycle, net: &Network) {
            let n = net.node::<Probe>(self.probe).received().len();
            if self.seen.last().is_none_or(|&(_, m)| m != n) {
                self.seen.push((now, n));
            }
        }
    }

    fn harness(stepping: Stepping) -> (Harness, NodeId, NodeId) {
        let mut net = Network::new(stepping);
        // A probe that sends one frame at 40 to a second probe, 10 cycles away.
        let a = net.add(Probe::new(G100, vec![(40, vec![1; 64])]));
        let b = net.add(Probe::new(G100, vec![]));
        net.link(a, 0, b, 0, 10).unwrap();
        let mut h = Harness::new(net);
        h.add_driver(FrameDriver::new(
            b,
            0,
            vec![(7, vec![7; 60]), (7, vec![8; 60]), (100, vec![9; 60])],
        ));
        h.add_monitor(Counter {
            probe: b,
            seen: Vec::new(),
        });
        (h, a, b)
    }

    #[test]
    fn drivers_act_before_the_tick_and_monitors_see_every_change() {
        let mut out = Vec::new();
        for stepping in [Stepping::Jump, Stepping::EveryCycle] {
            let (mut h, _, b) = harness(stepping);
            h.run_cycles(60).unwrap();
            assert_eq!(h.net.now(), 59);
            assert_eq!(h.driver::<FrameDriver>(0).driven(), 2);
            // Driven frames arrive in their cycle; the probe's own frame 10 cycles after 40.
            assert_eq!(h.net.node::<Probe>(b).arrivals(), vec![7, 7, 50]);
            let done = h
                .run_until(|n| n.node::<Probe>(b).received().len() == 4, 1_000)
                .unwrap();
            assert!(done);
            assert_eq!(h.net.now(), 100);
            let seen = h.monitor::<Counter>(0).seen.clone();
            assert_eq!(seen, vec![(0, 0), (7, 2), (50, 3), (100, 4)]);
            // Nothing more: the limit is reached and the condition does not hold.
            assert!(!h
                .run_until(|n| n.node::<Probe>(b).received().len() > 4, 2_000)
                .unwrap());
            assert_eq!(h.net.now(), 2_000);
            assert_eq!(h.net.live_packets(), 0);
            out.push((seen, h.net.node::<Probe>(b).received().to_vec()));
        }
        assert_eq!(out[0], out[1], "jump == step");
    }

    #[test]
    fn a_driver_into_a_missing_port_is_an_error() {
        let (mut h, a, _) = harness(Stepping::Jump);
        h.add_driver(FrameDriver::new(a, 3, vec![(5, vec![0; 60])]));
        assert_eq!(h.run_cycles(10), Err("probe has no port 3".to_string()));
    }

    #[test]
    fn scoreboards_report_the_first_difference() {
        let mut s = Scoreboard::new("arrivals");
        for x in [10u64, 20, 30] {
            s.expect(x);
        }
        s.saw(10);
        s.saw(20);
        s.saw(30);
        assert_eq!(s.check(), Ok(()));
        s.saw(40);
        let mut wrong = Scoreboard::new("arrivals");
        wrong.expect(10u64);
        wrong.expect(20);
        wrong.saw(10);
        wrong.saw(21);
        wrong.saw(30);
        assert_eq!(
            s.check().unwrap_err().to_string(),
            "scoreboard arrivals: 3 expected, 4 seen, 1 positions differ; first at #3: expected nothing, saw 40"
        );
        assert_eq!(
            wrong.check().unwrap_err().to_string(),
            "scoreboard arrivals: 2 expected, 3 seen, 2 positions differ; first at #1: expected 20, saw 21"
        );
    }
}
