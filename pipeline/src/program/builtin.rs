//! The built-in parser graph: Ethernet, then IPv4 by ethertype 0x0800, then UDP or TCP by
//! protocol. It is IR data like any program's graph; `parser_check::builtin_graph` resolves
//! it once into the graph every program without its own parser shares (the hardware's fast
//! path runs it).

use crate::program::ir::{self, HeaderType, ParserGraph, ParserState};
use crate::wire::headers;

/// The built-in header types, as IR. Their PHV containers are fixed by `layout.rs`, and the
/// names tables use for their fields are those of `fields::BUILTINS`.
pub fn headers() -> Vec<HeaderType> {
    vec![
        HeaderType::new(
            "ethernet",
            &[("dst_addr", 48), ("src_addr", 48), ("ether_type", 16)],
        ),
        HeaderType::new(
            "ipv4",
            &[
                ("version", 4),
                ("ihl", 4),
                ("diffserv", 6),
                ("ecn", 2),
                ("total_len", 16),
                ("identification", 16),
                ("flags", 3),
                ("frag_offset", 13),
                ("ttl", 8),
                ("protocol", 8),
                ("hdr_checksum", 16),
                ("src_addr", 32),
                ("dst_addr", 32),
            ],
        ),
        HeaderType::new(
            "udp",
            &[
                ("src_port", 16),
                ("dst_port", 16),
                ("length", 16),
                ("checksum", 16),
            ],
        ),
        HeaderType::new(
            "tcp",
            &[
                ("src_port", 16),
                ("dst_port", 16),
                ("seq_no", 32),
                ("ack_no", 32),
                ("data_offset", 4),
                ("res", 3),
                ("flags", 9),
                ("window", 16),
                ("checksum", 16),
                ("urgent_ptr", 16),
            ],
        ),
    ]
}

/// The built-in parser graph, as IR: what a program without a parser runs.
pub fn graph() -> ParserGraph {
    ParserGraph {
        states: vec![
            ParserState::new(ir::START)
                .extract("ethernet")
                .select(&["ethernet.ether_type"], ir::ACCEPT)
                .case(&[headers::ETHERTYPE_IPV4 as u64], "parse_ipv4"),
            ParserState::new("parse_ipv4")
                .extract("ipv4")
                .select(&["ipv4.protocol"], ir::ACCEPT)
                .case(&[headers::IPPROTO_UDP as u64], "parse_udp")
                .case(&[headers::IPPROTO_TCP as u64], "parse_tcp"),
            ParserState::new("parse_udp").extract("udp"),
            ParserState::new("parse_tcp").extract("tcp"),
        ],
        value_sets: Vec::new(),
        emit: Vec::new(),
    }
}
