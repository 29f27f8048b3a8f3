/* value_set_tags.p4: a parser value set. Which ether types carry a 4-byte tag (802.1Q's
 * 0x8100, 802.1ad's 0x88a8, a site's own) is the control plane's choice: the ingress
 * parser's `tag_types` reserves 4 parser TCAM rows that it fills (STF's `value_set_add`).
 * A tagged packet goes out of the port its VLAN id names, any other by its IPv4 address
 * (docs/p4.md, value_set). */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct headers_t {
    ethernet_h ethernet;
    vlan_h vlan;
    ipv4_h ipv4;
    udp_h udp;
}

struct metadata_t {
    bit<8> unused;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    value_set<bit<16>>(4) tag_types;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            tag_types: parse_tag;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp { pkt.extract(hdr.udp); transition accept; }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    @drop_reason("no_route") action no_route() { ig_dprsr_md.drop_ctl = 1; }

    table vlan_port {
        key = { hdr.vlan.vid : exact; }
        actions = { forward; no_route; }
        default_action = no_route();
        size = 64;
        const entries = {
            100 : forward(24);
        }
    }

    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; no_route; }
        default_action = no_route();
        size = 1024;
        const entries = {
            0x0a000001 : forward(16);
        }
    }

    apply {
        if (hdr.vlan.isValid()) {
            vlan_port.apply();
        } else {
            ipv4_host.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
