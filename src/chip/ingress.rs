//! The ingress pipelines and what happens to a packet leaving the ingress deparser: its AFC
//! word goes to the TM, it is dropped (with its reason), recirculated or handed to the TM for
//! its egress port next cycle, mirror sessions copy it, and its digest is recorded.

use super::{Chip, ChipDrop};
use t2_clock::Cycle;
use t2_pipeline::{Exit, Gress, PacketPool};
use t2_tm::Descriptor;

impl Chip {
    /// Each pipe's ghost thread, then its ingress pipeline, for cycle `now`.
    pub(super) fn ingress_pipes(&mut self, now: Cycle, pool: &mut PacketPool) {
        let may_batch = self.may_batch(now);
        // Ghost first: in a stage and cycle where both touch a register, the packet sees
        // what the ghost thread wrote (docs/timing.md). The two share the registers, so
        // neither runs a whole pass at once while the other steps one. A shared ghost thread
        // (`ghost.rs`) runs once for every pipe, before any pipe's ingress.
        let shared = self.ghost.shared;
        if shared {
            self.shared_ghost(now, may_batch);
        }
        let shared_stepping = shared && self.pipes[0].ghost.as_ref().is_some_and(|g| g.stepping());
        for p in 0..self.pipes.len() {
            let pipe = &mut self.pipes[p];
            if let Some(ghost) = pipe.ghost.as_mut().filter(|_| !shared) {
                let batch = may_batch && !pipe.ingress.stepping();
                ghost.tick_batching(now, &mut pipe.ingress_program, batch);
            }
            let ghost_stepping =
                shared_stepping || pipe.ghost.as_ref().is_some_and(|g| !shared && g.stepping());
            let batch = may_batch && !ghost_stepping;
            let exit = pipe
                .ingress
                .tick_batching(now, &mut pipe.ingress_program, pool, batch);
            if let Some(exit) = exit {
                self.ingress_exit(now, p, exit, pool);
            }
        }
    }

    /// Whether a packet (or ghost update) reaching stage 0 in cycle `now` may run all its
    /// stages at once (`GressPipeline::tick_batching`): no control-plane operation lands
    /// before it would have passed its last stage (an operation may change tables or
    /// registers the later stages read), and nothing is traced (a trace samples register
    /// arrays between a packet's stages). Otherwise it steps stage by stage, as every
    /// packet always may; both give the same results.
    pub(super) fn may_batch(&self, now: Cycle) -> bool {
        let horizon = now + self.ingress_latency.max(self.egress_latency);
        !self.stage_by_stage
            && self.trace.is_none()
            && self.control_next_event().is_none_or(|c| c > horizon)
    }

    /// Pipe `p`'s ingress deparser hands `exit` on in cycle `now`.
    fn ingress_exit(&mut self, now: Cycle, p: usize, mut exit: Exit, pool: &mut PacketPool) {
        self.deparser_afc(now, exit.adv_flow_ctl);
        if let Some(d) = exit.digest.take() {
            self.record_digest(now, p, d);
        }
        if exit.pktgen {
            self.fire_deparser(now, p);
        }
        if exit.resubmit {
            // One more ingress pass, no TM visit: from the next cycle, ahead of the ports.
            if let Some(t) = self.trace.as_mut() {
                t.exited(p, 0, now, "resubmit");
            }
            self.counters.resubmitted += 1;
            self.resubmit_fifo[p].send(now, (exit.pkt, exit.port));
            return;
        }
        if exit.resubmit_refused {
            self.counters.resubmit_refused += 1;
        }
        let egress = exit
            .ucast_egress_port
            .and_then(|d| self.dev_ports.get(d as usize).copied().flatten());
        let recirculation = self.recirculation_port(p);
        let fate = match (exit.drop, exit.recirculate, egress) {
            (Some(reason), _, _) => Err(ChipDrop::Pipeline(Gress::Ingress, reason)),
            // The `recirculate` primitive: the pipe's recirculation port instead.
            (None, true, _) => recirculation.ok_or(ChipDrop::NoRecirculationPort),
            (None, false, None) => Err(ChipDrop::UnknownEgressPort),
            (None, false, Some(e)) => Ok(e),
        };
        if let Some(t) = self.trace.as_mut() {
            t.exited(p, 0, now, fate.map_or_else(|c| c.name(), |_| "to_tm"));
        }
        let egress = match fate {
            Ok(e) => e,
            Err(cause) => {
                if let Some(copy) = exit.mirror_incoming {
                    pool.free(copy);
                }
                self.drop(cause, exit.pkt, pool);
                return;
            }
        };
        let ingress_port = self.dev_ports[exit.port as usize].expect("a configured port");
        if exit.bypass_egress {
            self.mirror.bypass.insert(exit.pkt.index());
        }
        self.to_tm.send(
            now,
            Descriptor {
                pkt: exit.pkt.index(),
                frame_bytes: pool.frame_bytes(exit.pkt) as u32,
                ingress_port: ingress_port as u16,
                egress_port: egress as u16,
                qid: exit.qid,
                ingress_cos: exit.ingress_cos,
            },
        );
        // Port mirroring: a copy of the packet as it left the ingress deparser. The
        // program's `mirror`: the same, or the packet as it came in with
        // `mirror_io_select`. A session not set makes no copy.
        let sessions = [
            (self.ports[ingress_port].mirror, exit.pkt),
            (
                exit.mirror_session,
                exit.mirror_incoming.unwrap_or(exit.pkt),
            ),
        ];
        for (k, (session, source)) in sessions.into_iter().enumerate() {
            if let Some(session) = session.and_then(|m| self.mirror.sessions[m as usize]) {
                let copy = self.mirror_copy(
                    now,
                    source,
                    session,
                    ingress_port as u16,
                    exit.ingress_cos,
                    pool,
                );
                // The program's copy carries its mirror header's type into the egress.
                if k == 1 && exit.mirror_type != 0 {
                    self.mirror.types.insert(copy.index(), exit.mirror_type);
                }
            }
        }
        if let Some(copy) = exit.mirror_incoming {
            pool.free(copy);
        }
    }
}
