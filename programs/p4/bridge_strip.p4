/* bridge_strip.p4: two parser and deparser idioms of Tofino programs. The ingress parser
 * skips a 4-byte vendor shim (ether type 0x88b5, `advance(32)`), which the deparser then
 * leaves out of the packet; and ingress bridges a header to egress: the control makes
 * `bridge` valid, the ingress deparser emits it in front of the packet, the egress parser
 * (a graph of its own) extracts it first, and the egress deparser drops it by not emitting
 * it. Egress writes the bridged ingress port into the IPv4 identification field.
 * bridge_strip.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"

header bridge_h {
    bit<16> in_port;
}

struct headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
    ipv4_h ip;
}

struct ig_metadata_t {}
struct eg_metadata_t {}

parser IngressParser(packet_in pkt, out headers_t hdr, out ig_metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: skip_shim;
            0x0800: parse_ip;
            default: accept;
        }
    }
    state skip_shim {
        pkt.advance(32);
        transition parse_ip;
    }
    state parse_ip { pkt.extract(hdr.ip); transition accept; }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action bridge_port() {
        hdr.bridge.setValid();
        hdr.bridge.in_port = (bit<16>)ig_intr_md.ingress_port;
        hdr.ethernet.ether_type = 0x0800;
        ig_tm_md.ucast_egress_port = 24;
    }
    table forward {
        actions = { bridge_port; }
        default_action = bridge_port();
    }
    apply {
        if (hdr.ip.isValid()) {
            forward.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out eg_metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ip;
            default: accept;
        }
    }
    state parse_ip { pkt.extract(hdr.ip); transition accept; }
}

control Egress(inout headers_t hdr, inout eg_metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action stamp() { hdr.ip.identification = hdr.bridge.in_port; }
    table stamp_port {
        actions = { stamp; }
        default_action = stamp();
    }
    apply { stamp_port.apply(); }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ip);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
