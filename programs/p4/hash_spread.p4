/* hash_spread.p4: spread flows over four ports by a CRC16 of their addresses (the low two
 * bits of the hash pick the port through an exact table the control plane fills), and
 * count packets per hash bucket in a register. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    bit<16> h;
    bit<32> seen;
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

control Ingress(inout l3_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<16>>(HashAlgorithm_t.CRC16) addr_hash;
    Register<bit<32>, bit<16>>(65536) buckets;
    RegisterAction<bit<32>, bit<16>, bit<32>>(buckets) bump = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action hash_addresses() {
        meta.h = addr_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
    }
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        meta.seen = bump.execute(meta.h);
    }
    @drop_reason("no_route") action drop() { ig_dprsr_md.drop_ctl = 1; }

    table spread {
        key = { meta.h[1:0] : exact @name("bucket"); }
        actions = { forward; drop; }
        default_action = drop();
        size = 4;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            hash_addresses();
            spread.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
