/* An egress that parses nothing, runs no tables and emits nothing (the packet passes
 * through unchanged): EgressParser, Egress and EgressDeparser for programs that work in
 * ingress only. */
#ifndef _CORPUS_NO_EGRESS_P4_
#define _CORPUS_NO_EGRESS_P4_

struct no_headers_t {}
struct no_metadata_t {}

parser EgressParser(packet_in pkt, out no_headers_t hdr, out no_metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Egress(inout no_headers_t hdr, inout no_metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control EgressDeparser(packet_out pkt, inout no_headers_t hdr, in no_metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

#endif
