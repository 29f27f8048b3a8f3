/* mice_elephant.p4: Mice/Elephant isolation (Wang, Sun, Salamatian, Li, "Isolating Mice and
 * Elephant in Data Centers", 2016) and, under ONE_QUEUE, the two baselines with a QCN
 * congestion point the paper argues against (pfc_qcn.p4, qcn_only.p4: every packet in one
 * queue; they differ only in the traffic manager's PFC settings).
 *
 * - §5 (the proposal): mice (ACKs and the first MICE_BYTES IPv4 bytes of every flow) go to
 *   a strict-priority queue whose class is lossless under PFC; elephants stay in a lossy
 *   queue with an ETS share. The queues, PFC thresholds and ETS are the traffic manager's,
 *   set by the scheme's Rust code (`port_queues`, `pfc_cells`); this program classifies.
 * - §2, §4.2: the elephants' end-to-end control is IEEE 802.1Qau QCN: a congestion point at
 *   the egress of every port samples elephant frames and, when Fb = Qoff + w Qdelta says
 *   the queue grows past Qeq, sends the frame's source a CNM with the quantised feedback.
 * - A CNM travels back by the sampled frame's source IPv4 address, in the mice queue.
 *
 * Defines, from the scheme's parameters (`mod.rs`, `defines`):
 *   ONE_QUEUE         the baselines: no classification, every packet in queue 0
 *   BY_DSCP           classify by the DSCP the source set (46) instead of a byte counter
 *   MICE_BYTES        bytes of a flow that travel as mice
 *   MICE_TOS, MICE_TOS_LAST  the TOS bytes of DSCP 46 (BY_DSCP)
 *   ACK_MAX_TOTAL_LEN the largest IPv4 total length of an ACK
 *   QEQ_CELLS         QCN's Qeq, cells; CP_FEEDBACK_SIZE is 5 Qeq, the feedback table's size
 *   SAMPLE_BYTES      the sampling interval, bytes (fixed sampling)
 *   SAMPLE_RANDOM, SAMPLE_LOW, SAMPLE_BITS: each interval drawn as SAMPLE_LOW plus a
 *                     SAMPLE_BITS-bit random number (`sample_interval_range` in mod.rs)
 *   NO_CP             no congestion point: the elephants run TCP or DCTCP instead of QCN
 *                     (§6 compares the three)
 *   ECN_K_CELLS       with NO_CP, DCTCP's marking: CE on ECN-capable elephant packets that
 *                     find at least this many cells in their queue at enqueue
 * The feedback table's entries (the quantised feedback of each excess) come from the
 * control plane (`cp_feedback`, installed by the scheme). Docs: docs/schemes/mice-elephant.md. */
#include <t2na.p4>

/* Isolation classifies unless a baseline's file says ONE_QUEUE. */
#ifndef ONE_QUEUE
#define CLASSIFY
#endif
#ifndef MICE_BYTES
#define MICE_BYTES 100000
#endif
#ifndef ACK_MAX_TOTAL_LEN
#define ACK_MAX_TOTAL_LEN 80
#endif
#ifndef QEQ_CELLS
#define QEQ_CELLS 192
#endif
#ifndef CP_FEEDBACK_SIZE
#define CP_FEEDBACK_SIZE 960
#endif
#ifndef SAMPLE_BYTES
#define SAMPLE_BYTES 150000
#endif
#ifndef SAMPLE_LOW
#define SAMPLE_LOW 133616
#endif
#ifndef SAMPLE_BITS
#define SAMPLE_BITS 15
#endif

#define ELEPHANT_QID 0
/* The mice queue, strict priority above the elephants'; CNMs travel in it under every
 * variant. */
#define MICE_QID 1
#define MICE_PFC_CLASS 1
/* DSCP 46 in an 8-bit TOS byte, whatever the ECN bits: 184..187. */
#ifndef MICE_TOS
#define MICE_TOS 184
#define MICE_TOS_LAST 187
#endif
/* The mirror session CNM copies go to (the scheme points it at pipe 0's recirculation port,
 * cutting copies to 82 bytes: this header, the Ethernet header and 64 MSDU bytes). */
#define CNM_SESSION 7
/* A CNM copy's mirror type: its mirror header is the program's first header. */
#define CNM_MIRROR_TYPE 1
/* 802.1Qau: the largest quantised feedback (6 bits). */
#define QNTZ_FB_MAX 63
#define CNM_ETHERTYPE 0x22E9
/* The congestion point's own MAC, the CNM's source: 02:00:00:00:cc:01. */
#define CNM_SOURCE_MAC_HI 0x0200
#define CNM_SOURCE_MAC_LO 0x0000cc01

struct metadata_t {
    bit<32> orig_dst;             // a CNM's own destination while it is routed by its source
    bit<16> flow_idx;             // the flow's counter
    bit<32> flow_bytes;           // IPv4 bytes the flow sent before this packet
    bit<SAMPLE_BITS> cp_jitter;   // the random part of the next sampling interval
    bit<32> cp_next;              // the next sampling interval, bytes
    bit<8> sampled;               // the congestion point samples this frame
    bit<32> q_old;                // the queue at the port's previous sample, cells
    bit<32> fb_up;                // 3 Q
    bit<32> fb_down;              // Qeq + 2 Qold
    bit<32> fb_excess;            // -Fb = 3 Q - (Qeq + 2 Qold)
    MirrorId_t session;           // the session a sampled frame is mirrored to
}

#ifdef SAMPLE_RANDOM
/* A port's sampling state: bytes since the last sample, and the current interval. */
struct cp_interval_t {
    bit<32> bytes;
    bit<32> interval;
}
#endif

#define OWN_PARSERS
#define SWITCH_HEADERS tos_headers_t
#include "../common.p4"

/* What a CNM copy starts with, as Tofino programs tell a mirrored copy: its first byte the
 * mirror type, which the egress parser looks ahead at; then the quantised feedback and the
 * sampled frame's MSDU length, which the copy's egress pass writes into the CNM. */
header mirror_h {
    bit<8> mirror_type;
    bit<8> fb;
    bit<16> msdu_len;
}

/* The copied frame's Ethernet header, which becomes the CNM's. */
header orig_eth_h {
    bit<16> dst_hi;
    bit<32> dst_lo;
    bit<16> src_hi;
    bit<32> src_lo;
    bit<16> ether_type;
}

/* An 802.1Qau CNM after its Ethernet header (the frame format of t2sim's qcn codec):
 * version and QntzFb, the congestion point's id, cnmQOffset, cnmQDelta, the encapsulated
 * priority, destination MAC and MSDU length; the sampled frame's first bytes follow. */
header cnm_h {
    bit<16> fb;
    bit<32> cpid_hi;
    bit<32> cpid_lo;
    bit<16> q_offset;
    bit<16> q_delta;
    bit<16> prio;
    bit<16> edst_hi;
    bit<32> edst_lo;
    bit<16> msdu_len;
}

struct me_headers_t {
    mirror_h mirror_md;
    orig_eth_h orig_eth;
    ethernet_h ethernet;
    cnm_h cnm;
    ipv4_tos_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

/* Ethernet, then a CNM (its EtherType) or IPv4; a CNM's encapsulated frame is parsed as
 * IPv4, so that it can be routed by the frame's source address. */
#define PARSE_FRAME(HDR)                                                    \
    state parse_ethernet {                                                  \
        pkt.extract(HDR.ethernet);                                          \
        transition select(HDR.ethernet.ether_type) {                        \
            0x0800: parse_ipv4;                                             \
            CNM_ETHERTYPE: parse_cnm;                                       \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_cnm { pkt.extract(HDR.cnm); transition parse_ipv4; }       \
    state parse_ipv4 {                                                      \
        pkt.extract(HDR.ipv4);                                              \
        transition select(HDR.ipv4.protocol) {                              \
            17: parse_udp;                                                  \
            6: parse_tcp;                                                   \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_udp { pkt.extract(HDR.udp); transition accept; }           \
    state parse_tcp { pkt.extract(HDR.tcp); transition accept; }

parser IngressParser(packet_in pkt, out me_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    PARSE_FRAME(hdr)
}

control IngressDeparser(packet_out pkt, inout me_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

control Ingress(inout me_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
#if defined(CLASSIFY) && !defined(BY_DSCP)
    /* §5: "a flow is mice until its bytes pass the boundary": a per-flow byte counter in
     * stateful memory, indexed by a CRC32 hash of the 5-tuple (65,536 counters), gives the
     * bytes the flow sent before this packet. */
    Hash<bit<16>>(HashAlgorithm_t.CRC32) flow_hash;
    Register<bit<32>, bit<16>>(65536) flow_bytes;
    RegisterAction<bit<32>, bit<16>, bit<32>>(flow_bytes) count_flow_bytes = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + (bit<32>) hdr.ipv4.total_len;
        }
    };
#endif

    HOST_ROUTES

    /* CNMs back to the source: the host route of the sampled frame's source is the way
     * back, so the CNM's destination is swapped for that address while `ipv4_host` picks
     * the port (and lowers the TTL), then swapped back and the TTL restored: the
     * encapsulated bytes arrive as they were sampled. CNMs travel in the mice queue. */
    action cnm_to_source() {
        meta.orig_dst = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        ig_tm_md.qid = MICE_QID;
    }
    action cnm_restore() {
        hdr.ipv4.dst_addr = meta.orig_dst;
        hdr.ipv4.ttl = hdr.ipv4.ttl + 1;
    }
    table cnm_route { actions = { cnm_to_source; } default_action = cnm_to_source(); }
    table cnm_unswap { actions = { cnm_restore; } default_action = cnm_restore(); }

#ifdef CLASSIFY
    /* §5: mice to the strict-priority queue, in the lossless PFC class. */
    action to_mice() {
        ig_tm_md.qid = MICE_QID;
        ig_tm_md.ingress_cos = MICE_PFC_CLASS;
    }
    table ack_to_mice { actions = { to_mice; } default_action = to_mice(); }
    table flow_to_mice { actions = { to_mice; } default_action = to_mice(); }
#ifndef BY_DSCP
    action flow_index() {
        meta.flow_idx = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                        hdr.ipv4.protocol, hdr.tcp.src_port,
                                        hdr.tcp.dst_port });
    }
    action count_bytes() { meta.flow_bytes = count_flow_bytes.execute(meta.flow_idx); }
    table flow_index_t { actions = { flow_index; } default_action = flow_index(); }
    table flow_bytes_t { actions = { count_bytes; } default_action = count_bytes(); }
#endif
#endif

    apply {
        if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            if (hdr.cnm.isValid()) {
                cnm_route.apply();
            }
            ipv4_host.apply();
            if (hdr.cnm.isValid()) {
                cnm_unswap.apply();
            }
#ifdef CLASSIFY
            else if (hdr.ipv4.total_len <= ACK_MAX_TOTAL_LEN) {
                /* Packets of at most an ACK's length are mice whatever their flow sent. */
                ack_to_mice.apply();
            } else {
#ifdef BY_DSCP
                /* §5's source-side classification: the source marks mice DSCP 46. */
                if (hdr.ipv4.diffserv >= MICE_TOS && hdr.ipv4.diffserv <= MICE_TOS_LAST) {
                    flow_to_mice.apply();
                }
#else
                flow_index_t.apply();
                flow_bytes_t.apply();
                if (meta.flow_bytes < MICE_BYTES) {
                    flow_to_mice.apply();
                }
#endif
            }
#endif
        }
    }
}

parser EgressParser(packet_in pkt, out me_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    /* A CNM copy starts with its mirror header, whose first byte is its mirror type; every
     * other packet with its Ethernet header. */
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<mirror_h>().mirror_type) {
            CNM_MIRROR_TYPE: parse_mirror;
            default: parse_ethernet;
        }
    }
    /* The copy: its mirror header and the sampled frame's Ethernet header (a copy of a CNM
     * would go on to the CNM header, as the ingress parses one). */
    state parse_mirror {
        pkt.extract(hdr.mirror_md);
        pkt.extract(hdr.orig_eth);
        transition select(hdr.orig_eth.ether_type) {
            CNM_ETHERTYPE: parse_cnm;
            default: accept;
        }
    }
    PARSE_FRAME(hdr)
}

control Egress(inout me_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
#ifndef NO_CP
    /* §2 (802.1Qau's congestion point), sampling: a per-port byte counter samples the first
     * elephant frame once the interval's bytes have left the port since the last sample,
     * and restarts. The predicate output is 1 when the frame is sampled. */
#ifdef SAMPLE_RANDOM
    /* 802.1Qau randomises the interval: each port's current interval is the `interval` half
     * of its cell, redrawn at each sample as SAMPLE_LOW plus SAMPLE_BITS random bits (a
     * port's first frame is sampled: its interval starts at 0). */
    Register<cp_interval_t, PortId_t>(512) cp_bytes;
    RegisterAction<cp_interval_t, PortId_t, bit<8>>(cp_bytes) cp_count = {
        void apply(inout cp_interval_t value, out bit<8> rv) {
            rv = this.predicate(value.bytes >= value.interval);
            if (value.bytes >= value.interval) {
                value.bytes = 0;
                value.interval = meta.cp_next;
            } else {
                value.bytes = value.bytes + (bit<32>) eg_intr_md.pkt_length;
            }
        }
    };
    Random<bit<SAMPLE_BITS>>() cp_random;
    action cp_draw() { meta.cp_jitter = cp_random.get(); }
    action cp_next() { meta.cp_next = (bit<32>) meta.cp_jitter + SAMPLE_LOW; }
    table cp_draw_t { actions = { cp_draw; } default_action = cp_draw(); }
    table cp_next_t { actions = { cp_next; } default_action = cp_next(); }
#else
    Register<bit<32>, PortId_t>(512) cp_bytes;
    RegisterAction<bit<32>, PortId_t, bit<8>>(cp_bytes) cp_count = {
        void apply(inout bit<32> value, out bit<8> rv) {
            rv = this.predicate(value >= SAMPLE_BYTES);
            if (value >= SAMPLE_BYTES) {
                value = 0;
            } else {
                value = value + (bit<32>) eg_intr_md.pkt_length;
            }
        }
    };
#endif

    /* The queue found at the port's previous sample, Qold, swapped for this one's. */
    Register<bit<32>, PortId_t>(512) cp_q_old;
    RegisterAction<bit<32>, PortId_t, bit<32>>(cp_q_old) cp_swap_q = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = (bit<32>) eg_intr_md.enq_qdepth;
        }
    };

    action cp_sample() { meta.sampled = cp_count.execute(eg_intr_md.egress_port); }
    action cp_q() { meta.q_old = cp_swap_q.execute(eg_intr_md.egress_port); }
    /* §2: -Fb = (Q - Qeq) + w (Q - Qold) with w = 2, so -Fb > 0 when 3 Q > Qeq + 2 Qold;
     * one VLIW operation per step: doubling, then the offsets, then the difference. */
    action cp_double() {
        meta.fb_up = (bit<32>) eg_intr_md.enq_qdepth << 1;
        meta.fb_down = meta.q_old << 1;
    }
    action cp_offsets() {
        meta.fb_up = meta.fb_up + (bit<32>) eg_intr_md.enq_qdepth;
        meta.fb_down = meta.fb_down + QEQ_CELLS;
    }
    action cp_excess() { meta.fb_excess = meta.fb_up - meta.fb_down; }
    /* A sampled frame with -Fb > 0 is mirrored with its quantised feedback,
     * min(63, -Fb 63 / (Qeq (2w + 1))), and its MSDU length (less Ethernet and FCS). */
    action sample_cnm(MirrorId_t session, bit<6> fb) {
        eg_dprsr_md.mirror_type = CNM_MIRROR_TYPE;
        meta.session = session;
        hdr.mirror_md.mirror_type = CNM_MIRROR_TYPE;
        hdr.mirror_md.fb = (bit<8>) fb;
        hdr.mirror_md.msdu_len = eg_intr_md.pkt_length - 18;
    }
    table cp_sample_t { actions = { cp_sample; } default_action = cp_sample(); }
    table cp_q_t { actions = { cp_q; } default_action = cp_q(); }
    table cp_double_t { actions = { cp_double; } default_action = cp_double(); }
    table cp_offsets_t { actions = { cp_offsets; } default_action = cp_offsets(); }
    table cp_excess_t { actions = { cp_excess; } default_action = cp_excess(); }
    /* The quantisation as a table on -Fb (entries 1 .. 5 Qeq - 1 from the control plane);
     * the default, an excess of 5 Qeq or more, saturates at 63. */
    table cp_feedback {
        key = { meta.fb_excess : exact; }
        actions = { sample_cnm; }
        default_action = sample_cnm(CNM_SESSION, QNTZ_FB_MAX);
        size = CP_FEEDBACK_SIZE;
    }

#endif
#ifdef ECN_K_CELLS
    /* §6's DCTCP for the elephants: CE on ECN-capable packets (ECT(0), ECT(1) or CE) that
     * join the elephant queue at K or more, as the DCTCP switch marks (the ECN bits are the
     * low two of the TOS byte this program declares whole). */
    action ecn_mark() {
        if (hdr.ipv4.diffserv[1:0] != 0) {
            hdr.ipv4.diffserv[1:0] = 3;
        }
    }
    table ecn_mark_t { actions = { ecn_mark; } default_action = ecn_mark(); }
#endif

    /* The copy's own egress pass makes the CNM (802.1Qau): the feedback, the congestion
     * point's id (the sampled frame's egress port), the sampled frame's destination MAC and
     * MSDU length; then the copied Ethernet header becomes the CNM's, to the sampled
     * frame's source. The bytes after it (cut by the session) are the encapsulated MSDU. */
    action cnm_body() {
        hdr.cnm.setValid();
        hdr.cnm.fb = (bit<16>) hdr.mirror_md.fb;
        hdr.cnm.cpid_hi = 0;
        hdr.cnm.cpid_lo = (bit<32>) eg_intr_md.egress_port;
        hdr.cnm.q_offset = 0;
        hdr.cnm.q_delta = 0;
        hdr.cnm.prio = 0;
        hdr.cnm.edst_hi = hdr.orig_eth.dst_hi;
        hdr.cnm.edst_lo = hdr.orig_eth.dst_lo;
        hdr.cnm.msdu_len = hdr.mirror_md.msdu_len;
    }
    action cnm_eth() {
        hdr.mirror_md.setInvalid();
        hdr.orig_eth.dst_hi = hdr.orig_eth.src_hi;
        hdr.orig_eth.dst_lo = hdr.orig_eth.src_lo;
        hdr.orig_eth.src_hi = CNM_SOURCE_MAC_HI;
        hdr.orig_eth.src_lo = CNM_SOURCE_MAC_LO;
        hdr.orig_eth.ether_type = CNM_ETHERTYPE;
    }
    table cnm_body_t { actions = { cnm_body; } default_action = cnm_body(); }
    table cnm_eth_t { actions = { cnm_eth; } default_action = cnm_eth(); }

    apply {
        if (hdr.mirror_md.isValid()) {
            cnm_body_t.apply();
            cnm_eth_t.apply();
        } else if (!hdr.cnm.isValid()) {
            /* The congestion point watches the elephant class (every packet's under the
             * baselines), IPv4 frames longer than an ACK. */
#ifndef NO_CP
            if (hdr.ipv4.isValid()) {
                if (eg_intr_md.egress_cos == 0) {
                    if (hdr.ipv4.total_len > ACK_MAX_TOTAL_LEN) {
#ifdef SAMPLE_RANDOM
                        cp_draw_t.apply();
                        cp_next_t.apply();
#endif
                        cp_sample_t.apply();
                        if (meta.sampled == 1) {
                            cp_q_t.apply();
                            cp_double_t.apply();
                            cp_offsets_t.apply();
                            if (meta.fb_up > meta.fb_down) {
                                cp_excess_t.apply();
                                cp_feedback.apply();
                            }
                        }
                    }
                }
            }
#endif
#ifdef ECN_K_CELLS
            if (hdr.ipv4.isValid()) {
                if (eg_intr_md.egress_cos == 0) {
                    if (eg_intr_md.enq_qdepth >= ECN_K_CELLS) {
                        ecn_mark_t.apply();
                    }
                }
            }
#endif
        }
    }
}

control EgressDeparser(packet_out pkt, inout me_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == CNM_MIRROR_TYPE) {
            mirror.emit<mirror_h>(meta.session, hdr.mirror_md);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
