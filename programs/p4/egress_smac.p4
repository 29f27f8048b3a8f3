/* egress_smac.p4: an egress parser of its own, shallower than the ingress one, as routers
 * write it: ingress parses Ethernet and IPv4 to route on the destination address; egress
 * parses Ethernet alone and writes the source MAC of the port the packet leaves by, unless
 * the route sends the packet past the egress pipeline (`bypass_egress`). The
 * model runs each gress's graph (the egress one parses the packet the ingress deparser
 * emitted). egress_smac.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"

struct ig_headers_t {
    ethernet_h ethernet;
    ipv4_h ip;
}

struct eg_headers_t {
    ethernet_h ethernet;
}

struct ig_metadata_t {}
struct eg_metadata_t {}

parser IngressParser(packet_in pkt, out ig_headers_t hdr, out ig_metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ip;
            default: accept;
        }
    }
    state parse_ip { pkt.extract(hdr.ip); transition accept; }
}

control Ingress(inout ig_headers_t hdr, inout ig_metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action route(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    /* Past the egress pipeline: the source MAC stays as it came. */
    action route_direct(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.bypass_egress = 1;
    }
    table routes {
        key = { hdr.ip.dst_addr : lpm; }
        actions = { route; route_direct; }
        size = 256;
    }
    apply {
        if (hdr.ip.isValid()) {
            routes.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout ig_headers_t hdr, in ig_metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out eg_headers_t hdr, out eg_metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout eg_headers_t hdr, inout eg_metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action source(bit<48> smac) { hdr.ethernet.src_addr = smac; }
    table port_mac {
        key = { eg_intr_md.egress_port : exact; }
        actions = { source; }
        size = 64;
    }
    apply { port_mac.apply(); }
}

control EgressDeparser(packet_out pkt, inout eg_headers_t hdr, in eg_metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
