/* ecn_marking.p4: mark ECN-capable IPv4 packets Congestion Experienced in egress when
 * the queue they joined held 1000 cells or more (DCTCP-style marking on enqueue depth).
 * The P4 version of programs/ecn_marking.json. */
#include <t2na.p4>
#include "include/headers.p4"

struct metadata_t {}

parser IngressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control Ingress(inout l3_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {}
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

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
            if (eg_intr_md.enq_qdepth >= 1000) {
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
