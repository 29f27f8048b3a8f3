/* tna_reflect.p4: a TNA (Tofino1 architecture) program on the Tofino2 model, where the
 * construct is the same: send every IPv4 packet back out of the port it came in on, to
 * the sender's MAC address (a 48-bit move), and write TTL ++ protocol into the UDP source port
 * (a concatenation: two moves into the halves of the field). */
#include <tna.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

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
    action reflect() {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
    }
    action stamp() { hdr.udp.src_port = hdr.ipv4.ttl ++ hdr.ipv4.protocol; }

    table back { actions = { reflect; } default_action = reflect(); }
    table mark { actions = { stamp; } default_action = stamp(); }

    apply {
        if (hdr.ipv4.isValid()) {
            back.apply();
            if (hdr.udp.isValid()) {
                mark.apply();
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
