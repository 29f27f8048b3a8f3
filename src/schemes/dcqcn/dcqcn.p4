/* dcqcn.p4: DCQCN's switch, the congestion point (Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM 2015, §3.1 "CP Algorithm": RED-style ECN marking on
 * the egress queue, Fig. 5's ramp), as the HPCC ns-3 artifact runs it
 * (`SwitchMmu::ShouldSendCN`: the queue as the packet leaves, none at or below Kmin, with
 * probability Pmax (q - Kmin) / (Kmax - Kmin) up to Kmax, every packet above). The reaction
 * and notification points (§3.1 "RP", "NP") are the NICs' (testbench/src/rdma/); PFC, the
 * queues and the control frames' class are the traffic manager's, set by `mod.rs`.
 *
 * Defines, from the scheme's parameters and the port speed (`mod.rs`, `Marking`):
 *   KMIN_CELLS, KMAX_CELLS  the ramp's ends, cells of the egress queue at dequeue
 *   BUCKET_SHIFT            the ramp table's bucket: 2^BUCKET_SHIFT cells (it keeps the ramp
 *                           within RAMP_SIZE entries)
 *   RAMP_SIZE               the ramp table's size
 *   CONTROL_QID, CONTROL_CLASS, CONTROL_TOS: the queue and PFC class of ACKs, NACKs and
 *                           CNPs, and the TOS byte of their DSCP (48)
 * The ramp's entries (each bucket's 16-bit marking threshold, Pmax scaled) come from the
 * control plane (`ecn_ramp`, installed by the scheme). Docs: docs/schemes/dcqcn.md. */
#include <t2na.p4>

#ifndef KMIN_CELLS
#define KMIN_CELLS 2272
#endif
#ifndef KMAX_CELLS
#define KMAX_CELLS 9090
#endif
#ifndef BUCKET_SHIFT
#define BUCKET_SHIFT 3
#endif
#ifndef RAMP_SIZE
#define RAMP_SIZE 1024
#endif
#ifndef CONTROL_QID
#define CONTROL_QID 1
#endif
#ifndef CONTROL_CLASS
#define CONTROL_CLASS 1
#endif
#ifndef CONTROL_TOS
#define CONTROL_TOS 192
#endif

struct metadata_t {
    bit<16> ecn_rand;     // this packet's draw; a probability of 1 is 2^16
    bit<32> ecn_bucket;   // the queue's depth in ramp buckets
    bit<32> ecn_below;    // the bucket's threshold: marked when the draw is below it
}

#define SWITCH_HEADERS tos_headers_t
#include "../common.p4"

control Ingress(inout tos_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HOST_ROUTES

    /* ACKs, NACKs and CNPs (DSCP 48 from the NICs) one strict priority above the data, in a
     * lossy class, as the artifact's DCQCN runs have them (`ACK_HIGH_PRIO 1`). */
    action to_control_queue() {
        ig_tm_md.qid = CONTROL_QID;
        ig_tm_md.ingress_cos = CONTROL_CLASS;
    }
    table control_queue { actions = { to_control_queue; } default_action = to_control_queue(); }

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            // DSCP 48 with any ECN bits: the whole TOS byte in CONTROL_TOS..CONTROL_TOS + 3.
            if (hdr.ipv4.diffserv >= CONTROL_TOS && hdr.ipv4.diffserv <= CONTROL_TOS + 3) {
                control_queue.apply();
            }
        }
    }
}

control Egress(inout tos_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* §3.1: the CP marks CE on ECN-capable packets (RoCEv2 sets ECT). */
    action mark() {
        if (hdr.ipv4.diffserv[1:0] != 0) {
            hdr.ipv4.diffserv[1:0] = 3;
        }
    }
    /* Fig. 5's ramp between Kmin and Kmax: a 16-bit draw from the chip's Random extern per
     * packet, and the depth in buckets, which a table maps to the bucket's probability
     * (at its lowest depth) as a 16-bit threshold. */
    Random<bit<16>>() ecn_random;
    action ecn_draw() {
        meta.ecn_rand = ecn_random.get();
        meta.ecn_bucket = (bit<32>) eg_intr_md.deq_qdepth >> BUCKET_SHIFT;
    }
    action ecn_threshold(bit<32> below) { meta.ecn_below = below; }
    table ecn_mark_full { actions = { mark; } default_action = mark(); }
    table ecn_draw_t { actions = { ecn_draw; } default_action = ecn_draw(); }
    table ecn_ramp {
        key = { meta.ecn_bucket : exact; }
        actions = { ecn_threshold; }
        default_action = ecn_threshold(0);
        size = RAMP_SIZE;
    }
    table ecn_mark_ramp { actions = { mark; } default_action = mark(); }

    apply {
        if (hdr.ipv4.isValid()) {
            // The queue as the packet leaves it (the artifact marks at dequeue).
            if (eg_intr_md.deq_qdepth > KMAX_CELLS) {
                ecn_mark_full.apply();
            } else if (eg_intr_md.deq_qdepth > KMIN_CELLS) {
                ecn_draw_t.apply();
                ecn_ramp.apply();
                if ((bit<32>) meta.ecn_rand < meta.ecn_below) {
                    ecn_mark_ramp.apply();
                }
            }
        }
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
