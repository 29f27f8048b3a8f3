/* ecmp_switch.p4: dctcp_switch.p4 with equal-cost multipath: the host-route table is an
 * ActionSelector over the 5-tuple. The P4 version of programs/ecmp_switch.json. */
#include <t2na.p4>
#include "include/headers.p4"

#ifndef K_CELLS
#define K_CELLS 400
#endif

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
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    @drop_reason("no_route") action drop_no_route() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("not_ipv4") action drop_not_ipv4() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("ttl_expired") action drop_ttl_expired() { ig_dprsr_md.drop_ctl = 1; }

    table not_ipv4 { actions = { drop_not_ipv4; } default_action = drop_not_ipv4(); }
    table ttl_expired { actions = { drop_ttl_expired; } default_action = drop_ttl_expired(); }
    /* Equal-cost routes: a route is a group of up to 16 forward(port) members, and a hash
     * of the 5-tuple picks one per flow. */
    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;
    ActionProfile(4096) ecmp_members;
    ActionSelector(ecmp_members, ecmp_hash, SelectorMode_t.FAIR, 16, 1024) ecmp;

    table ipv4_host {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.ipv4.src_addr : selector;
            hdr.ipv4.dst_addr : selector;
            hdr.ipv4.protocol : selector;
            hdr.tcp.src_port : selector;
            hdr.tcp.dst_port : selector;
        }
        actions = { forward; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
        implementation = ecmp;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}


parser EgressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control Egress(inout l3_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action mark() {
        if (hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
        }
    }
    table ecn_mark { actions = { mark; } default_action = mark(); }

    apply {
        if (hdr.ipv4.isValid()) {
            if (eg_intr_md.enq_qdepth >= K_CELLS) {
                ecn_mark.apply();
            }
        }
    }
}

control EgressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
