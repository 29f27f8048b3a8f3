/* ghost_depth.p4: Tofino2's ghost thread writes each queue's depth, as the traffic manager
 * reports it, into a register the ingress shares (declared at the top level); the ingress
 * routes by host routes, reads the depth of the queue a packet is headed for, and marks
 * ECN-capable packets when it holds 100 cells or more. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    bit<11> queue;
    bit<32> depth;
}

/* Cells per queue, by the ghost thread's queue id. */
Register<bit<32>, bit<11>>(2048) queue_depth;

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
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_depth) read_depth = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };

    action forward(PortId_t port, bit<11> queue) {
        ig_tm_md.ucast_egress_port = port;
        meta.queue = queue;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    @drop_reason("no_route") action drop_no_route() { ig_dprsr_md.drop_ctl = 1; }
    action read() { meta.depth = read_depth.execute(meta.queue); }
    action mark() {
        if (hdr.ipv4.ecn != 0) {
            hdr.ipv4.ecn = 3;
        }
    }

    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
    }
    table occupancy { actions = { read; } default_action = read(); }
    table congested { actions = { mark; } default_action = mark(); }

    apply {
        if (hdr.ipv4.isValid()) {
            ipv4_host.apply();
            occupancy.apply();
            if (meta.depth >= 100) {
                congested.apply();
            }
        }
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ghost(in ghost_intrinsic_metadata_t gh) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_depth) write_depth = {
        void apply(inout bit<32> value) { value = (bit<32>) gh.qlength; }
    };
    action record() { write_depth.execute(gh.qid); }
    apply { record(); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser(), Ghost()) pipe;
Switch(pipe) main;
