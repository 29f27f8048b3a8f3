/* exit_action.p4: `exit` inside actions. A quarantine ACL sends what it matches to a port
 * of its own and exits, so routing and the TTL decrement never see it; a host route to a
 * directly attached host delivers and exits (no TTL decrement); a missing route drops and
 * exits. Each table that can run an exiting action sets the control's exit flag, which
 * guards what follows it (docs/p4.md, `exit`). */
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
    @drop_reason("not_ipv4") action not_ipv4() { ig_dprsr_md.drop_ctl = 1; exit; }
    action quarantine(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = 3;
        exit;
    }
    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action deliver(PortId_t port) { ig_tm_md.ucast_egress_port = port; exit; }
    @drop_reason("no_route") action no_route() { ig_dprsr_md.drop_ctl = 1; exit; }
    action decrement_ttl() { hdr.ipv4.ttl = hdr.ipv4.ttl - 1; }

    table acl {
        key = { hdr.ipv4.src_addr : ternary; }
        actions = { quarantine; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; deliver; no_route; }
        default_action = no_route();
        size = 1024;
        const entries = {
            0x0a000001 : forward(16);
            0x0a000002 : deliver(24);
        }
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4();
        }
        acl.apply();
        ipv4_host.apply();
        decrement_ttl();
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
