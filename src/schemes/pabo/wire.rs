//! PABO's shim header: what a bounced packet carries between its Ethernet and IPv4 headers.
//!
//! A switch that bounces a packet for the first time inserts the shim: the Ethernet
//! EtherType becomes [`PABO_ETHERTYPE`] (0x88B6, IEEE 802 Local Experimental EtherType 2; BFC
//! uses the first one, 0x88B5) and the shim keeps the EtherType that was there (IPv4). The
//! shim is never removed: hosts read it (and resend bounced frames with it), and a switch
//! puts every packet that carries it into the bounce queue. Layout, 6 bytes, big-endian:
//!
//! | byte | field | meaning (the authors' `EtherFrame.msg` name) |
//! |---|---|---|
//! | 0 | `n_p` | times the packet was bounced (`passBackNum`); never decreases |
//! | 1 | `hop` | bounce hops not yet undone (`passBackHop`): +1 per bounce, -1 per forward |
//! | 2 | `max_hop` | the largest `hop` so far (`maxPassBackHop`) |
//! | 3 | `reserved` | 0 |
//! | 4..6 | `ether_type` | the EtherType of what follows (0x0800) |

use t2_pipeline::headers::Ethernet;

/// The EtherType of a frame carrying the PABO shim.
pub const PABO_ETHERTYPE: u16 = 0x88B6;

/// The PABO shim header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shim {
    pub n_p: u8,
    pub hop: u8,
    pub max_hop: u8,
    pub ether_type: u16,
}

impl Shim {
    /// Bytes on the wire.
    pub const LEN: usize = 6;

    /// The shim of `frame`, if its EtherType says it has one and it is all there.
    pub fn parse(frame: &[u8]) -> Option<Shim> {
        let b = frame.get(Ethernet::LEN - 2..Ethernet::LEN + Shim::LEN)?;
        (b[..2] == PABO_ETHERTYPE.to_be_bytes()).then(|| Shim {
            n_p: b[2],
            hop: b[3],
            max_hop: b[4],
            ether_type: u16::from_be_bytes([b[6], b[7]]),
        })
    }

    /// `frame` without its shim (the Ethernet header's EtherType restored), if it has one:
    /// what a host parses to read the packet inside.
    pub fn strip(frame: &[u8]) -> Option<(Shim, Vec<u8>)> {
        let shim = Shim::parse(frame)?;
        let mut out = Vec::with_capacity(frame.len() - Shim::LEN);
        out.extend_from_slice(&frame[..Ethernet::LEN - 2]);
        out.extend_from_slice(&shim.ether_type.to_be_bytes());
        out.extend_from_slice(&frame[Ethernet::LEN + Shim::LEN..]);
        Some((shim, out))
    }

    /// `frame` with this shim inserted after the Ethernet header (the frame's EtherType moves
    /// into the shim); what a switch's first bounce does.
    pub fn insert(self, frame: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(frame.len() + Shim::LEN);
        out.extend_from_slice(&frame[..Ethernet::LEN - 2]);
        out.extend_from_slice(&PABO_ETHERTYPE.to_be_bytes());
        out.extend_from_slice(&[self.n_p, self.hop, self.max_hop, 0]);
        out.extend_from_slice(&frame[Ethernet::LEN - 2..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_then_strip_gives_the_frame_back() {
        let frame: Vec<u8> = (0..64u8)
            .map(|i| {
                if i == 12 {
                    8
                } else if i == 13 {
                    0
                } else {
                    i
                }
            })
            .collect();
        let shim = Shim {
            n_p: 3,
            hop: 2,
            max_hop: 2,
            ether_type: 0x0800,
        };
        let with = shim.insert(&frame);
        assert_eq!(with.len(), 70);
        assert_eq!(&with[12..20], &[0x88, 0xB6, 3, 2, 2, 0, 0x08, 0x00]);
        assert_eq!(Shim::parse(&with), Some(shim));
        assert_eq!(Shim::strip(&with), Some((shim, frame.clone())));
        // A plain IPv4 frame and a truncated shim have none.
        assert_eq!(Shim::parse(&frame), None);
        assert_eq!(Shim::parse(&with[..19]), None);
    }
}
