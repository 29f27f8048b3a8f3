//! The ingress arbiters: one frame per pipe per cycle into the ingress parser, round-robin
//! over the pipe's ports (recirculation port included) that have a frame waiting.

use super::Chip;
use t2_clock::Cycle;
use t2_pipeline::{fields, PacketPool};

impl Chip {
    /// Each pipe's arbiter picks at most one waiting frame for its ingress in cycle `now`.
    pub(super) fn ingress_arbiters(&mut self, now: Cycle, pool: &mut PacketPool) {
        for (p, pipe) in self.pipes.iter_mut().enumerate() {
            let n = pipe.ports.len();
            if !pipe.ingress.can_enter(now) {
                continue;
            }
            // A resubmitted packet's second pass goes first (docs/timing.md, Resubmit).
            if let Some((pkt, port)) = self.resubmit_fifo[p].recv(now) {
                pipe.ingress.enter_parsed_with(
                    now,
                    pkt,
                    port,
                    pool,
                    &[(fields::RESUBMIT_FLAG, 1)],
                    &[],
                );
                pipe.ingress_entered += 1;
                if let Some(t) = self.trace.as_mut() {
                    t.entered(p, 0, now, pipe.ingress.stage_offsets(), pkt.index());
                }
                continue;
            }
            if n == 0 || self.rx_waiting == 0 {
                continue;
            }
            let pick = (0..n)
                .map(|k| (pipe.rx_next + k) % n)
                .find(|&k| self.ports[pipe.ports[k]].rx_fifo.ready(now));
            if let Some(k) = pick {
                let port = &mut self.ports[pipe.ports[k]];
                let (pkt, received) = port.rx_fifo.take(now).expect("a ready frame");
                self.rx_waiting -= 1;
                // Time stamps in ns, rounded down (ns = cycles x 1e9 / clock), 48 bits.
                let clock = self.params.clock();
                let ns = |c: Cycle| clock.cycles_to_ns_floor(c);
                let [m0, m1] = fields::split48(&fields::IG_MAC_TSTAMP, ns(received));
                let [g0, g1] = fields::split48(&fields::IG_GLOBAL_TSTAMP, ns(now));
                pipe.ingress
                    .enter_with(now, pkt, port.dev_port, pool, &[m0, m1, g0, g1]);
                pipe.ingress_entered += 1;
                if let Some(t) = self.trace.as_mut() {
                    t.entered(p, 0, now, pipe.ingress.stage_offsets(), pkt.index());
                }
                pipe.rx_next = (k + 1) % n;
            }
        }
    }
}
