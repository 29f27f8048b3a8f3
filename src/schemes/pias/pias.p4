/* pias.p4: PIAS's switch (Bai, Chen, Chen, Han, Wang, Wang, "Information-Agnostic Flow
 * Scheduling for Commodity Data Centers", NSDI 2015). The hosts tag each packet with a
 * priority by the bytes its flow has sent (§3.2, packet tagging: an 8-level multi-level
 * feedback queue in the DSCP); the switch (§3.3, switch design) serves the levels from
 * strict-priority queues and marks ECN per queue, and the hosts run DCTCP (§3.4).
 *
 * K_CELLS is the per-queue marking threshold in 176-byte cells (parameter `k_cells`, passed
 * as `-D K_CELLS=...`); the queues' strict priorities (queue l at priority 7 - l) are the
 * TM's, set by the scheme's Rust code (port_queues). Docs: docs/schemes/pias.md. */
#include <t2na.p4>

#ifndef K_CELLS
#define K_CELLS 768
#endif

struct metadata_t {}

// The DSCP and ECN bits as one TOS byte: the level is matched under the DSCP mask 0xfc.
#define SWITCH_HEADERS tos_headers_t
#include "../common.p4"

control Ingress(inout tos_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HOST_ROUTES

    // §3.3: DSCP l (MLFQ level l) to queue l; any other DSCP to the lowest level's queue.
    action set_queue(QueueId_t qid) { ig_tm_md.qid = qid; }
    table mlfq_queue {
        key = { hdr.ipv4.diffserv : ternary; }
        actions = { set_queue; }
        default_action = set_queue(7);
        size = 8;
        const entries = {
            0 &&& 0xfc : set_queue(0);
            4 &&& 0xfc : set_queue(1);
            8 &&& 0xfc : set_queue(2);
            12 &&& 0xfc : set_queue(3);
            16 &&& 0xfc : set_queue(4);
            20 &&& 0xfc : set_queue(5);
            24 &&& 0xfc : set_queue(6);
            28 &&& 0xfc : set_queue(7);
        }
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            mlfq_queue.apply();
        }
    }
}

control Egress(inout tos_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    // §3.3, ECN marking per queue: `enq_qdepth` is the depth of the packet's own queue on
    // Tofino2, so each level is marked on its own occupancy.
    action mark() {
        if (hdr.ipv4.diffserv[1:0] != 0) {
            hdr.ipv4.diffserv[1:0] = 3;
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
