//! The per-pipe TM schedulers and the egress pipelines they feed (with the queue metadata
//! Tofino2 gives egress), up to the MAC.

use super::{Chip, ChipDrop};
use t2_clock::Cycle;
use t2_pipeline::{fields, Gress, PacketHandle, PacketPool};
use t2_tm::Dequeued;

impl Chip {
    /// Each pipe's TM scheduler sends at most one descriptor toward its egress, which takes
    /// in what was sent a cycle ago and hands finished packets to the MACs.
    ///
    /// A dequeued packet usually enters its egress parser at once for the next cycle, after
    /// this cycle's egress tick: nothing else touches the egress or the packet in between,
    /// and its parser takes at least that cycle, so this spares the chip a visit in it. It
    /// takes the wire instead when something could see the difference: a trace, which
    /// records the entry in its cycle, or a control-plane operation due by then (a port's
    /// queues carved anew change the queue number the egress is given).
    pub(super) fn egress_pipes(&mut self, now: Cycle, pool: &mut PacketPool) {
        let may_batch = self.may_batch(now);
        let early = self.trace.is_none() && self.control_next_event().is_none_or(|c| c > now + 1);
        for p in 0..self.pipes.len() {
            let dequeued = self.tm.dequeue(p, now);
            if let Some(dq) = self.pipes[p].to_egress.recv(now) {
                self.egress_entry(now, p, dq, pool);
            }
            match dequeued {
                Some(dq) if early => {
                    self.egress_tick(now, p, may_batch, pool);
                    self.egress_entry(now + 1, p, dq, pool);
                }
                Some(dq) => {
                    self.pipes[p].to_egress.send(now, dq);
                    self.egress_tick(now, p, may_batch, pool);
                }
                None => self.egress_tick(now, p, may_batch, pool),
            }
        }
    }

    /// Pipe `p`'s egress parser takes in the dequeued packet `dq` in cycle `now`.
    fn egress_entry(&mut self, now: Cycle, p: usize, dq: Dequeued, pool: &mut PacketPool) {
        let desc = dq.desc;
        if self.mirror.bypass.remove(&desc.pkt) {
            // `bypass_egress`: straight to the port's MAC, as the egress deparser would hand
            // it over (no egress parse, stages or mirroring).
            self.hand_to_mac(
                now,
                desc.egress_port as usize,
                PacketHandle::from_index(desc.pkt),
                pool,
            );
            return;
        }
        let pipe = &mut self.pipes[p];
        let dev = self.ports[desc.egress_port as usize].dev_port;
        // The TM's view of the queue, as Tofino2 hands it to egress: depths in
        // cells, the time in the TM in nanoseconds.
        let clock = self.params.clock();
        // Time stamps: nanoseconds rounded down (ns = cycles x 1e9 / clock),
        // 48 bits for the global time, the low 32 for `enq_tstamp`.
        let global = fields::split48(&fields::EG_GLOBAL_TSTAMP, clock.cycles_to_ns_floor(now));
        // `egress_qid`: the queue's index among its MAC's 128, as AFC and the
        // ghost thread number it.
        let egress_qid = self
            .tm
            .group_queue(desc.egress_port as usize, dq.queue as usize)
            .map_or(dq.queue as u32, |(_, q)| q);
        let metadata = [
            global[0],
            global[1],
            (
                fields::EG_ENQ_TSTAMP,
                clock.cycles_to_ns_floor(dq.enq_tstamp) as u32,
            ),
            (fields::EG_EGRESS_QID, egress_qid),
            (fields::EG_EGRESS_COS, desc.ingress_cos as u32),
            (fields::EG_ENQ_QDEPTH, dq.enq_qdepth),
            (fields::EG_DEQ_QDEPTH, dq.deq_qdepth),
            (
                fields::EG_DEQ_TIMEDELTA,
                clock.cycles_to_ns_floor(dq.deq_timedelta) as u32,
            ),
            (fields::EG_ENQ_CONGEST_STAT, dq.enq_congest_stat as u32),
            (fields::EG_DEQ_CONGEST_STAT, dq.deq_congest_stat as u32),
            (
                fields::EG_APP_POOL_CONGEST_STAT,
                dq.app_pool_congest_stat as u32,
            ),
        ];
        // A copy with a mirror header: its type, for the egress parser.
        let before_parse = self
            .mirror
            .types
            .remove(&desc.pkt)
            .map(|t| (fields::MIRROR_TYPE, t as u32));
        pipe.egress.enter_parsed_with(
            now,
            PacketHandle::from_index(desc.pkt),
            dev,
            pool,
            before_parse.as_slice(),
            &metadata,
        );
        pipe.in_egress.push_back(desc);
        pipe.egress_entered += 1;
        if let Some(t) = self.trace.as_mut() {
            t.entered(p, 1, now, pipe.egress.stage_offsets(), desc.pkt);
        }
    }

    /// Pipe `p`'s egress in cycle `now`: its stages, and the packet leaving its deparser.
    /// Inlined: every pipe's egress is asked on every visit and most have nothing due.
    #[inline]
    fn egress_tick(&mut self, now: Cycle, p: usize, may_batch: bool, pool: &mut PacketPool) {
        let pipe = &mut self.pipes[p];
        let exit = pipe
            .egress
            .tick_batching(now, &mut pipe.egress_program, pool, may_batch);
        if let Some(exit) = exit {
            let desc = pipe
                .in_egress
                .pop_front()
                .expect("every packet leaving the egress entered it");
            debug_assert_eq!(desc.pkt, exit.pkt.index());
            self.deparser_afc(now, exit.adv_flow_ctl);
            if let Some(t) = self.trace.as_mut() {
                t.exited(p, 1, now, exit.drop.map_or("to_mac", |r| r.name()));
            }
            if let Some(reason) = exit.drop {
                self.drop(ChipDrop::Pipeline(Gress::Egress, reason), exit.pkt, pool);
            } else {
                self.egress_mirror(now, &exit, desc, pool);
                let port = self.dev_ports[exit.port as usize].expect("a configured port");
                self.hand_to_mac(now, port, exit.pkt, pool);
            }
        }
    }
}
