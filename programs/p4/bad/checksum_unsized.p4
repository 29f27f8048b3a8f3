#include "common.p4"
control Ingress(INGRESS_PARAMS) { apply {} }
control IngressDeparserSum(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ck;
    apply {
        hdr.udp.checksum = ck.update({hdr.ipv4.src_addr, 0, hdr.udp.length});
        pkt.emit(hdr);
    }
}
Pipeline(IngressParser(), Ingress(), IngressDeparserSum(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
