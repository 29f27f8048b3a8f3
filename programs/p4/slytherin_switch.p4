/* slytherin_switch.p4: Slytherin's switch: host routes; packets marked CE and short TCP
 * packets (ACKs) go to the high-priority queue; ECN marking at 768 cells in egress. The P4
 * version of programs/slytherin_switch.json. */
#include <t2na.p4>
#include "include/headers.p4"

struct metadata_t {}

// The longest IPv4 packet taken for an ACK: 20 bytes of IPv4 and 20 of TCP, the transport's
// largest SACK option (36) and its 4-byte flow id (t2_testbench::transport's
// ACK_MAX_IPV4_TOTAL_LEN).
#define ACK_MAX_TOTAL_LEN 80

#define HOST_ROUTES_EXTRA                                                   \
    action to_high() { ig_tm_md.qid = 1; }                                  \
    table promote_ce { actions = { to_high; } default_action = to_high(); } \
    table promote_ack { actions = { to_high; } default_action = to_high(); }
#define HOST_ROUTES_AFTER                                                   \
    if (hdr.ipv4.ecn == 3) {                                                \
        promote_ce.apply();                                                 \
    } else if (hdr.tcp.isValid() && hdr.ipv4.total_len <= ACK_MAX_TOTAL_LEN) { \
        promote_ack.apply();                                                \
    }
#include "include/host_routes.p4"

parser EgressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control Egress(inout l3_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action mark() {
        if (hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
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

control EgressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
