/* hpcc.p4: HPCC's switch (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM
 * 2019; §3.1: every switch on a data packet's path appends an INT record, the time, the
 * port's transmitted bytes, its queue length and the link's rate, which the receiver echoes
 * to the sender), as the HPCC ns-3 artifact lays the record out (`int-header.h`: five hop
 * records and a hop count, 42 bytes after the BTH, room left by the sender) and fills it
 * (`switch-node.cc`, `SwitchNotifyDequeue`). PFC and the queues are the traffic manager's,
 * set by `mod.rs`; the NICs' rate and window update is host behaviour.
 *
 * Defines, from the port speed (`mod.rs`, `IntConfig`):
 *   RATE_CODE     the INT code of the port's rate (25/50/100/200/400 Gb/s = 0..4)
 *   BYTES_SHIFT   the byte count's unit, 2^BYTES_SHIFT bytes
 * Docs: docs/schemes/hpcc.md. */
#include <t2na.p4>

#ifndef RATE_CODE
#define RATE_CODE 2
#endif
#ifndef BYTES_SHIFT
#define BYTES_SHIFT 7
#endif
/* A record's 64-bit word is qlen:17 bytes:20 time:24 rate:3; the PHV needs a byte boundary
 * at least every 32 bits, and these fields have none until bit 64, so the parser cuts the
 * word at bytes 3 and 5 and the byte count and the time are written in two pieces. */
#define BYTES_LO_BITS 13
#define TIME_LO_BITS 21
#define BYTES_HI_SHIFT (BYTES_SHIFT + BYTES_LO_BITS)
#define QLEN_MAX 131071
#define ROCE_UDP_PORT 4791

struct metadata_t {
    bit<32> tx_bytes;    // the bytes the port sent before this packet
}

#define OWN_PARSERS
#include "../common.p4"

/* RoCEv2's base transport header. */
header bth_h {
    bit<8> opcode;
    bit<8> flags;
    bit<16> pkey;
    bit<8> rsvd;
    bit<24> qp;
    bit<8> ack_req;
    bit<24> psn;
}

/* One hop record, as the parser cuts it. */
header int_hop_h {
    bit<17> qlen;
    bit<7> bytes_hi;
    bit<13> bytes_lo;
    bit<3> time_hi;
    bit<21> time_lo;
    bit<3> rate;
}

header int_nhop_h {
    bit<16> nhop;
}

struct hpcc_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
    bth_h bth;
    int_hop_h int_hop0;
    int_hop_h int_hop1;
    int_hop_h int_hop2;
    int_hop_h int_hop3;
    int_hop_h int_hop4;
    int_nhop_h int_nhop;
}

/* Ethernet, IPv4, UDP to RoCEv2's port, the BTH and, for the SEND opcodes (first, middle,
 * last, only), the INT header: three records to a state (a state has 20 16-bit extractors
 * and the 42 bytes need more), kept apart by `@dontmerge` as bf-p4c does. */
#define PARSE_HPCC(HDR)                                                     \
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
    state parse_udp {                                                       \
        pkt.extract(HDR.udp);                                               \
        transition select(HDR.udp.dst_port) {                               \
            ROCE_UDP_PORT: parse_bth;                                       \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_tcp { pkt.extract(HDR.tcp); transition accept; }           \
    state parse_bth {                                                       \
        pkt.extract(HDR.bth);                                               \
        transition select(HDR.bth.opcode) {                                 \
            0x00: parse_int;                                                \
            0x01: parse_int;                                                \
            0x02: parse_int;                                                \
            0x04: parse_int;                                                \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_int {                                                       \
        pkt.extract(HDR.int_hop0);                                          \
        pkt.extract(HDR.int_hop1);                                          \
        pkt.extract(HDR.int_hop2);                                          \
        transition parse_int_rest;                                          \
    }                                                                       \
    @dontmerge("ingress")                                                   \
    state parse_int_rest {                                                  \
        pkt.extract(HDR.int_hop3);                                          \
        pkt.extract(HDR.int_hop4);                                          \
        pkt.extract(HDR.int_nhop);                                          \
        transition accept;                                                  \
    }

parser IngressParser(packet_in pkt, out hpcc_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_HPCC(hdr)
}

control IngressDeparser(packet_out pkt, inout hpcc_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ingress(inout hpcc_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HOST_ROUTES

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
        }
    }
}

parser EgressParser(packet_in pkt, out hpcc_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    PARSE_HPCC(hdr)
}

/* Record I: the queue as the packet leaves (cells, saturated to 17 bits; the artifact: the
 * port's queued bytes), the port's byte count in 2^BYTES_SHIFT-byte units (mod 2^20), the
 * egress parser's timestamp (ns, mod 2^24), the port's rate code; then one hop more. */
#define INT_HOP(I)                                                          \
    action record_hop##I() {                                                   \
        hdr.int_hop##I.qlen = (bit<17>) min(eg_intr_md.deq_qdepth, QLEN_MAX); \
        hdr.int_hop##I.bytes_hi = (bit<7>) (meta.tx_bytes >> BYTES_HI_SHIFT); \
        hdr.int_hop##I.bytes_lo = (bit<13>) (meta.tx_bytes >> BYTES_SHIFT); \
        hdr.int_hop##I.time_hi = (bit<3>) (eg_prsr_md.global_tstamp[31:0] >> TIME_LO_BITS); \
        hdr.int_hop##I.time_lo = (bit<21>) eg_prsr_md.global_tstamp[31:0];  \
        hdr.int_hop##I.rate = RATE_CODE;                                    \
        hdr.int_nhop.nhop = hdr.int_nhop.nhop + 1;                          \
    }

control Egress(inout hpcc_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* The chip has no per-port byte counter a program can read, so the program keeps its
     * own: the old value out, the bytes sent before this packet, as the artifact reads
     * `m_txBytes` before adding the packet. */
    Register<bit<32>, PortId_t>(512) port_tx_bytes;
    RegisterAction<bit<32>, PortId_t, bit<32>>(port_tx_bytes) count_port_bytes = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + (bit<32>) eg_intr_md.pkt_length;
        }
    };
    action int_tx_bytes() { meta.tx_bytes = count_port_bytes.execute(eg_intr_md.egress_port); }
    /* Past the fifth hop (the artifact's maxHop) the table has no entry and its default only
     * counts the hop, so the sender ignores the header. */
    action int_count_hop() { hdr.int_nhop.nhop = hdr.int_nhop.nhop + 1; }
    INT_HOP(0)
    INT_HOP(1)
    INT_HOP(2)
    INT_HOP(3)
    INT_HOP(4)
    table int_bytes { actions = { int_tx_bytes; } default_action = int_tx_bytes(); }
    table int_push {
        key = { hdr.int_nhop.nhop : exact; }
        actions = { int_count_hop; record_hop0; record_hop1; record_hop2; record_hop3; record_hop4; }
        default_action = int_count_hop();
        const entries = {
            0: record_hop0();
            1: record_hop1();
            2: record_hop2();
            3: record_hop3();
            4: record_hop4();
        }
        size = 5;
    }

    apply {
        if (hdr.int_nhop.isValid()) {
            int_bytes.apply();
            int_push.apply();
        }
    }
}

control EgressDeparser(packet_out pkt, inout hpcc_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
