/* qinq_loop.p4: qinq_stack.p4's program with the parser written as a loop over the
 * header stack: `parse_vlan` extracts `hdr.vlan.next` and selects on `hdr.vlan.last`, and
 * goes back to itself on another 802.1Q tag. The front end unrolls the loop into one state
 * per element (`parse_vlan` extracting `vlan_0`, `parse_vlan_1` extracting `vlan_1`); a
 * third tag overruns the stack, P4's parser error, so the packet is dropped (docs/p4.md,
 * Header stacks). */
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
            0x8100: parse_vlan;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.ether_type) {
            0x8100: parse_vlan;
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
