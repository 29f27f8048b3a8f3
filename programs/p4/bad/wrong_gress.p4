#include "common.p4"
control Ingress(inout l3_headers_t hdr, inout metadata_t meta,
                in egress_intrinsic_metadata_t eg_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (eg_intr_md.deq_qdepth > 100) {
            hdr.ipv4.ecn = 3;
        }
    }
}
MAIN
