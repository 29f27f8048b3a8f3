#include <t2na.p4>
#include "../include/headers.p4"
#include "../include/no_egress.p4"
struct metadata_t { bit<16> s; }
parser IngressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() c1; Checksum() c2; Checksum() c3; Checksum() c4; Checksum() c5; Checksum() c6;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        c1.add(hdr.ethernet); c2.add(hdr.ethernet); c3.add(hdr.ethernet);
        c4.add(hdr.ethernet); c5.add(hdr.ethernet);
        c6.add(hdr.ethernet);
        meta.s = c6.get();
        transition accept;
    }
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
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
