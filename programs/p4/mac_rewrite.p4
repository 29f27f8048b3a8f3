/* mac_rewrite.p4: next-hop rewriting as routers write it, with 48-bit action data (both
 * MAC addresses), a drop that a later table takes back (`drop_ctl = 0`), signed arithmetic
 * on `int<8>` fields (min, max and an arithmetic right shift), and const entries beyond the
 * table's `size` (a size is a lower bound). mac_rewrite.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

/* A measurement shim under the IEEE local experimental ether type 0x88b6. */
header probe_h {
    int<8> a;
    int<8> b;
    int<8> low;
    int<8> high;
    int<8> half;
}

struct headers_t {
    ethernet_h ethernet;
    probe_h probe;
}

struct metadata_t {}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b6: parse_probe;
            default: accept;
        }
    }
    state parse_probe { pkt.extract(hdr.probe); transition accept; }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @drop_reason("no_route") action refuse() { ig_dprsr_md.drop_ctl = 1; }
    action next_hop(bit<48> smac, bit<48> dmac, PortId_t port) {
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }
    action measure() {
        hdr.probe.low = min(hdr.probe.a, hdr.probe.b);
        hdr.probe.high = max(hdr.probe.a, hdr.probe.b);
        hdr.probe.half = hdr.probe.a >> 1;
    }
    table guard {
        actions = { refuse; }
        default_action = refuse();
    }
    table hops {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { next_hop; NoAction; }
        default_action = NoAction();
        const entries = {
            0x020000000001 : next_hop(0x0a0000000001, 0x0b0000000001, 16);
            0x020000000002 : next_hop(0x0a0000000002, 0x0b0000000002, 24);
            0x020000000003 : next_hop(0x0a0000000003, 0x0b0000000003, 32);
        }
        size = 2;
    }
    table probes {
        actions = { measure; }
        default_action = measure();
    }
    apply {
        guard.apply();
        hops.apply();
        if (hdr.probe.isValid()) {
            probes.apply();
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
