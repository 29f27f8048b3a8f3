/* Headers the corpus shares, laid out as t2sim's built-in ethernet, ipv4, udp and tcp
 * (so they keep the built-in PHV containers; docs/p4.md), and an 802.1Q tag. */
#ifndef _CORPUS_HEADERS_P4_
#define _CORPUS_HEADERS_P4_

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header vlan_h {
    bit<3> pcp;
    bit<1> dei;
    bit<12> vid;
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

/* IPv4 as most P4 programs declare it: one 8-bit TOS byte (DSCP and ECN). */
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

struct l3_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

struct l3_tos_headers_t {
    ethernet_h ethernet;
    ipv4_tos_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

#endif
