#include <t2na.p4>
#include "../include/headers.p4"
#include "../include/no_egress.p4"
struct metadata_t { bit<16> idx; }
struct learn_t { bit<32> src_addr; bit<8> idx; }
parser IngressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); transition parse_ethernet; }
    PARSE_ETH_IPV4_L4(hdr)
}
control Ingress(inout l3_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { }
}
control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Digest<learn_t>() learn;
    apply {
        if (ig_dprsr_md.digest_type == 1) { learn.pack({hdr.ipv4.src_addr, meta.idx}); }
        pkt.emit(hdr);
    }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
