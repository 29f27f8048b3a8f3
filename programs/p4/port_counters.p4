/* port_counters.p4: forward by destination address through an exact table whose entries
 * count what they forward (a DirectCounter of packets and bytes), and count packets per
 * ingress port (an indexed Counter). Both are stateful-ALU programs on register arrays
 * here (docs/p4.md, Counters). */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    bit<8> unused;
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
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS) port_packets;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) host_stats;

    action count_port() { port_packets.count(ig_intr_md.ingress_port); }
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        host_stats.count();
    }
    @drop_reason("no_route") action miss() {
        ig_dprsr_md.drop_ctl = 1;
        host_stats.count();
    }

    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; miss; }
        default_action = miss();
        counters = host_stats;
        size = 1024;
    }

    apply {
        count_port();
        if (hdr.ipv4.isValid()) {
            ipv4_host.apply();
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
