/* qinq_stack.p4: double-tagged (QinQ) frames in a header stack `vlan_h[2] vlan`, unrolled
 * into two headers `vlan_0` (the outer tag) and `vlan_1` (the inner) as bf-p4c unrolls
 * fixed indices; the pair of VLAN ids picks the port, and the inner tag's priority is set
 * to 5 on the way (docs/p4.md, Header stacks). */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct qinq_headers_t {
    ethernet_h ethernet;
    vlan_h[2] vlan;
    ipv4_h ipv4;
}

struct metadata_t {
    bit<8> unused;
}

parser IngressParser(packet_in pkt, out qinq_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x8100: parse_outer;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_outer {
        pkt.extract(hdr.vlan[0]);
        transition select(hdr.vlan[0].ether_type) {
            0x8100: parse_inner;
            default: accept;
        }
    }
    state parse_inner {
        pkt.extract(hdr.vlan[1]);
        transition select(hdr.vlan[1].ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ingress(inout qinq_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.vlan[1].pcp = 5;
    }
    @drop_reason("no_route") action no_route() { ig_dprsr_md.drop_ctl = 1; }

    table vlan_pair {
        key = {
            hdr.vlan[0].vid : exact;
            hdr.vlan[1].vid : exact;
        }
        actions = { forward; no_route; }
        default_action = no_route();
        size = 4096;
    }

    apply {
        if (hdr.vlan[1].isValid()) {
            vlan_pair.apply();
        } else {
            no_route();
        }
    }
}

control IngressDeparser(packet_out pkt, inout qinq_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
