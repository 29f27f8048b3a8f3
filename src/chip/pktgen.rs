//! The packet generator (Tofino2 pktgen): 16 applications per pipe, each fired by a one-shot
//! or periodic timer or by a port going down, making batches of packets from a template.
//!
//! A generated packet is the 6-byte pktgen header (`pktgen_timer_header_t` or
//! `pktgen_port_down_header_t` of `tofino2_base.p4`) followed by the application's payload.
//! It enters its pipe's ingress on the pktgen port, which on Tofino2 is local port 6 of the
//! pipe's port group 0, the group the recirculation port also uses: the model serializes it
//! on that group's MAC (the recirculation port, at its capped rate), so generated and
//! recirculated packets share the group's bandwidth, and from the cycle its last bit is
//! through it waits in that port's receive FIFO for an ingress slot like a recirculated
//! frame (`docs/timing.md`, Packet generator).

use super::{Chip, ConfigError};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use t2_clock::Cycle;
use t2_pipeline::PacketPool;

/// Applications per pipe (Tofino2: 16; `tofino2_base.p4` `app_id : 4`).
pub const PKTGEN_APPLICATIONS: usize = 16;
/// Bytes of the pktgen header in front of every generated packet.
pub const PKTGEN_HEADER_BYTES: usize = 6;
/// Bytes of the pktgen packet buffer (Tofino2: 16 KB); a payload must fit in it.
pub const PKTGEN_BUFFER_BYTES: usize = 16 * 1024;

/// What fires an application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktgenTrigger {
    /// Once, in cycle `at`.
    OneShot { at: Cycle },
    /// In cycles `start + k x period`, k = 0, 1, 2, ...
    Periodic { start: Cycle, period: Cycle },
    /// When port `port` (a front-panel port index) goes down ([`ControlOp::PortDown`]).
    PortDown { port: usize },
    /// When a packet leaves the pipe's ingress deparser with `ig_intr_dprsr_md.pktgen` set
    /// (Tofino2's MAU packet trigger): the firing is in the next cycle. The packet's bytes
    /// are not copied into the pktgen buffer (`pktgen_address`, `pktgen_length` are not
    /// modelled): the application sends its own payload.
    Deparser,
}

/// A pktgen application: its trigger and the packets one firing makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PktgenApp {
    pub trigger: PktgenTrigger,
    /// Batches per firing (`batch_id` 0..batches) and packets per batch (`packet_id`
    /// 0..packets_per_batch), each at least 1.
    pub batches: u16,
    pub packets_per_batch: u16,
    /// Packet `k` of batch `b` of a firing in cycle `t` is made in cycle
    /// `t + b x batch_gap + k x packet_gap` (both gaps start to start).
    pub packet_gap: Cycle,
    pub batch_gap: Cycle,
    /// The bytes after the pktgen header (FCS excluded); a packet shorter than 60 bytes is
    /// padded with zeros.
    pub payload: Vec<u8>,
}

impl PktgenApp {
    /// One packet per firing of `trigger`, with `payload` after the header.
    pub fn new(trigger: PktgenTrigger, payload: Vec<u8>) -> PktgenApp {
        PktgenApp {
            trigger,
            batches: 1,
            packets_per_batch: 1,
            packet_gap: 0,
            batch_gap: 0,
            payload,
        }
    }
}

/// The pktgen header of a generated packet: `pipe_id:2, app_id:4` after 2 bits of padding,
/// then (timer) 8 bits of padding, `batch_id:16`, `packet_id:16`, or (port down) 15 bits of
/// padding, `port_num:9` (the device port), `packet_id:16`.
pub fn pktgen_header(pipe: u8, app: u8, batch_or_port: u16, packet: u16) -> [u8; 6] {
    let b = batch_or_port.to_be_bytes();
    let k = packet.to_be_bytes();
    [(pipe & 3) << 4 | (app & 0xf), 0, b[0], b[1], k[0], k[1]]
}

/// One pipe's generator.
#[derive(Clone, Debug, Default)]
pub(super) struct PipePktgen {
    pub apps: Vec<Option<PktgenApp>>,
    /// Per application, the next cycle its timer fires.
    pub next_fire: Vec<Option<Cycle>>,
    /// Packets to make: (cycle, sequence) -> (app, batch id or device port, packet id).
    pub due: BTreeMap<(Cycle, u64), (u8, u16, u16)>,
    pub seq: u64,
}

impl PipePktgen {
    pub fn new() -> PipePktgen {
        PipePktgen {
            apps: vec![None; PKTGEN_APPLICATIONS],
            next_fire: vec![None; PKTGEN_APPLICATIONS],
            due: BTreeMap::new(),
            seq: 0,
        }
    }

    /// Application `app` fires in cycle `at`: its packets are scheduled. `batch_or_port` is
    /// `None` for a timer (the batch id counts) or the device port that went down.
    fn fire(&mut self, app: usize, at: Cycle, port_down: Option<u16>) {
        let a = self.apps[app].as_ref().expect("only set applications fire");
        let mut made = Vec::new();
        for b in 0..a.batches {
            for k in 0..a.packets_per_batch {
                let when = at + b as Cycle * a.batch_gap + k as Cycle * a.packet_gap;
                made.push((when, (app as u8, port_down.unwrap_or(b), k)));
            }
        }
        for (when, what) in made {
            self.due.insert((when, self.seq), what);
            self.seq += 1;
        }
    }

    /// The next cycle at which this generator fires or makes a packet.
    pub fn next_event(&self) -> Option<Cycle> {
        let fire = self.next_fire.iter().flatten().min().copied();
        let due = self.due.keys().next().map(|&(c, _)| c);
        match (fire, due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The packet generators' state: one per pipe, and the packets they made still on a MAC.
pub(super) struct Pktgens {
    /// Each pipe's packet generator.
    pub(super) gens: Vec<PipePktgen>,
    /// The earliest cycle at which some pipe's timer fires or a made packet is due (the
    /// minimum of [`PipePktgen::next_event`] over the pipes), kept up to date by every change
    /// to them, so that a visit of the chip reads one number instead of every application
    /// (and a chip with no application set pays nothing).
    pub(super) next: Option<Cycle>,
    /// Generated packets still being serialized on a pktgen port's MAC.
    pub(super) in_mac: BTreeSet<u32>,
}

impl Pktgens {
    pub(super) fn new(pipes: usize) -> Pktgens {
        Pktgens {
            gens: vec![PipePktgen::new(); pipes],
            next: None,
            in_mac: BTreeSet::new(),
        }
    }

    /// Works out [`Pktgens::next`] again after a timer or a pipe's packets changed.
    fn refresh_next(&mut self) {
        self.next = self.gens.iter().filter_map(PipePktgen::next_event).min();
    }

    /// Whether a timer fires or a made packet is due in cycle `now` (or was due before it).
    pub(super) fn due_by(&self, now: Cycle) -> bool {
        self.next.is_some_and(|t| t <= now)
    }
}

impl Chip {
    /// Sets (or with `None` clears) application `app` of pipe `pipe`'s packet generator. A
    /// timer's first firing must not be before `now`, the cycle the chip has reached
    /// (0 before a run).
    pub fn set_pktgen_app(
        &mut self,
        now: Cycle,
        pipe: usize,
        app: usize,
        config: Option<PktgenApp>,
    ) -> Result<(), ConfigError> {
        let first = self.check_pktgen_app(now, pipe, app, config.as_ref())?;
        let g = &mut self.pktgen.gens[pipe];
        // Packets a replaced or cleared configuration still had to make are not made.
        g.due.retain(|_, what| what.0 as usize != app);
        g.apps[app] = config;
        g.next_fire[app] = first;
        self.pktgen.refresh_next();
        Ok(())
    }

    /// Application `app` of pipe `pipe` as it is now (`None`: not set, or no such one).
    pub fn pktgen_app(&self, pipe: usize, app: usize) -> Option<&PktgenApp> {
        self.pktgen.gens.get(pipe)?.apps.get(app)?.as_ref()
    }

    /// Whether application `app` of pipe `pipe` may be set to `config` in cycle `now`: its
    /// first timer firing, or the problem.
    pub(super) fn check_pktgen_app(
        &self,
        now: Cycle,
        pipe: usize,
        app: usize,
        config: Option<&PktgenApp>,
    ) -> Result<Option<Cycle>, ConfigError> {
        let bad = |problem: String| ConfigError {
            what: format!("chip {}: pipe {pipe} pktgen application {app}", self.name),
            problem,
        };
        if pipe >= self.pipes.len() {
            return Err(bad(format!("the chip has pipes 0..{}", self.pipes.len())));
        }
        if app >= PKTGEN_APPLICATIONS {
            return Err(bad(format!(
                "a pipe has applications 0..{PKTGEN_APPLICATIONS}"
            )));
        }
        Ok(match config {
            None => None,
            Some(a) => {
                if self.recirculation_port(pipe).is_none() {
                    return Err(bad(
                        "the pipe has no port group 0 MAC for generated packets \
                         (recirculation_cap_percent is 0)"
                            .into(),
                    ));
                }
                if a.batches == 0 || a.packets_per_batch == 0 {
                    return Err(bad(format!(
                        "{} batches of {} packets: both must be at least 1",
                        a.batches, a.packets_per_batch
                    )));
                }
                if a.payload.len() + PKTGEN_HEADER_BYTES > PKTGEN_BUFFER_BYTES {
                    return Err(bad(format!(
                        "a payload of {} bytes and the {PKTGEN_HEADER_BYTES}-byte header \
                         do not fit the {PKTGEN_BUFFER_BYTES}-byte packet buffer",
                        a.payload.len()
                    )));
                }
                match a.trigger {
                    PktgenTrigger::OneShot { at } | PktgenTrigger::Periodic { start: at, .. }
                        if at < now =>
                    {
                        return Err(bad(format!(
                            "the timer's first firing, cycle {at}, is before cycle {now}"
                        )));
                    }
                    PktgenTrigger::Periodic { period: 0, .. } => {
                        return Err(bad("a periodic timer's period must be at least 1".into()));
                    }
                    PktgenTrigger::PortDown { port } if port >= self.front_ports => {
                        return Err(bad(format!(
                            "port {port} is not a front-panel port (the chip has 0..{})",
                            self.front_ports
                        )));
                    }
                    PktgenTrigger::OneShot { at } | PktgenTrigger::Periodic { start: at, .. } => {
                        Some(at)
                    }
                    PktgenTrigger::PortDown { .. } | PktgenTrigger::Deparser => None,
                }
            }
        })
    }

    /// Port `port` goes down in cycle `at` (not before `now`): every application triggered
    /// by it fires in that cycle. Lands like any scheduled control operation
    /// ([`Chip::schedule`]).
    pub(super) fn fire_port_down(&mut self, at: Cycle, port: usize) {
        let dev = self.ports[port].dev_port;
        for g in &mut self.pktgen.gens {
            for app in 0..PKTGEN_APPLICATIONS {
                let hit = matches!(
                    g.apps[app],
                    Some(PktgenApp { trigger: PktgenTrigger::PortDown { port: p }, .. }) if p == port
                );
                if hit {
                    g.fire(app, at, Some(dev));
                }
            }
        }
        self.pktgen.refresh_next();
    }

    /// A packet left pipe `pipe`'s ingress deparser in cycle `now` with the pktgen trigger:
    /// its deparser-triggered applications fire in `now + 1`.
    pub(super) fn fire_deparser(&mut self, now: Cycle, pipe: usize) {
        let g = &mut self.pktgen.gens[pipe];
        for app in 0..PKTGEN_APPLICATIONS {
            if matches!(
                g.apps[app],
                Some(PktgenApp {
                    trigger: PktgenTrigger::Deparser,
                    ..
                })
            ) {
                g.fire(app, now + 1, None);
            }
        }
        self.pktgen.refresh_next();
    }

    /// The timers firing in cycle `now` schedule their packets; the packets due in `now` are
    /// made and reach the pktgen port's MAC in `now + 1`. Called only when something is due
    /// ([`Pktgens::due_by`]); otherwise it would do nothing.
    pub(super) fn packet_generators(&mut self, now: Cycle, pool: &mut PacketPool) {
        for p in 0..self.pktgen.gens.len() {
            let g = &mut self.pktgen.gens[p];
            for app in 0..PKTGEN_APPLICATIONS {
                if g.next_fire[app] != Some(now) {
                    continue;
                }
                g.next_fire[app] = match g.apps[app].as_ref().map(|a| a.trigger) {
                    Some(PktgenTrigger::Periodic { period, .. }) => Some(now + period),
                    _ => None,
                };
                g.fire(app, now, None);
            }
            while let Some(entry) = self.pktgen.gens[p].due.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let (app, batch, packet) = entry.remove();
                let a = self.pktgen.gens[p].apps[app as usize]
                    .as_ref()
                    .expect("a cleared application's packets were dropped with it");
                let mut bytes = Vec::with_capacity(PKTGEN_HEADER_BYTES + a.payload.len());
                bytes.extend_from_slice(&pktgen_header(p as u8, app, batch, packet));
                bytes.extend_from_slice(&a.payload);
                if bytes.len() < 60 {
                    bytes.resize(60, 0);
                }
                let pkt = pool.alloc_from(&bytes);
                let port = self.front_ports + p;
                self.tm.note_mac_frame(port, now + 1, pool.frame_bytes(pkt));
                self.hand_to_mac(now, port, pkt, pool);
                self.pktgen.in_mac.insert(pkt.index());
                self.counters.pktgen_generated += 1;
                if let Some(t) = self.trace.as_mut() {
                    t.number(pkt.index());
                }
            }
        }
        self.pktgen.refresh_next();
    }
}
