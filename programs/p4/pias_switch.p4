/* pias_switch.p4: PIAS's switch: host routes, a strict-priority queue per priority the
 * hosts write into the DSCP (8 levels), and ECN marking at 768 cells in egress. The P4
 * version of programs/pias_switch.json. */
#include <t2na.p4>
#include "include/headers.p4"

struct metadata_t {}

#define HOST_HEADERS l3_tos_headers_t
#define HOST_ROUTES_EXTRA                                                   \
    action set_queue(QueueId_t qid) { ig_tm_md.qid = qid; }                 \
    table mlfq_queue {                                                      \
        key = { hdr.ipv4.diffserv : ternary; }                              \
        actions = { set_queue; }                                            \
        default_action = set_queue(7);                                      \
        size = 8;                                                           \
        const entries = {                                                   \
            0 &&& 0xfc : set_queue(0);                                      \
            4 &&& 0xfc : set_queue(1);                                      \
            8 &&& 0xfc : set_queue(2);                                      \
            12 &&& 0xfc : set_queue(3);                                     \
            16 &&& 0xfc : set_queue(4);                                     \
            20 &&& 0xfc : set_queue(5);                                     \
            24 &&& 0xfc : set_queue(6);                                     \
            28 &&& 0xfc : set_queue(7);                                     \
        }                                                                   \
    }
#define HOST_ROUTES_AFTER mlfq_queue.apply();
#include "include/host_routes.p4"

parser EgressParser(packet_in pkt, out l3_tos_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control Egress(inout l3_tos_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action mark() {
        if (hdr.ipv4.diffserv[1:0] != 0) {
            hdr.ipv4.diffserv[1:0] = 3;
        }
    }
    table ecn_mark { actions = { mark; } default_action = mark(); }

    apply {
        if (hdr.ipv4.isValid()) {
            if (eg_intr_md.enq_qdepth >= 768) {
                ecn_mark.apply();
            }
        }
    }
}

control EgressDeparser(packet_out pkt, inout l3_tos_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
