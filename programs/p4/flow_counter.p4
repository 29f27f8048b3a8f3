/* flow_counter.p4: count packets per flow (a CRC32 of the 5-tuple indexes a register
 * array) and send heavy flows to a slower queue. The P4 version of
 * programs/flow_counter.json. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    bit<16> flow_idx;
    bit<32> flow_count;
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
    Hash<bit<16>>(HashAlgorithm_t.CRC32) flow_hash;
    Register<bit<32>, bit<16>>(65536) flow_packets;
    RegisterAction<bit<32>, bit<16>, bit<32>>(flow_packets) count_packet = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action compute_flow_index() {
        meta.flow_idx = flow_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                       hdr.ipv4.protocol, hdr.udp.src_port,
                                       hdr.udp.dst_port});
    }
    action count() { meta.flow_count = count_packet.execute(meta.flow_idx); }
    action to_slow_queue() { ig_tm_md.qid = 1; }

    table flow_index { actions = { compute_flow_index; } default_action = compute_flow_index(); }
    table flow_count { actions = { count; } default_action = count(); }
    table heavy_flow { actions = { to_slow_queue; } default_action = to_slow_queue(); }

    apply {
        if (hdr.ipv4.isValid()) {
            flow_index.apply();
            flow_count.apply();
            if (meta.flow_count > 1000) {
                heavy_flow.apply();
            }
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
