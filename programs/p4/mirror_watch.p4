/* mirror_watch.p4: host routes, and a watch list (ternary on UDP port) whose hits send a
 * copy of the packet to a mirror session the control plane points at a monitor port:
 * TNA's idiom, mirror_type set in an action and `mirror.emit(session)` in the deparser. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    MirrorId_t session;
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

control Ingress(inout l3_headers_t hdr, inout metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    @drop_reason("no_route") action drop() { ig_dprsr_md.drop_ctl = 1; }
    action copy_to(MirrorId_t session) {
        ig_dprsr_md.mirror_type = 1;
        ig_md.session = session;
    }

    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 1024;
    }
    table watch {
        key = { hdr.udp.dst_port : ternary; }
        actions = { copy_to; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            ipv4_host.apply();
            watch.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit(meta.session);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
