/* hit_switch.p4: control flow on table results. A host route that hits forwards; a miss
 * falls back to a prefix table; and `switch (classify.apply().action_run)` picks the queue
 * per traffic class. The IR's gateways test fields, so each tested table's actions run
 * copies that record the result in a hidden metadata field (docs/p4.md). */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

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
    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    @drop_reason("no_route") action drop() { ig_dprsr_md.drop_ctl = 1; }
    action bulk() {}
    action interactive() {}
    action to_queue(QueueId_t q) { ig_tm_md.qid = q; }

    table host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; NoAction; }
        default_action = NoAction();
        size = 1024;
    }
    table prefix {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 1024;
    }
    table classify {
        key = { hdr.udp.dst_port : exact; }
        actions = { bulk; interactive; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    table bulk_queue { actions = { to_queue; } default_action = to_queue(1); }
    table interactive_queue { actions = { to_queue; } default_action = to_queue(2); }

    apply {
        if (hdr.ipv4.isValid()) {
            if (!host.apply().hit) {
                prefix.apply();
            }
            switch (classify.apply().action_run) {
                bulk: { bulk_queue.apply(); }
                interactive: { interactive_queue.apply(); }
            }
        }
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
