//! QCN's reaction point at the NIC (IEEE 802.1Qau; [`super`]): a CNM
//! ([`super::cnm`]) about one of this host's open flows gives that flow a reaction
//! point, whose rate then paces the flow's data frames exactly: a frame starts no earlier
//! than the tick the previous one's wire bits have passed at the limiter's rate. A CNM about
//! a finished flow has nothing left to slow; a malformed CNM is foreign.

use super::cnm::Cnm;
use super::{flow_id_in_msdu, QcnParams, ReactionPoint};
use std::any::Any;
use std::collections::BTreeMap;
use t2_clock::{Cycle, LineRate};
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::host_feature::{
    FeatureSpec, FlowView, HostCounters, HostFeature, HostInfo, Receipt,
};

/// One flow's limiter state.
#[derive(Clone, Copy, Debug)]
struct Limited {
    id: u32,
    rp: Option<ReactionPoint>,
    /// No frame of this flow starts before this line tick while its limiter holds it.
    ready_ticks: u64,
}

/// The count of well-formed CNMs a host received ([`HostCounters`]).
pub const CNM_FRAMES: &str = "cnm_frames";

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
        c.add(CNM_FRAMES, self.cnms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_clock::Clock;
    use t2_pipeline::headers::{self, Endpoints, MacAddr, Tcp};

    /// A CNM with feedback `fb` about a data frame of flow `flow`.
    fn cnm_about(flow: u32, fb: u8) -> Vec<u8> {
        let ep = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: std::net::Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: std::net::Ipv4Addr::new(10, 0, 0, 2),
            src_port: 10_000,
            dst_port: 80,
        };
        let mut sampled = Vec::new();
        let id = flow.to_be_bytes();
        headers::build_tcp_frame(&mut sampled, &ep, 64, 0, 0, 0, Tcp::ACK, 0, &id, 60);
        let (cnm, to) = Cnm::about(&sampled, fb, 7, -100, 4).unwrap();
        let mut b = Vec::new();
        cnm.write(to, [2, 0, 0, 0, 0, 0xcc], &mut b).unwrap();
        b
    }

    fn receive(q: &mut Qcn, pool: &mut PacketPool, now: Cycle, frame: &[u8]) -> Receipt {
        let pkt = pool.alloc_from(frame);
        let r = q.on_frame(now, pkt, pool);
        if r != Receipt::Taken {
            pool.free(pkt);
        }
        r
    }

    #[test]
    fn a_cnm_limits_only_its_open_flow_and_paces_it_to_the_exact_tick() {
        let clock = Clock::tofino2();
        let line = LineRate::new(clock, 100_000_000_000);
        let mut q = Qcn::new(QcnParams::standard(clock), line);
        let mut pool = PacketPool::new();
        let flow = FlowView {
            index: 0,
            id: 4,
            bytes_sent: 0,
            ipv4_bytes_sent: 0,
        };
        q.flow_started(&flow);
        // About another flow: read, counted, nothing limited.
        assert_eq!(
            receive(&mut q, &mut pool, 900, &cnm_about(9, 63)),
            Receipt::Taken
        );
        assert!(q.reaction_point(4).is_none() && q.may_send(900, 0, Some(&flow)));
        assert_eq!(
            receive(&mut q, &mut pool, 1000, &cnm_about(4, 63)),
            Receipt::Taken
        );
        // 100 G x (1 - 63/128).
        assert_eq!(q.reaction_point(4).unwrap().rate_bps(), 50_781_250_000);
        // A 1,062-byte frame (8,656 wire bits) starting at tick 200,000 (cycle 1000) holds
        // the next until 8,656 bits at the cut rate: 51,136.98 ticks, rounded up.
        q.on_data_start(&flow, 200_000, 1062);
        let ready = 200_000 + 51_137;
        assert_eq!(q.not_before(&flow), ready);
        // Cycle 1254 ends at tick 251,000, before it: no start; cycle 1255 holds it (the NIC
        // starts the frame there, at tick 251,137).
        assert!(!q.may_send(1254, 0, Some(&flow)) && q.may_send(1255, 0, Some(&flow)));
        assert!(q.may_send(1000, 0, None), "ACKs are not paced");
        assert_eq!(q.next_event(1000, &|_| true), Some(ready / 200));
        // Without data only the limiter's timer stage remains (15 ms after the CNM).
        assert_eq!(q.next_event(1000, &|_| false), Some(1000 + 22_500_000));
        // A truncated CNM is foreign; one about a finished flow changes nothing.
        let cut = cnm_about(4, 63)[..40].to_vec();
        assert_eq!(receive(&mut q, &mut pool, 1100, &cut), Receipt::Foreign);
        q.flow_finished(&flow);
        assert_eq!(
            receive(&mut q, &mut pool, 1200, &cnm_about(4, 63)),
            Receipt::Taken
        );
        assert_eq!(q.reaction_point(4).unwrap().cnms(), 1);
        assert_eq!(q.next_event(1200, &|_| true), None);
        let mut c = HostCounters::default();
        q.count(&mut c);
        assert_eq!(c.get(CNM_FRAMES), 3);
        assert_eq!(pool.live(), 0);
    }
}
