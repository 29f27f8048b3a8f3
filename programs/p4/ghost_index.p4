/* ghost_index.p4: the ghost thread keeps every queue's depth of every pipe in one register,
 * at index pipe_id << 11 | qid, and the ingress reads the depth of the queue a packet is
 * headed for at port << 4 | queue, the same cell (a Tofino2 port is pipe << 7 | local
 * port, 16 queues each), as PABO's switch does. The Ghost control has no metadata struct,
 * so it computes its index in two variables of its own, which become PHV metadata fields
 * (`p4.Ghost.pipe_base`, `p4.Ghost.index`); shifting and OR-ing take two tables (one action
 * is one VLIW instruction), and so do the ingress's, so both reach the register in stage 2. */
#include <t2na.p4>
#include "include/headers.p4"
#include "include/no_egress.p4"

struct metadata_t {
    bit<13> queue_base;
    bit<13> queue_index;
    bit<32> depth;
}

/* Cells per queue, by pipe and queue id (4 pipes x 2048). */
Register<bit<32>, bit<13>>(8192) queue_depth;

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
    RegisterAction<bit<32>, bit<13>, bit<32>>(queue_depth) read_depth = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    action forward(PortId_t port, QueueId_t qid) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = qid;
    }
    action base() { meta.queue_base = (bit<13>) ig_tm_md.ucast_egress_port << 4; }
    action add_queue() { meta.queue_index = meta.queue_base | (bit<13>) ig_tm_md.qid; }
    action read() { meta.depth = read_depth.execute(meta.queue_index); }
    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; }
        size = 4096;
    }
    table queue_base { actions = { base; } default_action = base(); }
    table queue_index { actions = { add_queue; } default_action = add_queue(); }
    table occupancy { actions = { read; } default_action = read(); }
    apply {
        ipv4_host.apply();
        queue_base.apply();
        queue_index.apply();
        occupancy.apply();
    }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ghost(in ghost_intrinsic_metadata_t gh) {
    bit<13> pipe_base;
    bit<13> index;
    RegisterAction<bit<32>, bit<13>, bit<32>>(queue_depth) write_depth = {
        void apply(inout bit<32> value) { value = (bit<32>) gh.qlength; }
    };
    action shift_pipe() { pipe_base = (bit<13>) gh.pipe_id << 11; }
    action add_qid() { index = pipe_base | (bit<13>) gh.qid; }
    action record() { write_depth.execute(index); }
    apply {
        shift_pipe();
        add_qid();
        record();
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser(), Ghost()) pipe;
Switch(pipe) main;
