/* The ingress of the switch programs: IPv4 host routes (the chip's control plane fills
 * `ipv4_host` with `forward(port)` entries), dropping non-IPv4 and expired TTLs. */
#ifndef _CORPUS_HOST_ROUTES_P4_
#define _CORPUS_HOST_ROUTES_P4_

/* The headers struct (define HOST_HEADERS before including to use another) and extra
 * ingress tables: HOST_ROUTES_EXTRA declares them, HOST_ROUTES_AFTER applies them after
 * ipv4_host. */
#ifndef HOST_HEADERS
#define HOST_HEADERS l3_headers_t
#endif
#ifndef HOST_ROUTES_EXTRA
#define HOST_ROUTES_EXTRA
#define HOST_ROUTES_AFTER
#endif

parser IngressParser(packet_in pkt, out HOST_HEADERS hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_ETH_IPV4_L4(hdr)
}

control Ingress(inout HOST_HEADERS hdr, inout metadata_t meta,
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
    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
    }
    HOST_ROUTES_EXTRA

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            HOST_ROUTES_AFTER
        }
    }
}

control IngressDeparser(packet_out pkt, inout HOST_HEADERS hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

#endif
