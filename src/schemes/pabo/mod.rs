//! PABO (packet bounce, Shi et al.): a switch whose egress queue toward a packet's
//! destination is filling bounces the packet back toward its source with a probability that
//! grows with the queue's utilisation; the hosts resend packets that come back to them. The
//! page is `docs/schemes/pabo.md`. The switch program is `pabo.p4`;
//! `programs/pabo_switch.json` is generated from it.
//!
//! The mechanism, as the paper (arXiv 1802.07429, §3) and the authors' OMNeT++/INET code
//! (`Xiang-Shi/inet`) give it:
//!
//! - u_q = L_q / C_q of the queue the packet would join (the data queue, or the bounce queue
//!   for a packet bounced before), forced to 1 when L_q > C_q - N (N upstream neighbours may
//!   decide at once: the authors' guard);
//! - P(u, n_p) = 0 for u <= theta, else
//!   `(exp(lambda (theta - u) / (1 + n_p)) - 1) / (exp(lambda (theta - 1) / (1 + n_p)) - 1)`;
//! - a bounce sends the packet back toward its source, increments n_p (never decremented)
//!   and puts it in the bounce queue, served in strict priority above the data queue;
//!   packets that carry n_p > 0 use the bounce queue at every later hop.
//!
//! On Tofino2 (what this program does):
//!
//! - L_q comes from the TM's queue-depth feed into the ghost thread, which keeps every
//!   queue's depth in cells in register array `queue_depth` (index `pipe:2 | qid:11`, the
//!   ghost metadata's queue number); ingress, where the bounce must be decided, reads the
//!   cell of its packet's queue at index `ucast_egress_port << 4 | queue` (the same number:
//!   queue q of device port d is ghost queue `(d >> 3) << 7 | (d % 8) x 16 + q`, pipe in the
//!   top bits; `tests/schemes/pabo.rs` checks it against the chip's feed). The depth is stale by the
//!   feed's latency: a change in cycle c is seen by packets entering ingress from
//!   `c + ghost_latency_cycles - parser_cycles` (36 cycles with the defaults), later when
//!   several queues of one TM pipe changed at once (`docs/timing.md`, "Ghost thread").
//!   Egress metadata (`eg_intr_md.enq_qdepth`) is exact but comes after the decision.
//! - C_q is the queue limit in cells (the TM-wide `queue_limit_cells`, [`DEFAULT_CAPACITY_CELLS`]
//!   when unset), set on both the data and the bounce queue; the guard N is in frames of
//!   1518 bytes (9 cells each).
//! - `exp` has no hardware: table `u_level` (exact on the depth, clamped to C_q) gives the
//!   utilisation's level (0 at or below theta; 1..=levels over (theta, 1 - guard/C], equal
//!   slices of u; levels + 1 inside the guard) and table `bounce_p` (exact on level and min(n_p, np_cap)) a 16-bit threshold
//!   t, generated here from theta and lambda; the packet bounces iff the `random` primitive's
//!   16-bit value r <= t (probability (t + 1) / 65536). [`Lut::max_error`] is the largest
//!   gap to the formula.
//! - The bounce goes out of the port toward the packet's source (table `ipv4_source`, which
//!   the chip fills with its host routes keyed on the source address): for a packet that came
//!   along its forward path that is its ingress port; for one coming back from a switch
//!   downstream (bounced there) it is not, and the authors' code also routes toward the
//!   source.
//! - n_p and the hop statistics ride in a shim header with its own EtherType
//!   ([`wire`], 0x88B6) between Ethernet and IPv4, inserted at the first bounce.
//!   n_p is 8 bits and cannot wrap: every switch lowers the TTL (64 at the hosts) and drops
//!   the packet at 1, so a packet sees at most 63 switches.

pub mod host;
pub mod topology;
pub mod wire;

use super::{Hosts, Param, Scheme, SchemeParams, Setup, Target};
use std::collections::BTreeMap;
use t2_pipeline::ir::Program;
use t2_tm::QueueConfig;
use wire::PABO_ETHERTYPE;

pub static SCHEME: Scheme = Scheme {
    name: "pabo",
    summary: "bounce packets back toward their source with P(u_q, n_p), bounce queue above data, hosts resend",
    doc: "docs/schemes/pabo.md",
    params: &[
        Param {
            name: "theta",
            default: 0.8,
            min: 0.0,
            max: 0.99,
            integer: false,
            doc: "utilisation above which packets may bounce (the authors' code and the paper's link-layer runs: 0.8)",
        },
        Param {
            name: "lambda",
            default: 4.0,
            min: 0.01,
            max: 1000.0,
            integer: false,
            doc: "steepness of P (the authors' final code: 4; the paper's link-layer runs: 50)",
        },
        Param {
            name: "guard_n",
            default: 3.0,
            min: 0.0,
            max: 32.0,
            integer: true,
            doc: "upstream neighbours N: u_q = 1 within N 1518-byte frames of the limit (the authors' code: 3)",
        },
        Param {
            name: "u_levels",
            default: 64.0,
            min: 1.0,
            max: 1024.0,
            integer: true,
            doc: "levels the utilisation above theta is cut into for the table (ours)",
        },
        Param {
            name: "np_cap",
            default: 7.0,
            min: 0.0,
            max: 63.0,
            integer: true,
            doc: "n_p above this reads as this in the table (ours; P tends to the linear ramp as n_p grows)",
        },
    ],
    build,
    shipped,
};

/// The queue capacity in cells when the TM sets no queue limit: 100 frames of 1518 bytes
/// (9 cells each), the authors' INET queues of 100 frames.
pub const DEFAULT_CAPACITY_CELLS: u32 = 900;

/// The frame the guard counts in, bytes (a full 1500-byte MTU frame with its FCS).
pub const GUARD_FRAME_BYTES: u64 = 1518;

/// The register array (one 32-bit cell per pipe) counting the pipe's bounces: the authors'
/// per-switch "passback frame frequency"; run results sum it over pipes per switch.
pub const BOUNCE_COUNTER: &str = "bounce_count";

/// The data queue and the bounce queue of every port.
pub const DATA_QUEUE: u8 = 0;
pub const BOUNCE_QUEUE: u8 = 1;

/// Queues every port gets (the TM's default count).
const QUEUES_PER_PORT: usize = 16;

/// The probability of bouncing (the paper's Eq. 4, the authors' final code): 0 at or below
/// theta, 1 at or above 1.
pub fn probability(theta: f64, lambda: f64, u: f64, n_p: u32) -> f64 {
    if u <= theta {
        return 0.0;
    }
    if u >= 1.0 {
        return 1.0;
    }
    let k = lambda / (1.0 + n_p as f64);
    (k * (theta - u)).exp_m1() / (k * (theta - 1.0)).exp_m1()
}

/// What the switches are built from: the parameters and the queue geometry in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub theta: f64,
    pub lambda: f64,
    /// Queue capacity C_q, cells.
    pub capacity_cells: u32,
    /// The guard, cells (N frames).
    pub guard_cells: u32,
    pub levels: u32,
    pub np_cap: u32,
}

impl Config {
    /// The configuration of `p` on `target`.
    pub fn new(p: &SchemeParams, target: &Target) -> Config {
        let tm = &target.params.tm;
        Config {
            theta: p.get("theta"),
            lambda: p.get("lambda"),
            capacity_cells: tm.queue_limit_cells.unwrap_or(DEFAULT_CAPACITY_CELLS),
            guard_cells: p.int("guard_n") as u32 * tm.cells_for(GUARD_FRAME_BYTES),
            levels: p.int("u_levels") as u32,
            np_cap: p.int("np_cap") as u32,
        }
    }

    /// The defaults with the TM's defaults (what `programs/pabo_switch.json` holds).
    pub fn default_100g() -> Config {
        let params = crate::chip::params::Tofino2Params::default();
        let p = SCHEME
            .resolve(&BTreeMap::new())
            .expect("the defaults resolve");
        Config::new(
            &p,
            &Target {
                params: &params,
                link_bps: 100_000_000_000,
                multipath: false,
            },
        )
    }

    /// Whether `depth_cells` is inside the guard (u_q forced to 1).
    pub fn guarded(&self, depth_cells: u32) -> bool {
        depth_cells as u64 + self.guard_cells as u64 > self.capacity_cells as u64
    }

    /// The formula with the guard, at a depth in cells.
    pub fn formula(&self, depth_cells: u32, n_p: u32) -> f64 {
        if self.guarded(depth_cells) {
            return 1.0;
        }
        let u = depth_cells as f64 / self.capacity_cells as f64;
        probability(self.theta, self.lambda, u, n_p)
    }
}

/// The lookup tables: the level of every depth, and a 16-bit threshold per (level, capped
/// n_p) with a probability above 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Lut {
    pub config: Config,
    /// `level[d]` for depths 0..=C (deeper reads as C): 0 at or below theta, 1..=levels
    /// above it, levels + 1 inside the guard.
    pub level: Vec<u32>,
    /// Threshold t per (level, n_p): bounce iff r <= t for a 16-bit random r. Missing: never.
    pub threshold: BTreeMap<(u32, u32), u16>,
}

impl Lut {
    pub fn new(config: Config) -> Lut {
        let c = config.capacity_cells;
        let guard_level = config.levels + 1;
        // The levels cut the utilisations above theta and below the guard, (theta, top].
        let top = c.saturating_sub(config.guard_cells) as f64 / c as f64;
        let level: Vec<u32> = (0..=c)
            .map(|d| {
                let u = d as f64 / c as f64;
                if config.guarded(d) {
                    guard_level
                } else if u <= config.theta {
                    0
                } else {
                    let x = (u - config.theta) / (top - config.theta) * config.levels as f64;
                    (x.ceil() as u32).clamp(1, config.levels)
                }
            })
            .collect();
        let mut threshold = BTreeMap::new();
        for k in 1..=config.levels {
            // The depths of level k: the threshold is the midpoint of P over them, which
            // makes the largest error over the level the least (P is monotone in u).
            let depths: Vec<u32> = (0..=c).filter(|&d| level[d as usize] == k).collect();
            let (Some(&lo), Some(&hi)) = (depths.first(), depths.last()) else {
                continue;
            };
            for n_p in 0..=config.np_cap {
                let mid = (config.formula(lo, n_p) + config.formula(hi, n_p)) / 2.0;
                let n = (mid * 65536.0).round() as u32;
                if n >= 1 {
                    threshold.insert((k, n_p), (n.min(65536) - 1) as u16);
                }
            }
        }
        if level.contains(&guard_level) {
            for n_p in 0..=config.np_cap {
                threshold.insert((guard_level, n_p), u16::MAX);
            }
        }
        Lut {
            config,
            level,
            threshold,
        }
    }

    /// The probability the tables give at a depth in cells and an n_p.
    pub fn table(&self, depth_cells: u32, n_p: u32) -> f64 {
        let d = depth_cells.min(self.config.capacity_cells) as usize;
        let n = n_p.min(self.config.np_cap);
        self.threshold
            .get(&(self.level[d], n))
            .map_or(0.0, |&t| (t as f64 + 1.0) / 65536.0)
    }

    /// The largest |table - formula| over every depth 0..=C and n_p 0..=np_cap, with where.
    pub fn max_error(&self) -> (f64, u32, u32) {
        let mut worst = (0.0, 0, 0);
        for d in 0..=self.config.capacity_cells {
            for n_p in 0..=self.config.np_cap {
                let e = (self.table(d, n_p) - self.config.formula(d, n_p)).abs();
                if e > worst.0 {
                    worst = (e, d, n_p);
                }
            }
        }
        worst
    }

    /// The largest |table - formula| for n_p above the cap (the table reads np_cap): P
    /// decreases in n_p toward the linear ramp, so the gap is at most the larger of the
    /// gaps to P(np_cap) and to the ramp.
    pub fn max_error_beyond_cap(&self) -> f64 {
        let cfg = &self.config;
        (0..=cfg.capacity_cells)
            .map(|d| {
                let t = self.table(d, cfg.np_cap);
                let ramp = if cfg.guarded(d) {
                    1.0
                } else {
                    let u = d as f64 / cfg.capacity_cells as f64;
                    ((u - cfg.theta) / (1.0 - cfg.theta)).clamp(0.0, 1.0)
                };
                (t - cfg.formula(d, cfg.np_cap)).abs().max((t - ramp).abs())
            })
            .fold(0.0, f64::max)
    }
}

fn build(p: &SchemeParams, target: &Target) -> Setup {
    let config = Config::new(p, target);
    Setup {
        program: target.routed(program(&Lut::new(config))),
        port_queues: Some(port_queues(config.capacity_cells)),
        chip: None,
        // The authors' PABO hosts ran TCP without retransmission (INET's
        // `TCPTahoeNoCongestionControl` with the timer disabled; docs/schemes/pabo.md): a
        // bounced packet comes back late by design, and fast retransmit would resend it.
        // Ours keep the timer as a safety net and resend on it only (go-back-N).
        hosts: Hosts {
            features: vec![host::spec()],
            recovery: Some(t2_testbench::Recovery::GoBackN),
            ..Hosts::PLAIN
        },
        pfc: None,
        recirculation_mirror: None,
    }
}

fn shipped() -> Vec<(&'static str, Program)> {
    vec![(
        "pabo_switch.json",
        program(&Lut::new(Config::default_100g())),
    )]
}

/// Every port's queues: the data queue (0) and the bounce queue (1, strict priority above
/// it), each limited to the capacity; the others as the TM's default.
pub fn port_queues(capacity_cells: u32) -> Vec<QueueConfig> {
    let mut q = vec![QueueConfig::default(); QUEUES_PER_PORT];
    q[DATA_QUEUE as usize].limit_cells = Some(capacity_cells);
    q[BOUNCE_QUEUE as usize] = QueueConfig {
        priority: 1,
        limit_cells: Some(capacity_cells),
        ..QueueConfig::default()
    };
    q
}

/// `pabo.p4`, the switch program, built into the binary.
pub const P4: super::P4Source = super::P4Source {
    path: "src/schemes/pabo/pabo.p4",
    text: include_str!("pabo.p4"),
};

/// The PABO switch, compiled from [`P4`]: host routes (`ipv4_host`, `ipv4_source`, both
/// filled by the chip), the ghost thread keeping queue depths, and the bounce decision from
/// `lut`, whose entries go into `u_level` and `bounce_p` from the control plane. The
/// capacity, `np_cap` and the two tables' sizes (their entry counts) are `-D`s, as are the
/// bounce queue and the shim's EtherType (the Rust constants).
pub fn program(lut: &Lut) -> Program {
    let cfg = &lut.config;
    let levels: Vec<(Vec<u64>, &str, Vec<u64>)> = lut
        .level
        .iter()
        .enumerate()
        .filter(|(_, &k)| k > 0)
        .map(|(d, &k)| (vec![d as u64], "set_level", vec![k as u64]))
        .collect();
    let thresholds: Vec<(Vec<u64>, &str, Vec<u64>)> = lut
        .threshold
        .iter()
        .map(|(&(k, n_p), &t)| (vec![k as u64, n_p as u64], "set_threshold", vec![t as u64]))
        .collect();
    let c = P4.compiled(&[
        format!("CAPACITY_CELLS={}", cfg.capacity_cells),
        format!("NP_CAP={}", cfg.np_cap),
        format!("U_LEVEL_SIZE={}", levels.len().max(1)),
        format!("BOUNCE_P_SIZE={}", thresholds.len().max(1)),
        format!("BOUNCE_QUEUE={BOUNCE_QUEUE}"),
        format!("PABO_ETHERTYPE={PABO_ETHERTYPE:#06x}"),
    ]);
    let mut p = c.program.clone();
    super::install(&c, &mut p, "Ingress.u_level", levels);
    super::install(&c, &mut p, "Ingress.bounce_p", thresholds);
    p
}
