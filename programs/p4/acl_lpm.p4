/* acl_lpm.p4: longest-prefix routes, a ternary ACL, and a per-port packet budget kept in
 * a register (the third and later packets from a port are dropped). Its tables are empty:
 * acl_lpm.stf fills them as a control plane would. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

const bit<32> BUDGET = 2;

struct metadata_t {
    bit<32> seen;
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
    Register<bit<32>, PortId_t>(512) per_port;
    /* The count before this packet; the cell stops at the budget. */
    RegisterAction<bit<32>, PortId_t, bit<32>>(per_port) take = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (value < BUDGET) {
                value = value + 1;
            }
        }
    };

    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    @drop_reason("no_route") action no_route() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("consumed") action deny() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("consumed") action over_budget() { ig_dprsr_md.drop_ctl = 1; }
    action count_packet() { meta.seen = take.execute(ig_intr_md.ingress_port); }

    table police { actions = { count_packet; } default_action = count_packet(); }
    table acl {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.udp.dst_port : ternary;
        }
        actions = { deny; NoAction; }
        default_action = NoAction();
        size = 1024;
    }
    table limit { actions = { over_budget; } default_action = over_budget(); }
    table routes {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { forward; no_route; }
        default_action = no_route();
        size = 2048;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            police.apply();
            acl.apply();
            if (meta.seen >= BUDGET) {
                limit.apply();
            } else {
                routes.apply();
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
