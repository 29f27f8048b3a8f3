//! PABO's host side (`docs/schemes/pabo.md`): a data frame of this host's that comes back (a
//! switch bounced it: its source is this host, its destination is not) is sent again as it
//! is, PABO shim ([`super::wire`]) included, ahead of the host's own frames. Without
//! this feature such a frame is foreign. The host's transport reads every other frame past
//! its shim (`HostFeature::inner`), and the feature counts what the shims of the data frames
//! it receives said and how many switch passes every data frame it receives made
//! ([`BounceArrivals`]), which the results report as the run's bounces ([`BOUNCE_REPORT`]).

use super::wire::Shim;
use crate::scenario::host_keys::{self, HostKey};
use crate::scenario::results::{BounceArrivals, BounceReport, SwitchPasses};
use std::any::Any;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::host_feature::{FeatureSpec, HostCounters, HostFeature, HostInfo, Receipt};
use t2_testbench::transport::{came_back, parse_segment};

/// `[transport] resend_bounced = true`: hosts run [`Pabo`] without the scheme.
pub const HOST_KEY: HostKey = HostKey {
    key: "resend_bounced",
    with_scheme: false,
    build: |value, _| host_keys::flag("resend_bounced", value, spec),
};

/// The counts of bounced frames a host sent again, and of those it still holds to send
/// ([`HostCounters`]).
pub const RESENT: &str = "resent_bounced";
pub const HELD: &str = "frames_held";

/// How the results read the run's bounces from the hosts and the switches.
pub const BOUNCE_REPORT: BounceReport = BounceReport {
    arrivals: arrivals_of,
    resent: RESENT,
    counter: super::BOUNCE_COUNTER,
};

/// The prefix of the counts [`count_arrivals`] adds.
const ARRIVALS: &str = "pabo.";

/// Adds `a` to `c`, as `pabo.frames`, `pabo.bounces`, `pabo.max_n_p` and `pabo.max_hop`
/// (largest values) and `pabo.passes.K` (the frames that made K switch passes).
pub fn count_arrivals(a: &BounceArrivals, c: &mut HostCounters) {
    c.add("pabo.frames", a.frames);
    c.add("pabo.bounces", a.bounces);
    c.raise("pabo.max_n_p", a.max_n_p as u64);
    c.raise("pabo.max_hop", a.max_hop as u64);
    for (passes, &n) in a.switch_passes.0.iter().enumerate().filter(|(_, &n)| n > 0) {
        c.add(&format!("pabo.passes.{passes}"), n);
    }
}

/// The arrivals counted in `c` ([`count_arrivals`]; every host's, once merged).
pub fn arrivals_of(c: &HostCounters) -> BounceArrivals {
    let mut a = BounceArrivals {
        frames: c.get("pabo.frames"),
        bounces: c.get("pabo.bounces"),
        max_n_p: c.get("pabo.max_n_p") as u8,
        max_hop: c.get("pabo.max_hop") as u8,
        switch_passes: SwitchPasses::default(),
    };
    for (key, n) in c.with_prefix(ARRIVALS) {
        if let Some(k) = key
            .strip_prefix("passes.")
            .and_then(|k| k.parse::<usize>().ok())
        {
            a.switch_passes.0[k] += n;
        }
    }
    a
}

/// A data frame that arrived with `shim`: one more bounced frame, its bounces and hops.
fn add_shim(a: &mut BounceArrivals, shim: Shim) {
    a.frames += 1;
    a.bounces += shim.n_p as u64;
    a.max_n_p = a.max_n_p.max(shim.n_p);
    a.max_hop = a.max_hop.max(shim.max_hop);
}

/// A host that resends the frames bounced back to it.
pub struct Pabo {
    me: Ipv4Addr,
    /// Bounced frames waiting to be sent again, and how many were.
    held: VecDeque<PacketHandle>,
    resent: u64,
    arrivals: BounceArrivals,
}

impl Pabo {
    pub fn new(me: Ipv4Addr) -> Pabo {
        Pabo {
            me,
            held: VecDeque::new(),
            resent: 0,
            arrivals: BounceArrivals::default(),
        }
    }

    pub fn arrivals(&self) -> BounceArrivals {
        self.arrivals
    }
}

/// The spec of [`Pabo`], for a scheme's `Hosts`.
pub fn spec() -> FeatureSpec {
    FeatureSpec::new("pabo", String::new(), |h: &HostInfo| {
        Ok(Box::new(Pabo::new(h.me.ip)) as Box<dyn HostFeature>)
    })
}

impl HostFeature for Pabo {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn on_frame(&mut self, _now: Cycle, pkt: PacketHandle, pool: &mut PacketPool) -> Receipt {
        let bytes = pool.bytes(pkt);
        let stripped = Shim::strip(bytes);
        let inner = stripped.as_ref().map_or(bytes, |(_, b)| b.as_slice());
        if came_back(inner, self.me) {
            self.held.push_back(pkt);
            return Receipt::Taken;
        }
        let data = parse_segment(inner).filter(|s| s.data_len > 0);
        if let Some(segment) = &data {
            self.arrivals.switch_passes.add(segment.ttl);
            if let Some((shim, _)) = stripped {
                add_shim(&mut self.arrivals, shim);
            }
        }
        Receipt::NotMine
    }

    /// The transport reads a data frame or an ACK past its shim.
    fn inner(&self, frame: &[u8]) -> Option<Vec<u8>> {
        Shim::strip(frame).map(|(_, inner)| inner)
    }

    fn take_held(&mut self) -> Option<PacketHandle> {
        let pkt = self.held.pop_front()?;
        self.resent += 1;
        Some(pkt)
    }

    fn count(&self, c: &mut HostCounters) {
        c.add(RESENT, self.resent);
        c.add(HELD, self.held.len() as u64);
        count_arrivals(&self.arrivals, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_pipeline::headers::{self, Endpoints, MacAddr, Tcp};
    use t2_testbench::transport::SENT_TTL;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

    /// A data frame of the transport (flow id 5, `data` bytes) from `src` to `dst`, as it
    /// left its host.
    fn segment(src: Ipv4Addr, dst: Ipv4Addr, data: usize) -> Vec<u8> {
        segment_after(src, dst, data, 0)
    }

    /// [`segment`] after `passes` switch passes (its TTL lowered by as many).
    fn segment_after(src: Ipv4Addr, dst: Ipv4Addr, data: usize, passes: u8) -> Vec<u8> {
        let ep = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: src,
            dst_ip: dst,
            src_port: 10_005,
            dst_port: 80,
        };
        let mut payload = 5u32.to_be_bytes().to_vec();
        payload.resize(4 + data, 0);
        let mut out = Vec::new();
        headers::build_tcp_frame(
            &mut out,
            &ep,
            SENT_TTL - passes,
            0,
            0,
            0,
            Tcp::ACK,
            100,
            &payload,
            60,
        );
        out
    }

    #[test]
    fn bounced_frames_are_held_and_resent_as_they_are_and_shims_are_counted() {
        let mut p = Pabo::new(A);
        let mut pool = PacketPool::new();
        let shim = |n_p, max_hop| Shim {
            n_p,
            hop: 0,
            max_hop,
            ether_type: 0,
        };
        // Two of A's frames come back, one with a shim, one without.
        let back = shim(3, 2).insert(&segment(A, B, 100));
        for frame in [back.clone(), segment(A, B, 100)] {
            let pkt = pool.alloc_from(&frame);
            assert_eq!(p.on_frame(0, pkt, &mut pool), Receipt::Taken);
        }
        // Data for A that had been bounced twice on its way (7 switch passes); an ACK with a
        // shim (no data); data for A that was never bounced (3 passes, no shim).
        for (frame, n_p) in [
            (segment_after(B, A, 100, 7), 2),
            (segment_after(B, A, 0, 5), 7),
        ] {
            let pkt = pool.alloc_from(&shim(n_p, 4).insert(&frame));
            assert_eq!(p.on_frame(0, pkt, &mut pool), Receipt::NotMine);
            pool.free(pkt);
        }
        let plain = pool.alloc_from(&segment_after(B, A, 100, 3));
        assert_eq!(p.on_frame(0, plain, &mut pool), Receipt::NotMine);
        pool.free(plain);
        let mut c = HostCounters::default();
        p.count(&mut c);
        assert_eq!((c.get(HELD), c.get(RESENT)), (2, 0));
        // The shims count the bounced data frame; the passes count both data frames.
        let mut passes = SwitchPasses::default();
        passes.0[7] = 1;
        passes.0[3] = 1;
        assert_eq!(
            arrivals_of(&c),
            BounceArrivals {
                frames: 1,
                bounces: 2,
                max_n_p: 2,
                max_hop: 4,
                switch_passes: passes,
            }
        );
        let json = serde_json::to_string(&arrivals_of(&c).switch_passes).unwrap();
        assert_eq!(json, r#"{"3":1,"7":1}"#);
        // They go again in the order they came, the shim still on the first.
        let first = p.take_held().unwrap();
        assert_eq!(pool.bytes(first), back.as_slice());
        pool.free(first);
        let second = p.take_held().unwrap();
        pool.free(second);
        assert_eq!(p.take_held(), None);
        let mut c = HostCounters::default();
        p.count(&mut c);
        assert_eq!((c.get(HELD), c.get(RESENT)), (0, 2));
        assert_eq!(pool.live(), 0);
    }
}
