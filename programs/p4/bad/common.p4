/* What every program of the broken corpus shares: t2na, the corpus headers, an ingress
 * parser and deparser, the empty egress; each file writes its control `Ingress` and ends
 * with MAIN. */
#include <t2na.p4>
#include "../include/headers.p4"
#include "../include/no_egress.p4"

struct metadata_t {
    bit<16> idx;
    bit<8> small;
    bit<32> count;
}

parser IngressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

#define INGRESS_PARAMS inout l3_headers_t hdr, inout metadata_t meta,                  \
    in ingress_intrinsic_metadata_t ig_intr_md,                                       \
    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,                           \
    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,                      \
    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md

#define MAIN Pipeline(IngressParser(), Ingress(), IngressDeparser(),                   \
                      EgressParser(), Egress(), EgressDeparser()) pipe;                \
             Switch(pipe) main;
