/* nat_checksums.p4: destination NAT with the Checksum extern as Tofino programs use it. The
 * parser's engines verify the IPv4 header (`verify()` reads true when the checksum is wrong)
 * and take the UDP checksum's residual: the old checksum, the pseudo-header fields that NAT
 * changes and the UDP header are subtracted, leaving the payload's sum, which the parser
 * never reads. The deparser's units write both checksums anew, the UDP one only when the
 * header is valid and never as zero (`zeros_as_ones`). The header instance is `ip`, not
 * `ipv4`, so the model's built-in IPv4 checksum stays out of it. nat_checksums.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ip;
    udp_h udp;
}

struct metadata_t {
    bool ip_bad;
    bit<16> payload_sum;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ip_check;
    Checksum() udp_rest;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ip;
            default: accept;
        }
    }
    state parse_ip {
        pkt.extract(hdr.ip);
        ip_check.add(hdr.ip);
        meta.ip_bad = ip_check.verify();
        transition select(hdr.ip.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        udp_rest.subtract({hdr.udp.checksum});
        udp_rest.subtract({hdr.ip.src_addr, hdr.ip.dst_addr, 8w0 ++ hdr.ip.protocol});
        udp_rest.subtract({hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length});
        /* The pseudo header's length is the UDP length again. */
        udp_rest.subtract({hdr.udp.length});
        udp_rest.subtract_all_and_deposit(meta.payload_sum);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action refuse() { ig_dprsr_md.drop_ctl = 1; }
    action translate(bit<32> inside, PortId_t port) {
        hdr.ip.dst_addr = inside;
        hdr.ip.ttl = hdr.ip.ttl - 1;
        ig_tm_md.ucast_egress_port = port;
    }
    table nat {
        key = { hdr.ip.dst_addr : exact; }
        actions = { translate; }
        size = 64;
    }
    apply {
        if (meta.ip_bad) {
            refuse();
        } else if (hdr.ip.isValid()) {
            nat.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ip_sum;
    Checksum() udp_sum;
    apply {
        hdr.ip.hdr_checksum = ip_sum.update({
            hdr.ip.version, hdr.ip.ihl, hdr.ip.diffserv, hdr.ip.ecn, hdr.ip.total_len,
            hdr.ip.identification, hdr.ip.flags, hdr.ip.frag_offset, hdr.ip.ttl,
            hdr.ip.protocol, hdr.ip.src_addr, hdr.ip.dst_addr});
        if (hdr.udp.isValid()) {
            hdr.udp.checksum = udp_sum.update({
                hdr.ip.src_addr, hdr.ip.dst_addr, (bit<16>)hdr.ip.protocol, hdr.udp.length,
                hdr.udp.src_port, hdr.udp.dst_port, hdr.udp.length, meta.payload_sum}, true);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
