//! QCN's reaction point at the NIC (IEEE 802.1Qau; [`crate::qcn`]): a CNM
//! (`t2_pipeline::qcn`) about one of this host's open flows gives that flow a reaction
//! point, whose rate then paces the flow's data frames exactly: a frame starts no earlier
//! than the tick the previous one's wire bits have passed at the limiter's rate. A CNM about
//! a finished flow has nothing left to slow; a malformed CNM is foreign.

use super::{FeatureSpec, FlowView, HostCounters, HostFeature, HostInfo, Receipt};
use crate::qcn::{flow_id_in_msdu, QcnParams, ReactionPoint};
use std::any::Any;
use std::collections::BTreeMap;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::qcn::Cnm;
use t2_pipeline::{PacketHandle, PacketPool};

/// One flow's limiter state.
#[derive(Clone, Copy, Debug)]
struct Limited {
    id: u32,
    rp: Option<ReactionPoint>,
    /// No frame of this flow starts before this line tick while its limiter holds it.
    ready_ticks: u64,
}

/// QCN reaction points, one per flow a CNM named.
pub struct Qcn {
    params: QcnParams,
    line: LineRate,
    /// Per flow, by index.
    flows: Vec<Limited>,
    /// The open flows: id to index.
    open: BTreeMap<u32, usize>,
    /// The open flows with a reaction point, by index (the only ones with timers or pacing).
    with_rp: Vec<usize>,
    cnms: u64,
}

impl Qcn {
    pub fn new(params: QcnParams, line: LineRate) -> Qcn {
        Qcn {
            params,
            line,
            flows: Vec::new(),
            open: BTreeMap::new(),
            with_rp: Vec::new(),
            cnms: 0,
        }
    }

    /// The reaction point of flow `flow_id`, once a CNM has been applied to it.
    pub fn reaction_point(&self, flow_id: u32) -> Option<&ReactionPoint> {
        self.flows
            .iter()
            .find(|f| f.id == flow_id)
            .and_then(|f| f.rp.as_ref())
    }

    /// The reaction point of flow index `i` while it holds the flow below line rate.
    fn limiter(&self, i: usize) -> Option<&ReactionPoint> {
        self.flows[i].rp.as_ref().filter(|rp| rp.limiting())
    }
}

/// The spec of [`Qcn`] with `params`, for a scheme's `Hosts`; a host refuses parameters its
/// NIC cannot run.
pub fn spec(params: QcnParams) -> FeatureSpec {
    FeatureSpec::new("qcn", format!("{params:?}"), move |h: &HostInfo| {
        params.validate(h.name, h.line.bits_per_second())?;
        Ok(Box::new(Qcn::new(params, h.line)) as Box<dyn HostFeature>)
    })
}

impl HostFeature for Qcn {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn on_frame(&mut self, now: Cycle, pkt: PacketHandle, pool: &mut PacketPool) -> Receipt {
        let bytes = pool.bytes(pkt);
        if !Cnm::is_cnm(bytes) {
            return Receipt::NotMine;
        }
        let Ok(cnm) = Cnm::parse(bytes) else {
            return Receipt::Foreign;
        };
        pool.free(pkt);
        self.cnms += 1;
        let Some(i) = flow_id_in_msdu(&cnm.encap_msdu).and_then(|id| self.open.get(&id)) else {
            return Receipt::Taken;
        };
        let (i, line, params) = (*i, self.line.bits_per_second(), self.params);
        let f = &mut self.flows[i];
        if f.rp.is_none() {
            let at = self.with_rp.partition_point(|&k| k < i);
            self.with_rp.insert(at, i);
        }
        f.rp.get_or_insert_with(|| ReactionPoint::new(line, params))
            .on_cnm(now, cnm.qntz_fb);
        Receipt::Taken
    }

    fn may_send(&self, now: Cycle, _class: u8, flow: Option<&FlowView>) -> bool {
        flow.is_none_or(|f| {
            self.limiter(f.index).is_none()
                || self.flows[f.index].ready_ticks < self.line.cycle_to_ticks(now + 1)
        })
    }

    fn not_before(&self, flow: &FlowView) -> u64 {
        match self.limiter(flow.index) {
            Some(_) => self.flows[flow.index].ready_ticks,
            None => 0,
        }
    }

    /// The flow's next frame may start once this one's wire bits have passed at the
    /// limiter's rate, at that exact tick, so the rate holds exactly over any run of frames.
    fn on_data_start(&mut self, flow: &FlowView, start: u64, frame_bytes: u64) {
        let per_second = self.line.ticks_per_bit() as u128 * self.line.bits_per_second() as u128;
        let f = &mut self.flows[flow.index];
        let Some(rp) = f.rp.as_mut().filter(|rp| rp.limiting()) else {
            return;
        };
        let bits = LineRate::wire_bits(frame_bytes) as u128;
        let gap = (bits * per_second).div_ceil(rp.rate_bps() as u128) as u64;
        f.ready_ticks = start + gap;
        rp.on_sent(frame_bytes);
    }

    fn flow_started(&mut self, flow: &FlowView) {
        debug_assert_eq!(flow.index, self.flows.len(), "flows start in index order");
        self.flows.push(Limited {
            id: flow.id,
            rp: None,
            ready_ticks: 0,
        });
        self.open.insert(flow.id, flow.index);
    }

    fn flow_finished(&mut self, flow: &FlowView) {
        self.open.remove(&flow.id);
        self.with_rp.retain(|&i| i != flow.index);
    }

    fn on_time(&mut self, now: Cycle) {
        for &i in &self.with_rp {
            if let Some(rp) = self.flows[i].rp.as_mut() {
                rp.on_time(now);
            }
        }
    }

    /// Limiter timers, and the end of the pacing gap of a flow with data to send.
    fn next_event(&self, now: Cycle, has_data: &dyn Fn(usize) -> bool) -> Option<Cycle> {
        let next_ticks = self.line.cycle_to_ticks(now + 1);
        self.with_rp
            .iter()
            .filter_map(|&i| {
                let rp = self.limiter(i)?;
                let ready = self.flows[i].ready_ticks;
                let paced = (ready >= next_ticks && has_data(i))
                    .then(|| ready / self.line.ticks_per_cycle());
                rp.timer_at().into_iter().chain(paced).min()
            })
            .min()
    }

    fn count(&self, c: &mut HostCounters) {
        c.cnm_frames += self.cnms;
    }
}
