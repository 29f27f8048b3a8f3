/* digest_learn.p4: source learning through digests. Table `sources` knows the port each
 * IPv4 source was last seen on; a source it does not know sends digest `learn` (type 1:
 * the address and the port it came in on), a known source seen on another port sends
 * `moved` (type 2: the address, the port it was known on and the new one). Packets are
 * forwarded by destination either way (`ipv4_host`'s entries come from the control plane:
 * the STF test's, or `t2sim run`'s host routes). The control plane reads the digests from the chip
 * (docs/p4.md, Digests). */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    PortId_t port;
    PortId_t known_port;
}

struct learn_t {
    bit<32> src_addr;
    PortId_t port;
}

struct moved_t {
    bit<32> src_addr;
    PortId_t from_port;
    PortId_t to_port;
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
    action unknown_source() {
        ig_dprsr_md.digest_type = 1;
        meta.port = ig_intr_md.ingress_port;
    }
    action known(PortId_t port) {
        meta.known_port = port;
        meta.port = ig_intr_md.ingress_port;
    }
    action source_moved() { ig_dprsr_md.digest_type = 2; }
    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    @drop_reason("no_route") action no_route() { ig_dprsr_md.drop_ctl = 1; }

    table sources {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { known; unknown_source; }
        default_action = unknown_source();
        size = 1024;
    }

    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; no_route; }
        default_action = no_route();
        size = 1024;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            switch (sources.apply().action_run) {
                known: {
                    if (meta.known_port != meta.port) {
                        source_moved();
                    }
                }
            }
            ipv4_host.apply();
        }
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Digest<learn_t>() learn;
    Digest<moved_t>() moved;
    apply {
        if (ig_dprsr_md.digest_type == 1) {
            learn.pack({hdr.ipv4.src_addr, meta.port});
        }
        if (ig_dprsr_md.digest_type == 2) {
            moved.pack({hdr.ipv4.src_addr, meta.known_port, meta.port});
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
