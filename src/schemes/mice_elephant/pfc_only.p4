/* pfc_only.p4: the pfc-only baseline of Mice/Elephant isolation (Wang, Sun, Salamatian,
 * Li, "Isolating Mice and Elephant in Data Centers", 2016, §2.1: PFC alone, every packet in
 * one lossless queue, no end-to-end control). PFC itself (the per-ingress-port XOFF/XON
 * thresholds and headroom of the lossless class, the pause frames) is the traffic
 * manager's, set by the scheme's Rust code (`pfc_cells`, `port_queues`); the program
 * forwards by host route and, with the same ingress as every variant of the family, routes
 * CNMs (this variant makes none): a CNM travels to the source of the frame it encapsulates,
 * by that frame's source IPv4 address, in the CNM queue (the isolation's mice queue).
 *
 * The other variants (mice-elephant, pfc-qcn, qcn-only) add a QCN congestion point in
 * egress whose CNM copies need an egress parser that tells a mirrored copy apart by its
 * mirror type, which the P4 front end does not lower yet; their programs are still built
 * in Rust (mod.rs). Docs: docs/schemes/mice-elephant.md. */
#include <t2na.p4>

/* The queue CNMs travel in (and, under isolation, the mice): strict priority above the
 * elephants' queue 0. */
#define MICE_QID 1

struct metadata_t {
    bit<32> orig_dst;    // a CNM's own destination while it is routed by its source
}

#define OWN_PARSERS
#include "../common.p4"

/* An 802.1Qau CNM after its Ethernet header (the frame format of t2sim's qcn codec):
 * version and QntzFb, the congestion point's id, cnmQOffset, cnmQDelta, the encapsulated
 * priority, destination MAC and MSDU length; the sampled frame's first bytes follow. */
header cnm_h {
    bit<16> fb;
    bit<32> cpid_hi;
    bit<32> cpid_lo;
    bit<16> q_offset;
    bit<16> q_delta;
    bit<16> prio;
    bit<16> edst_hi;
    bit<32> edst_lo;
    bit<16> msdu_len;
}

struct me_headers_t {
    ethernet_h ethernet;
    cnm_h cnm;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

/* Ethernet, then a CNM (its EtherType 0x22E9) or IPv4; a CNM's encapsulated frame is parsed
 * as IPv4, so that it can be routed by the frame's source address. */
#define PARSE_ME(HDR)                                                       \
    state parse_ethernet {                                                  \
        pkt.extract(HDR.ethernet);                                          \
        transition select(HDR.ethernet.ether_type) {                        \
            0x0800: parse_ipv4;                                             \
            0x22E9: parse_cnm;                                              \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_cnm { pkt.extract(HDR.cnm); transition parse_ipv4; }       \
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

parser IngressParser(packet_in pkt, out me_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_ME(hdr)
}

control IngressDeparser(packet_out pkt, inout me_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ingress(inout me_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HOST_ROUTES

    /* §3.2, CNMs back to the source: the host route of the sampled frame's source is the
     * way back, so the CNM's destination is swapped for that address while `ipv4_host`
     * picks the port (and lowers the TTL), then swapped back and the TTL restored: the
     * encapsulated bytes arrive as they were sampled. CNMs travel in the mice queue. */
    action cnm_to_source() {
        meta.orig_dst = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        ig_tm_md.qid = MICE_QID;
    }
    action cnm_restore() {
        hdr.ipv4.dst_addr = meta.orig_dst;
        hdr.ipv4.ttl = hdr.ipv4.ttl + 1;
    }
    table cnm_route { actions = { cnm_to_source; } default_action = cnm_to_source(); }
    table cnm_unswap { actions = { cnm_restore; } default_action = cnm_restore(); }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            if (hdr.cnm.isValid()) {
                cnm_route.apply();
            }
            ipv4_host.apply();
            if (hdr.cnm.isValid()) {
                cnm_unswap.apply();
            }
        }
    }
}

parser EgressParser(packet_in pkt, out me_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    PARSE_ME(hdr)
}

control Egress(inout me_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
#ifdef ECN_K_CELLS
    /* §6's mixed strategy under DCTCP (the scheme's end_to_end = 2): CE on ECN-capable
     * packets that join the one queue at ECN_K_CELLS or more, as the DCTCP switch marks. */
    action ecn_mark() {
        if (hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
        }
    }
    table ecn_mark_t { actions = { ecn_mark; } default_action = ecn_mark(); }
    apply {
        if (hdr.ipv4.isValid()) {
            if (eg_intr_md.enq_qdepth >= ECN_K_CELLS) {
                ecn_mark_t.apply();
            }
        }
    }
#else
    apply {}
#endif
}

control EgressDeparser(packet_out pkt, inout me_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
