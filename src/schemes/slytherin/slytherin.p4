/* slytherin.p4: Slytherin's switch (Rezaei, Malekpourshahraki, Vamanan, "Slytherin:
 * Dynamic, Network-assisted Prioritization of Tail Packets in Datacenter Networks", arXiv
 * 1807.02184). Section III and Algorithm 1: a packet that met congestion at an earlier
 * switch carries ECN = CE, and every later switch puts it in a strict-priority queue ahead
 * of unmarked data; ACKs take the same queue. Every switch also marks CE at K cells of
 * egress queue, as DCTCP's switches do (the hosts run DCTCP).
 *
 * K_CELLS is the marking threshold in 176-byte cells (parameter `k_cells`, passed as
 * `-D K_CELLS=...`); the queues' priorities (queue 1 one strict priority above queue 0) are
 * the TM's, set by the scheme's Rust code (port_queues). Docs: docs/schemes/slytherin.md. */
#include <t2na.p4>

#ifndef K_CELLS
#define K_CELLS 768
#endif

// The strict-priority queue (unmarked data stays in queue 0). The scheme passes its Rust
// constants for this and ACK_MAX_TOTAL_LEN; the values here are the same, for compiling
// the file alone (`t2sim report --p4`; a test holds the two equal).
#ifndef HIGH_QID
#define HIGH_QID 1
#endif

// The longest IPv4 packet taken for an ACK: 20 bytes of IPv4 and 20 of TCP, the transport's
// largest SACK option (36) and its 4-byte flow id (t2_testbench::transport's
// ACK_MAX_IPV4_TOTAL_LEN). TCP's ACK flag cannot tell ACKs apart: data segments carry it too.
#ifndef ACK_MAX_TOTAL_LEN
#define ACK_MAX_TOTAL_LEN 80
#endif

struct metadata_t {}

#include "../common.p4"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HOST_ROUTES

    // Algorithm 1: marked packets and ACKs to the high-priority queue.
    action to_high() { ig_tm_md.qid = HIGH_QID; }
    table promote_ce { actions = { to_high; } default_action = to_high(); }
    table promote_ack { actions = { to_high; } default_action = to_high(); }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            if (hdr.ipv4.ecn == 3) {
                promote_ce.apply();
            } else if (hdr.tcp.isValid() && hdr.ipv4.total_len <= ACK_MAX_TOTAL_LEN) {
                promote_ack.apply();
            }
        }
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    // Algorithm 1, congestion detection: DCTCP's marking, in both queues (the paper does not
    // restrict it to the normal one). A packet marked here was queued before the mark, so
    // it is promoted from the next switch on.
    action mark() {
        if (hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
        }
    }
    table ecn_mark { actions = { mark; } default_action = mark(); }

    apply {
        if (hdr.ipv4.isValid()) {
            if (eg_intr_md.enq_qdepth >= K_CELLS) {
                ecn_mark.apply();
            }
        }
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
