/* parser_local.p4: a parser's own variable and a select on a slice. The parser keeps the
 * tag's class in a variable (a metadata field of its own, `p4.IngressParser.class`), copies
 * it into the user metadata, and branches on the low 4 bits of the tag's kind. The ingress
 * sends class 1 to port 24 and the rest to port 16; a tag whose kind ends in 0xf carries a
 * second tag, whose kind becomes the first's; ether type 0x88b6 gets a tag the parser
 * makes. parser_local.stf runs it. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

/* A tag under the IEEE local experimental ether type 0x88b5. */
header tag_h {
    bit<8> kind;
    bit<8> class;
}

struct headers_t {
    ethernet_h ethernet;
    tag_h tag;
    tag_h inner;
}

struct metadata_t {
    bit<8> class;
}

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    bit<8> class;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_tag;
            0x88b6: stamp;
            default: accept;
        }
    }
    /* A tag the parser makes (kind ee, class 1) without reading one: the deparser inserts
     * it after Ethernet, once (the egress, which parses nothing, does not make it again). */
    state stamp {
        hdr.inner.setValid();
        hdr.inner.kind = 0xee;
        hdr.inner.class = 1;
        meta.class = 1;
        transition accept;
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        class = hdr.tag.class;
        meta.class = class;
        transition select(hdr.tag.kind[3:0]) {
            0xf: parse_inner;
            default: accept;
        }
    }
    state parse_inner { pkt.extract(hdr.inner); transition accept; }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action to(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action lift() { hdr.tag.kind = hdr.inner.kind; }
    table by_class {
        key = { meta.class : exact; }
        actions = { to; }
        const entries = { 1 : to(24); }
        default_action = to(16);
    }
    table inner_kind {
        actions = { lift; }
        default_action = lift();
    }
    apply {
        by_class.apply();
        if (hdr.inner.isValid()) {
            inner_kind.apply();
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
