/* vlan_tagging.p4: bridge tagged frames by VLAN id, route untagged IPv4 by host routes,
 * and in egress pop the tag of tagged frames and push tag 100 onto untagged ones. The P4
 * version of programs/vlan_tagging.json. */
#include <t2na.p4>
#include "include/headers.p4"

struct headers_t {
    ethernet_h ethernet;
    vlan_h vlan;
    ipv4_h ipv4;
    udp_h udp;
}

struct metadata_t {}

#define VLAN_STATES                                                         \
    state parse_ethernet {                                                  \
        pkt.extract(hdr.ethernet);                                          \
        transition select(hdr.ethernet.ether_type) {                        \
            0x8100: parse_vlan;                                             \
            0x0800: parse_ipv4;                                             \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_vlan {                                                      \
        pkt.extract(hdr.vlan);                                              \
        transition select(hdr.vlan.ether_type) {                            \
            0x0800: parse_ipv4;                                             \
            0x8100: reject; /* no double tags */                            \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_ipv4 {                                                      \
        pkt.extract(hdr.ipv4);                                              \
        transition select(hdr.ipv4.protocol) {                              \
            17: parse_udp;                                                  \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_udp { pkt.extract(hdr.udp); transition accept; }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    VLAN_STATES
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    @drop_reason("no_route") action drop_no_route() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("not_ipv4") action drop_not_ipv4() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("ttl_expired") action drop_ttl_expired() { ig_dprsr_md.drop_ctl = 1; }
    action bridge(PortId_t port, bit<12> vid, bit<3> pcp) {
        ig_tm_md.ucast_egress_port = port;
        hdr.vlan.vid = vid;
        hdr.vlan.pcp = pcp;
    }

    table not_ipv4 { actions = { drop_not_ipv4; } default_action = drop_not_ipv4(); }
    table ttl_expired { actions = { drop_ttl_expired; } default_action = drop_ttl_expired(); }
    table vlan_forward {
        key = { hdr.vlan.vid : exact; }
        actions = { bridge; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
        const entries = {
            10 : bridge(16, 20, 5);
            30 : bridge(24, 30, 0);
        }
    }
    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
    }

    apply {
        if (hdr.vlan.isValid()) {
            vlan_forward.apply();
        } else if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    VLAN_STATES
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action push_vlan() {
        hdr.vlan.setValid();
        hdr.vlan.vid = 100;
        hdr.vlan.pcp = 3;
        hdr.vlan.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = 0x8100;
    }
    action pop_vlan() {
        hdr.vlan.setInvalid();
        hdr.ethernet.ether_type = hdr.vlan.ether_type;
    }
    table push_tag { actions = { push_vlan; } default_action = push_vlan(); }
    table pop_tag { actions = { pop_vlan; } default_action = pop_vlan(); }

    apply {
        if (hdr.vlan.isValid()) {
            pop_tag.apply();
        } else {
            push_tag.apply();
        }
    }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
