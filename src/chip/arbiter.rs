//! The ingress arbiters: one frame per pipe per cycle into the ingress parser, round-robin
//! over the pipe's ports (recirculation port included) that have a frame waiting.

use super::*;

impl Chip {
    /// Each pipe's arbiter picks at most one waiting frame for its ingress in cycle `now`.
    pub(super) fn ingress_arbiters(&mut self, now: Cycle, pool: &mut PacketPool) {
        for (p, pipe) in self.pipes.iter_mut().enumerate() {
            let n = pipe.ports.len();
            if !pipe.ingress.can_enter(now) {
                continue;
            }
            // A resubmitted packet's second pass goes first (docs/timing.md, Resubmit).
            if let Some(&(at, pkt, port)) = self.resubmit_fifo[p].front() {
                if at <= now {
                    self.resubmit_fifo[p].pop_front();
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
            }
            if n == 0 {
                continue;
            }
            let pick = (0..n)
                .map(|k| (pipe.rx_next + k) % n)
                .find(|&k| !self.ports[pipe.ports[k]].rx_fifo.is_empty());
            if let Some(k) = pick {
                let port = &mut self.ports[pipe.ports[k]];
                let pkt = port.rx_fifo.pop_front().expect("non-empty");
                pipe.ingress.enter(now, pkt, port.dev_port, pool);
                pipe.ingress_entered += 1;
                if let Some(t) = self.trace.as_mut() {
                    t.entered(p, 0, now, pipe.ingress.stage_offsets(), pkt.index());
                }
                pipe.rx_next = (k + 1) % n;
            }
        }
    }
}
