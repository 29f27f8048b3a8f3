//! Where the built-in headers and intrinsic metadata sit in the PHV.
//!
//! This is a fixed allocation for the headers the chip parses today (Ethernet, IPv4, UDP,
//! TCP). It uses only normal containers, so the MAU may compute on any of them. UDP and TCP
//! never appear together, so they share containers, as a compiler's overlay would.

use crate::hw::phv::{Container, Field};

/// One extraction: copy `len` header bytes starting at `offset` (from the header's first
/// byte) into the low bytes of `container`, big-endian. `len` is the container's size for
/// every built-in header; a program header's 3-byte group goes into a 32-bit container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extract {
    pub offset: usize,
    pub container: Container,
    pub len: usize,
}

const fn x(offset: usize, container: Container) -> Extract {
    Extract {
        offset,
        container,
        len: container.bytes(),
    }
}

/// Ethernet: dst (32 + 16), src (16 + 32), ethertype (16).
pub const ETHERNET: &[Extract] = &[
    x(0, Container::b32(0)),
    x(4, Container::b16(4)),
    x(6, Container::b16(5)),
    x(8, Container::b32(1)),
    x(12, Container::b16(6)),
];

/// IPv4 fixed header: version/IHL, TOS, length, id, flags/fragment, TTL, protocol,
/// checksum, source, destination.
pub const IPV4: &[Extract] = &[
    x(0, Container::b8(3)),
    x(1, Container::b8(4)),
    x(2, Container::b16(7)),
    x(4, Container::b16(8)),
    x(6, Container::b16(9)),
    x(8, Container::b8(5)),
    x(9, Container::b8(6)),
    x(10, Container::b16(10)),
    x(12, Container::b32(2)),
    x(16, Container::b32(3)),
];

/// UDP: ports, length, checksum.
pub const UDP: &[Extract] = &[
    x(0, Container::b16(11)),
    x(2, Container::b16(12)),
    x(4, Container::b16(13)),
    x(6, Container::b16(14)),
];

/// TCP (20 B): ports, seq, ack, offset/flags, window, checksum, urgent pointer.
pub const TCP: &[Extract] = &[
    x(0, Container::b16(11)),
    x(2, Container::b16(12)),
    x(4, Container::b32(4)),
    x(8, Container::b32(5)),
    x(12, Container::b16(13)),
    x(14, Container::b16(14)),
    x(16, Container::b16(15)),
    x(18, Container::b16(16)),
];

/// Header-valid (POV) bits.
pub const POV: Container = Container::b8(1);
pub const VALID_ETHERNET: Field = Field::at(POV, 0, 1);
pub const VALID_IPV4: Field = Field::at(POV, 1, 1);
pub const VALID_UDP: Field = Field::at(POV, 2, 1);
pub const VALID_TCP: Field = Field::at(POV, 3, 1);

pub const ETH_TYPE: Field = Field::whole(Container::b16(6));
pub const IPV4_VERSION_IHL: Field = Field::whole(Container::b8(3));
pub const IPV4_IHL: Field = Field::low(Container::b8(3), 4);
pub const IPV4_TOS: Field = Field::whole(Container::b8(4));
pub const IPV4_ECN: Field = Field::low(Container::b8(4), 2);
pub const IPV4_TOTAL_LEN: Field = Field::whole(Container::b16(7));
pub const IPV4_TTL: Field = Field::whole(Container::b8(5));
pub const IPV4_PROTOCOL: Field = Field::whole(Container::b8(6));
pub const IPV4_CHECKSUM: Field = Field::whole(Container::b16(10));
pub const IPV4_SRC: Field = Field::whole(Container::b32(2));
pub const IPV4_DST: Field = Field::whole(Container::b32(3));
pub const L4_SRC_PORT: Field = Field::whole(Container::b16(11));
pub const L4_DST_PORT: Field = Field::whole(Container::b16(12));

/// Why the pipeline decided to drop the packet (0 = keep). Tofino2's `drop_ctl` is 3 bits;
/// the model keeps the reason in a whole container so drops are counted by cause.
pub const DROP_REASON: Field = Field::whole(Container::b8(0));
/// Ingress: the 9-bit device port the packet came in on (`ingress_port`).
pub const INGRESS_PORT: Field = Field::low(Container::b16(0), 9);
/// Ingress: the device port to send the packet to (`ucast_egress_port`).
pub const UCAST_EGRESS_PORT: Field = Field::low(Container::b16(1), 9);
/// Whether ingress chose an egress port (a program sets it with `UCAST_EGRESS_PORT`).
pub const EGRESS_PORT_VALID: Field = Field::at(Container::b16(1), 15, 1);
/// Egress: the device port the packet leaves by (`egress_port`).
pub const EGRESS_PORT: Field = Field::low(Container::b16(2), 9);
/// Frame length in bytes as received, FCS included (`pkt_length`).
pub const PKT_LENGTH: Field = Field::whole(Container::b16(3));
/// Ingress: the queue within the egress port (`qid`, 7 bits).
pub const QID: Field = Field::low(Container::b8(2), 7);

/// Highest container index used per width (8, 16, 32 bits), plus one.
pub const CONTAINERS_USED: [u16; 3] = [7, 17, 6];
