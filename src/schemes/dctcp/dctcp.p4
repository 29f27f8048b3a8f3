/* dctcp.p4: DCTCP's switch (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010).
 * Forwarding by host route, and the one thing DCTCP asks of a switch, §3.1 "Simple Marking
 * at the Switch": an ECN-capable packet that finds the instantaneous queue at or above K
 * leaves with Congestion Experienced set. The hosts' reaction to the fraction of marked
 * ACKs (§3.1, sender side) is host behaviour, not switch logic.
 *
 * K_CELLS is the threshold in 176-byte cells of the egress queue at enqueue (Tofino2's
 * `enq_qdepth`); the scheme's parameter `k_cells` passes it as `-D K_CELLS=...`. */
#include <t2na.p4>

#ifndef K_CELLS
#define K_CELLS 400
#endif

struct metadata_t {}

#include "../common.p4"

control Ingress(inout headers_t hdr, inout metadata_t meta,
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

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    // §3.1: mark CE, but only ECN-capable packets (ECT(0), ECT(1) or CE already).
    action mark() {
        if (hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
        }
    }
    table ecn_mark { actions = { mark; } default_action = mark(); }

    apply {
        if (hdr.ipv4.isValid()) {
            // The queue this packet joined, as it was when it joined.
            if (eg_intr_md.enq_qdepth >= K_CELLS) {
                ecn_mark.apply();
            }
        }
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
