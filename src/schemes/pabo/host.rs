//! PABO's host side (`docs/schemes/pabo.md`): a data frame of this host's that comes back (a
//! switch bounced it: its source is this host, its destination is not) is sent again as it
//! is, PABO shim ([`super::wire`]) included, ahead of the host's own frames. Without
//! this feature such a frame is foreign. The host's transport reads every other frame past
//! its shim (`HostFeature::inner`), and the feature counts what the shims of the data frames
//! it receives said ([`PaboArrivals`]) and how many switch passes every data frame it
//! receives made ([`SwitchPasses`]).

use super::wire::Shim;
use std::any::Any;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use t2_clock::Cycle;
use t2_pipeline::{PacketHandle, PacketPool};
use t2_testbench::host_feature::{FeatureSpec, HostCounters, HostFeature, HostInfo, Receipt};
use t2_testbench::transport::{came_back, parse_segment, SENT_TTL};

/// PABO: what the shims of the data frames a host received said (frames without a shim,
/// never bounced, are not counted here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PaboArrivals {
    /// Data frames that arrived with a shim.
    pub frames: u64,
    /// The sum of their bounce counts `n_p`.
    pub bounces: u64,
    /// The largest `n_p` and `max_hop` among them.
    pub max_n_p: u8,
    pub max_hop: u8,
    /// Every data frame received, bounced or not, by the switch passes it made.
    pub switch_passes: SwitchPasses,
}

/// Data frames by the switch passes they made on their way, bounces and trips back to their
/// source included: `SENT_TTL` less their IPv4 TTL on arrival (every pass lowers it by one;
/// a source resends a bounced frame as it came back). Entry `k` counts the frames that made
/// `k` passes; written as a map of the non-zero entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchPasses(pub [u64; SENT_TTL as usize + 1]);

impl Default for SwitchPasses {
    fn default() -> SwitchPasses {
        SwitchPasses([0; SENT_TTL as usize + 1])
    }
}

impl SwitchPasses {
    fn add(&mut self, ttl: u8) {
        // A TTL above the one sent cannot come from this transport's hosts; count it as 0.
        self.0[SENT_TTL.saturating_sub(ttl) as usize] += 1;
    }

    fn merge(&mut self, o: &SwitchPasses) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

impl serde::Serialize for SwitchPasses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (passes, &n) in self.0.iter().enumerate().filter(|(_, &n)| n > 0) {
            m.serialize_entry(&passes, &n)?;
        }
        m.end()
    }
}

impl PaboArrivals {
    fn add(&mut self, shim: Shim) {
        self.frames += 1;
        self.bounces += shim.n_p as u64;
        self.max_n_p = self.max_n_p.max(shim.n_p);
        self.max_hop = self.max_hop.max(shim.max_hop);
    }

    /// Adds another host's counts.
    pub fn merge(&mut self, o: PaboArrivals) {
        self.frames += o.frames;
        self.bounces += o.bounces;
        self.max_n_p = self.max_n_p.max(o.max_n_p);
        self.max_hop = self.max_hop.max(o.max_hop);
        self.switch_passes.merge(&o.switch_passes);
    }
}

/// The counts of bounced frames a host sent again, and of those it still holds to send
/// ([`HostCounters`]).
pub const RESENT: &str = "resent_bounced";
pub const HELD: &str = "frames_held";

/// The prefix of the counts [`PaboArrivals`] adds ([`PaboArrivals::count`]).
const ARRIVALS: &str = "pabo.";

impl PaboArrivals {
    /// Adds these arrivals to `c`, as `pabo.frames`, `pabo.bounces`, `pabo.max_n_p` and
    /// `pabo.max_hop` (largest values) and `pabo.passes.K` (the frames that made K switch
    /// passes).
    pub fn count(&self, c: &mut HostCounters) {
        c.add("pabo.frames", self.frames);
        c.add("pabo.bounces", self.bounces);
        c.raise("pabo.max_n_p", self.max_n_p as u64);
        c.raise("pabo.max_hop", self.max_hop as u64);
        for (passes, &n) in self
            .switch_passes
            .0
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
        {
            c.add(&format!("pabo.passes.{passes}"), n);
        }
    }

    /// The arrivals counted in `c` ([`PaboArrivals::count`]; every host's, once merged).
    pub fn from_counters(c: &HostCounters) -> PaboArrivals {
        let mut a = PaboArrivals {
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
}

/// A host that resends the frames bounced back to it.
pub struct Pabo {
    me: Ipv4Addr,
    /// Bounced frames waiting to be sent again, and how many were.
    held: VecDeque<PacketHandle>,
    resent: u64,
    arrivals: PaboArrivals,
}

impl Pabo {
    pub fn new(me: Ipv4Addr) -> Pabo {
        Pabo {
            me,
            held: VecDeque::new(),
            resent: 0,
            arrivals: PaboArrivals::default(),
        }
    }

    pub fn arrivals(&self) -> PaboArrivals {
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
                self.arrivals.add(shim);
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
        self.arrivals.count(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use t2_pipeline::headers::{self, Endpoints, MacAddr, Tcp};

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
            PaboArrivals::from_counters(&c),
            PaboArrivals {
                frames: 1,
                bounces: 2,
                max_n_p: 2,
                max_hop: 4,
                switch_passes: passes,
            }
        );
        let json = serde_json::to_string(&PaboArrivals::from_counters(&c).switch_passes).unwrap();
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
