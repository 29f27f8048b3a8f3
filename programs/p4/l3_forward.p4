/* l3_forward.p4: IPv4 host routes with TTL and a traffic class, the P4 version of
 * programs/l3_forward.json (the same placement report; tests/p4_programs.rs). */
#include <t2na.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header tcp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4> data_offset;
    bit<3> res;
    bit<9> flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

struct metadata_t {}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            6: parse_tcp;
            default: accept;
        }
    }
    state parse_udp { pkt.extract(hdr.udp); transition accept; }
    state parse_tcp { pkt.extract(hdr.tcp); transition accept; }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
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
    action set_queue(QueueId_t qid) { ig_tm_md.qid = qid; }

    table not_ipv4 {
        actions = { drop_not_ipv4; }
        default_action = drop_not_ipv4();
    }
    table ttl_expired {
        actions = { drop_ttl_expired; }
        default_action = drop_ttl_expired();
    }
    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
        const entries = {
            0x0a000001 : forward(8);
            0x0a000002 : forward(16);
            0x0a000003 : forward(24);
        }
    }
    table classify {
        key = {
            hdr.ipv4.diffserv : ternary;
            hdr.tcp.dst_port : ternary;
        }
        actions = { set_queue; }
        default_action = set_queue(0);
        size = 256;
        const entries = {
            (0xb8 &&& 0xfc, _) : set_queue(1);
            (_, 443) : set_queue(2);
        }
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            classify.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

struct egress_headers_t {}

parser EgressParser(packet_in pkt, out egress_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Egress(inout egress_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control EgressDeparser(packet_out pkt, inout egress_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
