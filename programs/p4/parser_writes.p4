/* parser_writes.p4: a parser that writes metadata as well as extracting headers.
 *  - a constant: `meta.parsed = 1;`
 *  - a field just extracted: `meta.kind = hdr.tag.kind;`, and into a header that lives in
 *    the metadata struct (`meta.origin.hint = hdr.tag.len;`);
 *  - bytes not yet extracted: `meta.peek = pkt.lookahead<bit<16>>();`;
 *  - a 48-bit field into 48-bit metadata, over containers cut otherwise
 *    (`meta.src_copy = hdr.ethernet.src_addr;`).
 * The ingress then switches on what the parser wrote. parser_writes.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

/* A shim after Ethernet under the IEEE local experimental ether type 0x88b5. */
header tag_h {
    bit<8> kind;
    bit<8> len;
}

header origin_h {
    bit<8> hint;
    bit<8> spare;
}

struct headers_t {
    ethernet_h ethernet;
    tag_h tag;
}

struct metadata_t {
    bit<1> parsed;
    bit<8> kind;
    bit<16> peek;
    bit<48> src_copy;
    origin_h origin;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        meta.parsed = 1;
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        meta.peek = pkt.lookahead<bit<16>>();
        meta.src_copy = hdr.ethernet.src_addr;
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        meta.kind = hdr.tag.kind;
        meta.origin.hint = hdr.tag.len;
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action send(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table by_kind {
        key = {
            meta.kind : exact;
            meta.parsed : exact;
        }
        actions = { send; }
        default_action = send(16);
        size = 64;
    }
    apply {
        by_kind.apply();
        if (hdr.tag.isValid()) {
            hdr.tag.kind = meta.origin.hint;
        }
        if (meta.peek == 0x0705) {
            hdr.ethernet.dst_addr[7:0] = 0xee;
        }
        if (meta.kind == 9) {
            hdr.ethernet.dst_addr = meta.src_copy;
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
