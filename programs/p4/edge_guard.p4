/* edge_guard.p4: the shapes of P4 that programs written elsewhere use, in one small router.
 *  - a sub-parser: PortPrelude reads the intrinsic metadata and skips the port metadata,
 *    applied from the main parser (the idiom of Intel's examples, in our own words);
 *  - a sub-control: TtlGuard, instantiated with a constructor argument (the highest TTL it
 *    drops) and applied with arguments, drops TTL 0 and 1;
 *  - an action calling an action (to_cpu calls to_port), and an action called in the
 *    apply block;
 *  - a local declared in the apply block with an initializer;
 *  - `||`, and `&&` with an `else`;
 *  - port 0 (Tofino2's PCIe CPU port) as the default route, and a packet from port 2 (a CPU
 *    Ethernet port).
 * edge_guard.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
}

struct metadata_t {}

parser PortPrelude(packet_in pkt, out ingress_intrinsic_metadata_t md) {
    state start {
        pkt.extract(md);
        transition select(md.resubmit_flag) {
            1: refuse;
            default: skip_port_metadata;
        }
    }
    state refuse { transition reject; }
    state skip_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition accept;
    }
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    PortPrelude() prelude;
    state start {
        prelude.apply(pkt, ig_intr_md);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control TtlGuard(inout ipv4_h ip, inout ingress_intrinsic_metadata_for_deparser_t dprsr)
                (bit<8> last_expired) {
    @drop_reason("ttl_expired") action expire() { dprsr.drop_ctl = 1; }
    table ttl_check {
        key = { ip.ttl : exact; }
        actions = { expire; NoAction; }
        const entries = { 0 : expire(); last_expired : expire(); }
        default_action = NoAction();
        size = 4;
    }
    apply { ttl_check.apply(); }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    TtlGuard(1) guard;

    action to_port(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    action to_cpu() { to_port(0); }
    action mark(bit<6> dscp) { hdr.ipv4.diffserv = dscp; }

    table route {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { to_port; to_cpu; }
        default_action = to_cpu();
        size = 16;
    }
    table transport {
        key = { hdr.ipv4.protocol : exact; }
        actions = { mark; NoAction; }
        default_action = NoAction();
        size = 4;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            to_cpu();
        } else {
            guard.apply(hdr.ipv4, ig_dprsr_md);
            route.apply();
            bit<8> budget = hdr.ipv4.ttl;
            if (hdr.ipv4.protocol == 17 || hdr.ipv4.protocol == 6) {
                transport.apply();
            }
            if (budget > 32 && hdr.ipv4.ecn != 0) {
                hdr.ipv4.ecn = 3;
            } else {
                hdr.ipv4.ecn = 0;
            }
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
