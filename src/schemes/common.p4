/* common.p4: what every scheme's switch shares: the headers, the parsers, the deparsers and
 * IPv4 host-route forwarding. A scheme's own file includes it after <t2na.p4>, declares its
 * `metadata_t`, and writes its Ingress and Egress controls and the Pipeline.
 *
 * The headers are laid out as t2sim's built-in ethernet, ipv4, udp and tcp, so that they
 * keep the built-in PHV containers and the built-in parse graph (docs/p4.md). Define
 * SWITCH_HEADERS as `tos_headers_t` before including this file for an IPv4 header with one
 * 8-bit TOS byte (DSCP and ECN together) instead of `diffserv:6, ecn:2`. */
#ifndef _T2SIM_SCHEMES_COMMON_P4_
#define _T2SIM_SCHEMES_COMMON_P4_

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<6> diffserv;
    bit<2> ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* IPv4 with one TOS byte: DSCP in bits 7..2, ECN in 1..0. */
header ipv4_tos_h {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header tcp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4> data_offset;
    bit<3> res;
    bit<9> flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

struct tos_headers_t {
    ethernet_h ethernet;
    ipv4_tos_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

#ifndef SWITCH_HEADERS
#define SWITCH_HEADERS headers_t
#endif

/* Ethernet, IPv4 by ether type, UDP or TCP by protocol: t2sim's built-in graph. */
#define PARSE_ETH_IPV4_L4(HDR)                                              \
    state parse_ethernet {                                                  \
        pkt.extract(HDR.ethernet);                                          \
        transition select(HDR.ethernet.ether_type) {                        \
            0x0800: parse_ipv4;                                             \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_ipv4 {                                                      \
        pkt.extract(HDR.ipv4);                                              \
        transition select(HDR.ipv4.protocol) {                              \
            17: parse_udp;                                                  \
            6: parse_tcp;                                                   \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_udp { pkt.extract(HDR.udp); transition accept; }           \
    state parse_tcp { pkt.extract(HDR.tcp); transition accept; }

/* The parsers and deparsers of a switch whose headers are SWITCH_HEADERS; a scheme with a
 * header of its own (pabo.p4) defines OWN_PARSERS and writes its own. */
#ifndef OWN_PARSERS
parser IngressParser(packet_in pkt, out SWITCH_HEADERS hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control IngressDeparser(packet_out pkt, inout SWITCH_HEADERS hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out SWITCH_HEADERS hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control EgressDeparser(packet_out pkt, inout SWITCH_HEADERS hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
#endif

/* Host-route forwarding, declared inside a scheme's Ingress control: `ipv4_host` maps a
 * destination address to `forward(port)` (the chip's control plane installs one entry per
 * host, by this name), and packets that are not IPv4, whose TTL runs out or whose
 * destination has no route are dropped with their reason. The Ingress's apply block runs
 * them as HOST_ROUTES_APPLY shows. */
#define HOST_ROUTES                                                         \
    action forward(PortId_t port) {                                         \
        ig_tm_md.ucast_egress_port = port;                                  \
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;                                    \
    }                                                                       \
    @drop_reason("no_route") action drop_no_route() { ig_dprsr_md.drop_ctl = 1; } \
    @drop_reason("not_ipv4") action drop_not_ipv4() { ig_dprsr_md.drop_ctl = 1; } \
    @drop_reason("ttl_expired") action drop_ttl_expired() { ig_dprsr_md.drop_ctl = 1; } \
    table not_ipv4 { actions = { drop_not_ipv4; } default_action = drop_not_ipv4(); } \
    table ttl_expired { actions = { drop_ttl_expired; } default_action = drop_ttl_expired(); } \
    table ipv4_host {                                                       \
        key = { hdr.ipv4.dst_addr : exact; }                                \
        actions = { forward; drop_no_route; }                               \
        default_action = drop_no_route();                                   \
        size = 4096;                                                        \
    }

#endif
