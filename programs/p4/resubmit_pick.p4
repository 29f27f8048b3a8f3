/* resubmit_pick.p4: the first ingress pass picks the egress port by destination and
 * resubmits the packet with that port in a resubmit header (and sets the TTL to 1, which
 * the resubmit discards: the second pass sees the packet as it came in); the second pass
 * (`resubmit_flag` 1) sends it to that port and drops the header. TNA's idiom: the action
 * sets `resubmit_type`, the deparser's `if` on it emits the Resubmit (docs/p4.md). */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

header resub_h {
    bit<7> pad;
    PortId_t port;
}

struct headers_t {
    resub_h resub;
    ethernet_h ethernet;
    ipv4_h ipv4;
}

struct metadata_t {
    bit<8> unused;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }
    state parse_resubmit {
        pkt.extract(hdr.resub);
        transition parse_ethernet;
    }
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action pick_port(PortId_t port) {
        hdr.resub.port = port;
        ig_dprsr_md.resubmit_type = 1;
        hdr.ipv4.ttl = 1;
    }
    @drop_reason("no_route") action no_route() { ig_dprsr_md.drop_ctl = 1; }
    action send() {
        ig_tm_md.ucast_egress_port = hdr.resub.port;
        hdr.resub.setInvalid();
    }

    table pick {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { pick_port; no_route; }
        default_action = no_route();
        size = 1024;
        const entries = {
            0x0a000001 : pick_port(16);
            0x0a000002 : pick_port(24);
        }
    }

    apply {
        if (ig_intr_md.resubmit_flag == 0) {
            pick.apply();
        } else {
            send();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;
    apply {
        if (ig_dprsr_md.resubmit_type == 1) {
            resubmit.emit(hdr.resub);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
