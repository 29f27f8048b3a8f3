/* pabo.p4: PABO's switch (Shi, Wang, Zhang, Zheng, Muehlhaeuser, Liu, "PABO: Mitigating
 * Congestion via Packet Bounce in Data Center Networks", ICC 2017 / Computer Communications
 * 2019). A switch whose egress queue toward a packet's destination is filling bounces the
 * packet back toward its source with a probability P(u_q, n_p) that grows with the queue's
 * utilisation u_q and falls with the times n_p it was bounced before (§3, the bounce
 * decision; the exact function is the authors' code, `Xiang-Shi/inet` 5e46fc6); bounced
 * packets ride a strict-priority bounce queue above the data queue at every later hop
 * (§3, "bounce queue"); hosts resend packets that come back to them. docs/schemes/pabo.md
 * has the mapping onto Tofino2, what differs from the paper and the measurements.
 *
 * From the control plane (the scheme's Rust code, src/schemes/pabo/mod.rs): the entries of
 * `u_level` (queue depth -> utilisation level) and `bounce_p` ((level, n_p) -> 16-bit
 * threshold), computed from theta and lambda, and the host routes of `ipv4_host` and
 * `ipv4_source`. Compile-time constants, passed as -D by the scheme: */
#include <t2na.p4>

#ifndef CAPACITY_CELLS
#define CAPACITY_CELLS 900      // C_q, the queue limit in cells (the depth is clamped to it)
#endif
#ifndef NP_CAP
#define NP_CAP 7                // n_p above this reads as this in `bounce_p`
#endif
#ifndef U_LEVEL_SIZE
#define U_LEVEL_SIZE 180        // entries of `u_level` (depths above theta)
#endif
#ifndef BOUNCE_P_SIZE
#define BOUNCE_P_SIZE 520       // entries of `bounce_p`
#endif
#ifndef BOUNCE_QUEUE
#define BOUNCE_QUEUE 1          // the strict-priority queue bounced packets take
#endif
#ifndef PABO_ETHERTYPE
#define PABO_ETHERTYPE 0x88B6   // the shim header's EtherType (src/schemes/pabo/wire.rs)
#endif

/* The shim between Ethernet and IPv4, inserted at a packet's first bounce: n_p, the hops
 * it has gone back and the most it went back at once. */
header pabo_h {
    bit<8> n_p;
    bit<8> hop;
    bit<8> max_hop;
    bit<8> reserved;
    bit<16> ether_type;
}

struct metadata_t {
    PortId_t source_port;   // the port toward the packet's source
    bit<1> has_source;
    bit<1> queue;           // the queue it would join: 0 data, 1 bounce
    bit<13> queue_base;
    bit<13> queue_index;    // port << 4 | queue: the ghost thread's number of that queue
    bit<32> depth;          // L_q, cells
    bit<16> level;          // the utilisation's level
    bit<8> np;              // min(n_p, NP_CAP)
    bit<16> threshold;      // bounce iff random <= threshold
    bit<1> may_bounce;
    bit<16> random;
    bit<1> bounce;
}

#define OWN_PARSERS
#include "../common.p4"

struct pabo_headers_t {
    ethernet_h ethernet;
    pabo_h pabo;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

/* Every queue's depth in cells, by the ghost thread's queue number pipe:2 | qid:11. */
Register<bit<32>, bit<13>>(8192) queue_depth;

parser IngressParser(packet_in pkt, out pabo_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            PABO_ETHERTYPE: parse_pabo;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_pabo {
        pkt.extract(hdr.pabo);
        transition select(hdr.pabo.ether_type) {
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

control Ingress(inout pabo_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* Bounces, summed over the run (the results' `bounce_count`). */
    Register<bit<32>, bit<1>>(1) bounce_count;
    RegisterAction<bit<32>, bit<1>, bit<32>>(bounce_count) count_bounce = {
        void apply(inout bit<32> value) { value = value + 1; }
    };
    RegisterAction<bit<32>, bit<13>, bit<32>>(queue_depth) read_depth = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    Random<bit<16>>() rng;

    HOST_ROUTES

    // The way back: the chip installs a route per host keyed on the source address.
    action toward_source(PortId_t port) {
        meta.source_port = port;
        meta.has_source = 1;
    }
    action no_source() {}
    // A packet bounced before joins the bounce queue at every later hop (§3).
    action bounce_queue() {
        ig_tm_md.qid = BOUNCE_QUEUE;
        meta.queue = 1;
        meta.np = min(hdr.pabo.n_p, NP_CAP);
    }
    // L_q of the queue it would join, from the ghost thread's copy.
    action set_queue_base() { meta.queue_base = (bit<13>) ig_tm_md.ucast_egress_port << 4; }
    action set_queue_index() { meta.queue_index = meta.queue_base | (bit<13>) meta.queue; }
    action read_occupancy() { meta.depth = read_depth.execute(meta.queue_index); }
    action clamp_depth() { meta.depth = min(meta.depth, CAPACITY_CELLS); }
    // P(u, n_p) has no hardware exp: two tables of the control plane give a threshold.
    action set_level(bit<16> level) { meta.level = level; }
    action set_threshold(bit<16> threshold) {
        meta.threshold = threshold;
        meta.may_bounce = 1;
    }
    action no_bounce() {}
    action draw() { meta.random = rng.get(); }
    action decide() {
        meta.bounce = 1;
        count_bounce.execute(0);
    }
    // The bounce: back out of the port toward the source, in the bounce queue, n_p + 1.
    action bounce_first_time() {
        ig_tm_md.ucast_egress_port = meta.source_port;
        ig_tm_md.qid = BOUNCE_QUEUE;
        hdr.pabo.setValid();
        hdr.pabo.n_p = 1;
        hdr.pabo.hop = 1;
        hdr.pabo.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = PABO_ETHERTYPE;
    }
    action bounce_once_more() {
        ig_tm_md.ucast_egress_port = meta.source_port;
        ig_tm_md.qid = BOUNCE_QUEUE;
        hdr.pabo.n_p = hdr.pabo.n_p + 1;
        hdr.pabo.hop = hdr.pabo.hop + 1;
    }
    action record_hop() { hdr.pabo.max_hop = max(hdr.pabo.max_hop, hdr.pabo.hop); }
    action unwind_hop() { hdr.pabo.hop = hdr.pabo.hop - 1; }

    table ipv4_source {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { toward_source; no_source; }
        default_action = no_source();
        size = 4096;
    }
    table to_bounce_queue { actions = { bounce_queue; } default_action = bounce_queue(); }
    table queue_base { actions = { set_queue_base; } default_action = set_queue_base(); }
    table queue_index { actions = { set_queue_index; } default_action = set_queue_index(); }
    table occupancy { actions = { read_occupancy; } default_action = read_occupancy(); }
    table clamp { actions = { clamp_depth; } default_action = clamp_depth(); }
    table u_level {
        key = { meta.depth : exact; }
        actions = { set_level; }
        default_action = set_level(0);
        size = U_LEVEL_SIZE;
    }
    table bounce_p {
        key = { meta.level : exact; meta.np : exact; }
        actions = { set_threshold; no_bounce; }
        default_action = no_bounce();
        size = BOUNCE_P_SIZE;
    }
    table dice { actions = { draw; } default_action = draw(); }
    table bounce_decision { actions = { decide; } default_action = decide(); }
    table bounce_first { actions = { bounce_first_time; } default_action = bounce_first_time(); }
    table bounce_again { actions = { bounce_once_more; } default_action = bounce_once_more(); }
    table bounce_hops { actions = { record_hop; } default_action = record_hop(); }
    table forward_hops { actions = { unwind_hop; } default_action = unwind_hop(); }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            ipv4_source.apply();
            dice.apply();
            if (hdr.pabo.isValid()) {
                to_bounce_queue.apply();
            }
            queue_base.apply();
            queue_index.apply();
            occupancy.apply();
            clamp.apply();
            u_level.apply();
            bounce_p.apply();
            if (meta.may_bounce == 1) {
                if (meta.has_source == 1) {
                    if (meta.random <= meta.threshold) {
                        bounce_decision.apply();
                    }
                }
            }
            if (meta.bounce == 1) {
                if (hdr.pabo.isValid()) {
                    bounce_again.apply();
                } else {
                    bounce_first.apply();
                }
                bounce_hops.apply();
            } else if (hdr.pabo.hop > 0) {
                forward_hops.apply();
            }
        }
    }
}

control IngressDeparser(packet_out pkt, inout pabo_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

/* The egress does nothing: it parses nothing and passes the packet through. */
struct no_headers_t {}
struct no_metadata_t {}

parser EgressParser(packet_in pkt, out no_headers_t hdr, out no_metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control Egress(inout no_headers_t hdr, inout no_metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control EgressDeparser(packet_out pkt, inout no_headers_t hdr, in no_metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

/* The ghost thread (Tofino2): the TM's queue-depth feed into `queue_depth`, at
 * pipe_id << 11 | qid. Shifting and OR-ing take a table each (one action is one VLIW
 * instruction), in variables of the control's own (it has no metadata struct). */
control Ghost(in ghost_intrinsic_metadata_t gh) {
    bit<13> pipe_base;
    bit<13> index;
    RegisterAction<bit<32>, bit<13>, bit<32>>(queue_depth) write_depth = {
        void apply(inout bit<32> value) { value = (bit<32>) gh.qlength; }
    };
    action shift_pipe() { pipe_base = (bit<13>) gh.pipe_id << 11; }
    action add_qid() { index = pipe_base | (bit<13>) gh.qid; }
    action record_depth() { write_depth.execute(index); }
    table ghost_pipe { actions = { shift_pipe; } default_action = shift_pipe(); }
    table ghost_index { actions = { add_qid; } default_action = add_qid(); }
    table ghost_record { actions = { record_depth; } default_action = record_depth(); }
    apply {
        ghost_pipe.apply();
        ghost_index.apply();
        ghost_record.apply();
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser(), Ghost()) pipe;
Switch(pipe) main;
