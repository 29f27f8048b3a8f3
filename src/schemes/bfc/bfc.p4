/* bfc.p4: BFC's switch (Goyal, Shah, Zhao, Nikolaidis, Alizadeh, Anderson, "Backpressure Flow
 * Control", NSDI 2022), the algorithm of the authors' ns-3 code (`prateshg/BFC_NS3_NSDI2022`)
 * with Tofino2's own parts (§4 of the paper):
 *
 * - §3.3.1, queue assignment: a flow table of three register arrays indexed by a CRC-32 of
 *   the 5-tuple (collisions share an entry): the last time a packet of the flow went by,
 *   its packets in the switch, its queue. A flow with none in the switch, idle more than
 *   STICKY_NS, gets the first empty, unpaused data queue of its egress port, scanning from
 *   a random one, else one hashed from the flow index.
 * - §3.3.2, backpressure: a packet pauses the queue it came from at the upstream hop when
 *   its own queue holds more than Th = mark_up x link x hrtt / N_active and its flow has a
 *   packet in the switch already. A counter per upstream queue counts the packets that
 *   paused it and are still here; pause frames carry the counters' bits to the upstream
 *   switch, which pauses or resumes that queue through Tofino2's advanced flow control.
 * - §4: the dequeue of a packet is seen by a truncated mirror copy recirculated into the
 *   ingress (lowering its flow's size and its pause counter); the queues' depths come from
 *   the ghost thread; pause frames come from the packet generator (every REFRESH period,
 *   and at once when a counter falls to 0).
 *
 * The control plane (`mod.rs`) installs the thresholds (`threshold`), the free-queue scan
 * (`first_free`, 992 ternary entries), the byte popcounts, the hashed queues, the changed-
 * bit search and the port of each pktgen packet; sets up the mirror sessions and the
 * packet generator. Defines:
 *   FLOW_ENTRIES   cells of each flow-table array
 *   STICKY_NS      idle time after which a flow with no packet here may change queue, ns
 *   TH1_CELLS      Th at N_active = 1 (the threshold table's default: N_active 0 reads 1)
 * Docs: docs/schemes/bfc.md. */
#include <t2na.p4>

#ifndef FLOW_ENTRIES
#define FLOW_ENTRIES 65536
#endif
#ifndef STICKY_NS
#define STICKY_NS 6000
#endif
#ifndef TH1_CELLS
#define TH1_CELLS 213
#endif

/* The tag a data packet carries from ingress to egress (IEEE 802 "OUI extended" EtherType,
 * chosen by us: it never leaves the switch). */
#define TAG_ETHERTYPE 0x88B7
/* BFC pause frames (`src/schemes/bfc/wire.rs`). */
#define BFC_ETHERTYPE 0x88B5
/* The first 16 bits of a dequeue record (pktgen headers begin with a byte of at most 0x3F). */
#define RECORD_MARKER 0xBFC0
/* A dequeue record's mirror type: its mirror header is the program's first header. */
#define RECORD_MIRROR_TYPE 1
/* Pause frames leave in the strict-priority control queue (BFC's queue qCnt - 1). */
#define CONTROL_QUEUE 31
/* Each pipe's pktgen and recirculation port (local port 6). */
#define GEN_PORT_0 6
#define GEN_PORT_1 134
#define GEN_PORT_2 262
#define GEN_PORT_3 390
#define RESUBMIT_APPLY 1
/* Every data packet's departure makes one record: the 12-byte `bfc_deq` header, the first
 * 64 bytes of the packet and the FCS, mirrored and recirculated once. */
#define RECORD_BYTES 80

struct metadata_t {
    bit<1> is_data;       // a data packet (IPv4 from a front-panel port)
    bit<1> is_deq;        // a dequeue record
    bit<32> fidx;         // the flow's index in the flow table
    bit<32> now;          // ns
    bit<32> last;         // the flow's last packet, ns
    bit<32> idle;         // now - last
    bit<16> size_before;  // the flow's packets in the switch before this one
    bit<1> reassign;      // the flow takes meta.cand as its queue
    bit<16> port_key;     // the egress (or frame's) port, device port >> 1
    bit<32> busy;         // the port's non-empty queues (ghost thread)
    bit<32> paused;       // the port's queues the downstream paused
    bit<32> unpaused;
    bit<32> blocked;      // busy or paused
    bit<32> active;       // busy and not paused
    bit<16> half_hi;
    bit<16> half_lo;
    bit<8> byte0;
    bit<8> byte1;
    bit<8> byte2;
    bit<8> byte3;
    bit<8> count0;
    bit<8> count1;
    bit<8> count2;
    bit<8> count3;
    bit<8> count01;
    bit<8> count23;
    bit<8> n_active;      // N_active
    bit<32> th;           // Th(N_active), cells
    bit<5> hq;            // the flow index's 5 low bits, for a hashed queue
    bit<5> start;         // where the free-queue scan starts (random)
    bit<8> cand;          // the queue a new assignment would take
    bit<5> queue;         // the flow's queue
    bit<16> qbase;        // egress port << 4: the ghost thread's number of its queue 0
    bit<16> qidx;         // ... and of the flow's queue
    bit<32> depth;        // that queue's depth, cells
    bit<1> flow;          // a data packet or a dequeue record: touches the flow table
    bit<8> session;       // the mirror session of a departure's record (its ingress pipe)
    bit<32> seen;         // min(last, 1): 0 for an entry never touched
    bit<1> frame;         // a received pause frame's first pass
    bit<2> qp_op;         // queue_paused: 1 read, 2 record a bit
    bit<2> pb_op;         // pause_bits: 1 read (a pause frame), 2 set or clear a bit
    bit<16> edge;         // the pause counter's old value less is_deq: 0 at an edge
    bit<1> counted;       // the packet moves a pause counter
    bit<16> in_port;      // the ingress port of the data packet (or of the record's)
    bit<8> uq5;           // upstream queue mod 32
    bit<16> pbase;        // in_port << 5
    bit<16> pidx;         // the pause counter's index
    bit<32> mask;         // the bit of a queue in a bitmap word (most significant first)
    bit<16> ctr_old;      // the pause counter before this packet
    bit<32> bits;         // a port's pause bitmap word
    bit<32> diff;         // a received bitmap against queue_paused
    bit<1> changed;       // a received frame changes a bit
    bit<8> shift;         // 31 - the changed queue
    bit<32> shifted;
    bit<32> bit;          // the changed queue's new bit
    bit<32> afc_hi;       // AFC message: port >> 3 (pipe and MAC) ...
    bit<32> afc_ch;       // ... port & 7 (channel) ...
    bit<32> afc_q;        // ... the queue ...
    bit<32> afc_a;
    bit<32> afc_b;
    bit<32> arg;          // a bitmap update's operand: the mask (OR) or its complement (AND)
    bit<1> bit1;          // the changed queue's new bit, 1 bit
    bit<32> neg;          // all ones when clearing, 0 when setting
}

#define OWN_PARSERS
#include "../common.p4"

/* A dequeue record: the mirror header of a departing data packet's truncated copy, with
 * what its dequeue undoes. Its first field is the record's marker, which the egress parser
 * looks ahead at and the ingress tells records from pktgen packets by. */
header bfc_deq_h {
    bit<16> kind;
    bit<16> in_port;
    bit<16> uq;
    bit<8> caused;
    bit<8> pad;
    bit<32> fidx;
}

/* What a packet from the pktgen/recirculation port begins with: a record's marker or the
 * pktgen header's first 16 bits. */
header gen_first_h {
    bit<16> kind;
}

header pktgen_rest_h {
    bit<16> batch_id;
    bit<16> packet_id;
}

/* The rest of a record come back into the ingress. */
header deq_rest_h {
    bit<16> in_port;
    bit<16> uq;
    bit<8> caused;
    bit<8> pad;
    bit<32> fidx;
}

/* The resubmit header: the queue whose bit a received frame changes. */
header bfc_apply_h {
    bit<8> queue;
    bit<8> pad;
}

/* Between Ethernet and IPv4 from ingress to egress: the packet's flow, ports and queues. */
header bfc_tag_h {
    bit<8> caused;
    bit<8> queue;
    bit<16> in_port;
    bit<16> uq;
    bit<32> fidx;
    bit<16> ether_type;
}

/* A BFC pause frame after its Ethernet header: the first 128 bits of its 1024-bit bitmap,
 * each 32-bit word a copy of the port's word (the other 112 bytes ride as payload, zero). */
header bfc_h {
    bit<16> subtype;
    bit<32> w0;
    bit<32> w1;
    bit<32> w2;
    bit<32> w3;
}

struct bfc_headers_t {
    bfc_deq_h bfc_deq;
    gen_first_h gen_first;
    pktgen_rest_h pktgen_rest;
    deq_rest_h deq_rest;
    bfc_apply_h bfc_apply;
    ethernet_h ethernet;
    bfc_tag_h bfc_tag;
    bfc_h bfc;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}

/* Ethernet, then IPv4, a tagged packet (egress) or a pause frame. */
#define PARSE_FRAME(HDR)                                                    \
    state parse_eth {                                                       \
        pkt.extract(HDR.ethernet);                                          \
        transition select(HDR.ethernet.ether_type) {                        \
            0x0800: parse_ipv4;                                             \
            TAG_ETHERTYPE: parse_tag;                                       \
            BFC_ETHERTYPE: parse_bfc;                                       \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_tag {                                                       \
        pkt.extract(HDR.bfc_tag);                                           \
        transition select(HDR.bfc_tag.ether_type) {                         \
            0x0800: parse_ipv4;                                             \
            default: accept;                                                \
        }                                                                   \
    }                                                                       \
    state parse_bfc { pkt.extract(HDR.bfc); transition accept; }           \
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

/* The flow table (§3.3.1), by flow index. */
Register<bit<32>, bit<32>>(FLOW_ENTRIES) flow_last;
Register<bit<16>, bit<32>>(FLOW_ENTRIES) flow_size;
Register<bit<8>, bit<32>>(FLOW_ENTRIES) flow_queue;
/* Every queue's depth in cells, by the ghost thread's number pipe:2 | qid:11. */
Register<bit<32>, bit<16>>(8192) queue_depth;
/* Per port key (device port >> 1, every port of 4 pipes): the non-empty queues (ghost
 * thread) and the queues the downstream paused (received frames), bit q of queue q most
 * significant first. */
Register<bit<32>, bit<16>>(512) port_busy;
Register<bit<32>, bit<16>>(512) queue_paused;
/* §3.3.2: the pause counters, (ingress port << 5) + (upstream queue mod 32), and their
 * bits by ingress port, which the pause frames carry; the pauses issued. */
Register<bit<16>, bit<16>>(16384) pause_ctr;
Register<bit<32>, bit<16>>(512) pause_bits;
Register<bit<32>, bit<32>>(1) pauses_issued;

/* The ghost thread (Tofino2): the TM's queue-depth feed into `queue_depth`, and each port's
 * busy bitmap: ghost queue `pipe << 11 | qid` is port key `(pipe << 11 | qid) >> 5`, bit
 * `qid mod 32`. One action is one VLIW instruction, so the index and the bit take three
 * tables, in variables of the control's own (it has no metadata struct). */
control Ghost(in ghost_intrinsic_metadata_t gh) {
    bit<16> q_index;
    bit<16> q_key;
    bit<16> word;
    bit<16> q_high;
    bit<8> q_low;
    bit<32> mask;
    bit<32> nmask;
    bit<32> arg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(queue_depth) write_depth = {
        void apply(inout bit<32> value) { value = (bit<32>) gh.qlength; }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(port_busy) write_busy = {
        void apply(inout bit<32> value) {
            if (gh.qlength > 0) {
                value = value | arg;
            } else {
                value = value & arg;
            }
        }
    };
    action ghost_split() {
        q_index = (bit<16>) gh.pipe_id << 11;
        q_low = (bit<8>) (gh.qid & 31);
        nmask = min((bit<32>) gh.qlength, 1);
        word = (bit<16>) gh.pipe_id << 6;
        q_high = (bit<16>) gh.qid >> 5;
    }
    /* Busy: arg = mask (OR it in); empty: arg = !mask (AND it in). */
    action ghost_join() {
        q_key = q_index | (bit<16>) gh.qid;
        mask = 32w0x80000000 >> q_low;
        nmask = nmask - 1;
        word = word | q_high;
    }
    action ghost_arg() { arg = mask ^ nmask; }
    action ghost_depth() { write_depth.execute(q_key); }
    action ghost_busy() { write_busy.execute(word); }
    table ghost_split_t { actions = { ghost_split; } default_action = ghost_split(); }
    table ghost_join_t { actions = { ghost_join; } default_action = ghost_join(); }
    table ghost_arg_t { actions = { ghost_arg; } default_action = ghost_arg(); }
    table ghost_depth_t { actions = { ghost_depth; } default_action = ghost_depth(); }
    table ghost_busy_t { actions = { ghost_busy; } default_action = ghost_busy(); }
    apply {
        ghost_split_t.apply();
        ghost_join_t.apply();
        ghost_arg_t.apply();
        ghost_busy_t.apply();
        ghost_depth_t.apply();
    }
}

/* The ingress parser tells four kinds of packet apart: from a pipe's pktgen/recirculation
 * port, a dequeue record (by its marker) or a pktgen packet; from a front-panel port, a
 * resubmitted pause frame's second pass (its resubmit header first), or a frame. */
parser IngressParser(packet_in pkt, out bfc_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition by_port;
    }
    state by_port {
        transition select(ig_intr_md.ingress_port) {
            GEN_PORT_0: parse_gen_first;
            GEN_PORT_1: parse_gen_first;
            GEN_PORT_2: parse_gen_first;
            GEN_PORT_3: parse_gen_first;
            default: by_resubmit;
        }
    }
    state parse_gen_first {
        pkt.extract(hdr.gen_first);
        transition select(hdr.gen_first.kind) {
            RECORD_MARKER: parse_record;
            default: parse_pktgen;
        }
    }
    state parse_record { pkt.extract(hdr.deq_rest); transition accept; }
    state parse_pktgen { pkt.extract(hdr.pktgen_rest); transition parse_eth; }
    state by_resubmit {
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_apply;
            default: parse_eth;
        }
    }
    state parse_apply { pkt.extract(hdr.bfc_apply); transition parse_eth; }
    PARSE_FRAME(hdr)
}

control IngressDeparser(packet_out pkt, inout bfc_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;
    apply {
        if (ig_dprsr_md.resubmit_type == RESUBMIT_APPLY) {
            resubmit.emit(hdr.bfc_apply);
        }
        pkt.emit(hdr);
    }
}

control Ingress(inout bfc_headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<32>>(HashAlgorithm_t.CRC32) flow_hash;
    Random<bit<5>>() scan_start;

    /* Host routes, as common.p4's HOST_ROUTES, written out so that the popcount tables can
     * come before `ipv4_host`: tables are numbered in the order they are declared, and
     * `port_key_t`'s Random is seeded by its number (16), which the scheme's tests pin. */
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    @drop_reason("no_route") action drop_no_route() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("not_ipv4") action drop_not_ipv4() { ig_dprsr_md.drop_ctl = 1; }
    @drop_reason("ttl_expired") action drop_ttl_expired() { ig_dprsr_md.drop_ctl = 1; }
    table not_ipv4 { actions = { drop_not_ipv4; } default_action = drop_not_ipv4(); }
    table ttl_expired { actions = { drop_ttl_expired; } default_action = drop_ttl_expired(); }

    /* The flow table's stateful programs. */
    RegisterAction<bit<32>, bit<32>, bit<32>>(flow_last) touch_last_ra = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = meta.now;
        }
    };
    /* Data: +1. Dequeue record: -1, never below 0. */
    RegisterAction<bit<16>, bit<32>, bit<16>>(flow_size) count_flow = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if (meta.is_deq == 1) {
                if (value > 0) {
                    value = value - 1;
                }
            } else {
                value = value + 1;
            }
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<5>>(flow_queue) assign_queue = {
        void apply(inout bit<8> value, out bit<5> rv) {
            if (meta.reassign == 1) {
                value = meta.cand;
            }
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(queue_depth) read_depth_ra = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(port_busy) read_busy_ra = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    /* Data packets read it; a received frame's first pass reads it too. */
    RegisterAction<bit<32>, bit<16>, bit<32>>(queue_paused) read_paused_ra = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    /* A received frame's second pass records the bit it applies. */
    RegisterAction<bit<32>, bit<16>, bit<32>>(queue_paused) apply_paused = {
        void apply(inout bit<32> value) {
            if (meta.bit1 == 1) {
                value = value | meta.arg;
            } else {
                value = value & meta.arg;
            }
        }
    };
    /* Data: +1 (old returned: 0 means a new pause). Record: -1 (old 1: resume). */
    RegisterAction<bit<16>, bit<16>, bit<16>>(pause_ctr) count_pause_ra = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if (meta.is_deq == 1) {
                if (value > 0) {
                    value = value - 1;
                }
            } else {
                value = value + 1;
            }
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(pause_bits) mark_bits_ra = {
        void apply(inout bit<32> value) {
            if (meta.is_deq == 1) {
                value = value & meta.arg;
            } else {
                value = value | meta.arg;
            }
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(pause_bits) read_bits_ra = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(pauses_issued) count_issued = {
        void apply(inout bit<32> value) { value = value + 1; }
    };

    /* A data packet: its flow index, the time, its ingress port and upstream queue (the
     * queue it left the upstream hop by, which NICs and switches write in the IPv4
     * identification field). */
    action data_start() {
        meta.is_data = 1;
        meta.flow = 1;
        meta.fidx = flow_hash.get({ hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                    hdr.tcp.src_port, hdr.tcp.dst_port });
        meta.now = ig_prsr_md.global_tstamp[31:0];
        meta.in_port = (bit<16>) ig_intr_md.ingress_port;
        meta.qp_op = 1;
        meta.uq5 = (bit<8>) (hdr.ipv4.identification & 31);
    }
    /* A dequeue record (§4): it undoes its packet's enqueue and is consumed. */
    @drop_reason("consumed") action record_start() {
        meta.is_deq = 1;
        meta.flow = 1;
        meta.counted = (bit<1>) hdr.deq_rest.caused;
        meta.fidx = hdr.deq_rest.fidx;
        meta.now = ig_prsr_md.global_tstamp[31:0];
        meta.in_port = hdr.deq_rest.in_port;
        meta.uq5 = (bit<8>) (hdr.deq_rest.uq & 31);
        ig_dprsr_md.drop_ctl = 1;
    }
    action touch_last() { meta.last = touch_last_ra.execute(meta.fidx); }
    action idle() {
        meta.idle = meta.now - meta.last;
        meta.seen = min(meta.last, 1);
        meta.size_before = count_flow.execute(meta.fidx);
    }
    action port_key() {
        meta.port_key = (bit<16>) ig_tm_md.ucast_egress_port >> 1;
        meta.qbase = (bit<16>) ig_tm_md.ucast_egress_port << 4;
        meta.hq = (bit<5>) (meta.fidx & 31);
        meta.start = scan_start.get();
    }
    action pause_index() {
        meta.pbase = meta.in_port << 5;
        meta.mask = 32w0x80000000 >> meta.uq5;
    }
    action pause_slot() {
        meta.pidx = meta.pbase + (bit<16>) meta.uq5;
        meta.neg = 0 - (bit<32>) meta.is_deq;
    }
    /* Data: arg = mask (OR: a new pause); record: arg = !mask (AND: a resume). */
    action pause_edge() {
        meta.edge = meta.ctr_old - (bit<16>) meta.is_deq;
        meta.arg = meta.mask ^ meta.neg;
    }
    action read_busy() { meta.busy = read_busy_ra.execute(meta.port_key); }
    action read_paused() { meta.paused = read_paused_ra.execute(meta.port_key); }
    /* N_active (§3.3.2): the data queues that are busy and not paused, counted by four
     * byte tables. */
    action combine() {
        meta.blocked = meta.busy | meta.paused;
        meta.unpaused = meta.paused ^ 0xFFFFFFFF;
    }
    action active() { meta.active = meta.busy & meta.unpaused; }
    action halves() {
        meta.half_hi = (bit<16>) (meta.active >> 16);
        meta.half_lo = (bit<16>) meta.active;
    }
    action bytes() {
        meta.byte0 = (bit<8>) (meta.half_hi >> 8);
        meta.byte1 = (bit<8>) meta.half_hi;
        meta.byte2 = (bit<8>) (meta.half_lo >> 8);
        meta.byte3 = (bit<8>) meta.half_lo;
    }
    action count0(bit<8> n) { meta.count0 = n; }
    action count1(bit<8> n) { meta.count1 = n; }
    action count2(bit<8> n) { meta.count2 = n; }
    action count3(bit<8> n) { meta.count3 = n; }
    /* Popcount of N_active's four bytes (the control queue's bit, bit 0, never counts):
     * entries from the control plane. */
    table popcount0 { key = { meta.byte0 : exact; } actions = { count0; } default_action = count0(0); size = 256; }
    table popcount1 { key = { meta.byte1 : exact; } actions = { count1; } default_action = count1(0); size = 256; }
    table popcount2 { key = { meta.byte2 : exact; } actions = { count2; } default_action = count2(0); size = 256; }
    table popcount3 { key = { meta.byte3 : exact; } actions = { count3; } default_action = count3(0); size = 256; }
    table ipv4_host {
        key = { hdr.ipv4.dst_addr : exact; }
        actions = { forward; drop_no_route; }
        default_action = drop_no_route();
        size = 4096;
    }
    action sum_pairs() {
        meta.count01 = meta.count0 + meta.count1;
        meta.count23 = meta.count2 + meta.count3;
    }
    action sum_all() { meta.n_active = meta.count01 + meta.count23; }
    action set_threshold(bit<32> cells) { meta.th = cells; }
    /* §3.3.1: a new flow takes the first free queue, scanning from a random start. */
    action pick_free(bit<8> q) { meta.cand = q; }
    action pick_hashed() { }
    action set_hashed(bit<8> q) { meta.cand = q; }
    action reassign() { meta.reassign = 1; }
    action assign() { meta.queue = assign_queue.execute(meta.fidx); }
    action queue() {
        ig_tm_md.qid = (QueueId_t) meta.queue;
        meta.qidx = meta.qbase + (bit<16>) meta.queue;
        hdr.bfc_tag.queue = (bit<8>) meta.queue;
    }
    action read_depth() { meta.depth = read_depth_ra.execute(meta.qidx); }
    action decide_pause() {
        meta.counted = 1;
        hdr.bfc_tag.caused = 1;
    }
    action count_pause() { meta.ctr_old = count_pause_ra.execute(meta.pidx); }
    action mark_bits() { mark_bits_ra.execute(meta.in_port); }
    action issued() { count_issued.execute(0); }
    /* A counter fell to 0: the pipe's resume burst (pktgen, deparser-triggered). */
    action resume() { ig_dprsr_md.pktgen = 1; }
    action tag() {
        hdr.bfc_tag.setValid();
        hdr.bfc_tag.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = TAG_ETHERTYPE;
        hdr.bfc_tag.fidx = meta.fidx;
        hdr.bfc_tag.in_port = meta.in_port;
        hdr.bfc_tag.uq = hdr.ipv4.identification;
    }
    table data_start_t { actions = { data_start; } default_action = data_start(); }
    table record_start_t { actions = { record_start; } default_action = record_start(); }
    table touch_last_t { actions = { touch_last; } default_action = touch_last(); }
    table flow_size_t { actions = { idle; } default_action = idle(); }
    table port_key_t { actions = { port_key; } default_action = port_key(); }
    table pause_index_t { actions = { pause_index; } default_action = pause_index(); }
    table pause_slot_t { actions = { pause_slot; } default_action = pause_slot(); }
    table pause_edge_t { actions = { pause_edge; } default_action = pause_edge(); }
    /* In the stage the ghost thread writes the bitmap (its chain needs 3 stages). */
    @stage(3)
    table read_busy_t { actions = { read_busy; } default_action = read_busy(); }
    table combine_t { actions = { combine; } default_action = combine(); }
    table active_t { actions = { active; } default_action = active(); }
    table halves_t { actions = { halves; } default_action = halves(); }
    table bytes_t { actions = { bytes; } default_action = bytes(); }
    table sum_pairs_t { actions = { sum_pairs; } default_action = sum_pairs(); }
    table sum_all_t { actions = { sum_all; } default_action = sum_all(); }
    /* Th(N_active) in cells, entries from the control plane; N_active 0 reads as 1. */
    table threshold {
        key = { meta.n_active : exact; }
        actions = { set_threshold; }
        default_action = set_threshold(TH1_CELLS);
        size = 32;
    }
    /* The first data queue whose bit is clear in meta.blocked, scanning from meta.start
     * (entries in priority order from the control plane). */
    table first_free {
        key = { meta.start : ternary; meta.blocked : ternary; }
        actions = { pick_free; pick_hashed; }
        default_action = pick_hashed();
        size = 992;
    }
    /* A queue hashed from the flow index: 32 values onto the 31 data queues. */
    table hashed_queue {
        key = { meta.hq : exact; }
        actions = { set_hashed; }
        default_action = set_hashed(0);
        size = 32;
    }
    table reassign_t { actions = { reassign; } default_action = reassign(); }
    table assign_new { actions = { reassign; } default_action = reassign(); }
    table flow_queue_t { actions = { assign; } default_action = assign(); }
    table queue_t { actions = { queue; } default_action = queue(); }
    table read_depth_t { actions = { read_depth; } default_action = read_depth(); }
    table decide_pause_t { actions = { decide_pause; } default_action = decide_pause(); }
    table count_pause_t { actions = { count_pause; } default_action = count_pause(); }
    table issued_t { actions = { issued; } default_action = issued(); }
    table resume_t { actions = { resume; } default_action = resume(); }
    table tag_t { actions = { tag; } default_action = tag(); }

    /* Pause frames (§3.3.2): packet k of a pktgen burst goes to port k (entries from the
     * control plane), in the control queue, with its port's bitmap word. */
    action to_port(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = CONTROL_QUEUE;
        hdr.gen_first.setInvalid();
        hdr.pktgen_rest.setInvalid();
        meta.port_key = (bit<16>) port;
        meta.pb_op = 1;
    }
    @drop_reason("no_route") action no_port() { ig_dprsr_md.drop_ctl = 1; }
    action read_bits() { meta.bits = read_bits_ra.execute(meta.port_key); }
    action fill_bitmap() {
        hdr.bfc.w0 = meta.bits;
        hdr.bfc.w1 = meta.bits;
        hdr.bfc.w2 = meta.bits;
        hdr.bfc.w3 = meta.bits;
    }
    table refresh_port {
        key = { hdr.pktgen_rest.packet_id : exact; }
        actions = { to_port; no_port; }
        default_action = no_port();
        size = 256;
    }
    table fill_bitmap_t { actions = { fill_bitmap; } default_action = fill_bitmap(); }

    /* A received pause frame: the lowest queue whose bit changed, resubmitted; its second
     * pass records the bit and pauses or resumes that queue through AFC. */
    action frame_start() {
        meta.port_key = (bit<16>) ig_intr_md.ingress_port >> 1;
        meta.qp_op = 1;
        meta.frame = 1;
    }
    action frame_diff() { meta.diff = meta.paused ^ hdr.bfc.w0; }
    action note_change(bit<8> q) {
        hdr.bfc_apply.queue = q;
        meta.changed = 1;
    }
    /* A frame that changes nothing is consumed here; one that does is resubmitted (a
     * dropped packet is not) and consumed on its second pass. */
    @drop_reason("consumed") action no_change() { ig_dprsr_md.drop_ctl = 1; }
    action resubmit_change() { ig_dprsr_md.resubmit_type = RESUBMIT_APPLY; }
    @drop_reason("consumed") action apply_start() {
        meta.shift = 31 - hdr.bfc_apply.queue;
        meta.port_key = (bit<16>) ig_intr_md.ingress_port >> 1;
        meta.mask = 32w0x80000000 >> hdr.bfc_apply.queue;
        meta.afc_hi = (bit<32>) ig_intr_md.ingress_port >> 3;
        meta.afc_ch = (bit<32>) ig_intr_md.ingress_port & 7;
        meta.afc_q = (bit<32>) hdr.bfc_apply.queue << 15;
        meta.qp_op = 2;
        ig_dprsr_md.drop_ctl = 1;
    }
    action apply_shift() {
        meta.shifted = hdr.bfc.w0 >> meta.shift;
        meta.afc_hi = meta.afc_hi << 25;
        meta.afc_ch = meta.afc_ch << 19;
    }
    action apply_bit() {
        meta.bit = meta.shifted & 1;
        meta.bit1 = (bit<1>) (meta.shifted & 1);
        meta.afc_a = meta.afc_hi | meta.afc_ch;
        meta.afc_b = meta.afc_q | 0x80000000;
    }
    /* Set: arg = mask (OR); clear: arg = !mask (AND). */
    action apply_arg() {
        meta.neg = meta.bit - 1;
        meta.afc_a = meta.afc_a | meta.bit;
    }
    action apply_mask() { meta.arg = meta.mask ^ meta.neg; }
    action apply_record() {
        apply_paused.execute(meta.port_key);
        ig_dprsr_md.adv_flow_ctl = meta.afc_a | meta.afc_b;
    }
    table frame_start_t { actions = { frame_start; } default_action = frame_start(); }
    table frame_diff_t { actions = { frame_diff; } default_action = frame_diff(); }
    /* The lowest queue whose bit differs in meta.diff (entries from the control plane). */
    table changed_queue {
        key = { meta.diff : ternary; }
        actions = { note_change; no_change; }
        default_action = no_change();
        size = 32;
    }
    table resubmit_change_t { actions = { resubmit_change; } default_action = resubmit_change(); }
    table apply_start_t { actions = { apply_start; } default_action = apply_start(); }
    table apply_shift_t { actions = { apply_shift; } default_action = apply_shift(); }
    table apply_bit_t { actions = { apply_bit; } default_action = apply_bit(); }
    /* The register arrays several paths share are each applied once, by one table choosing
     * the operation by a key. */
    action none() { }
    table queue_paused_t {
        key = { meta.qp_op : exact; }
        actions = { read_paused; apply_record; none; }
        default_action = none();
        const entries = {
            1: read_paused();
            2: apply_record();
        }
        size = 4;
    }
    action edge_op() { meta.pb_op = 2; }
    table edge_op_t { actions = { edge_op; } default_action = edge_op(); }
    table pause_bits_t {
        key = { meta.pb_op : exact; }
        actions = { read_bits; mark_bits; none; }
        default_action = none();
        const entries = {
            1: read_bits();
            2: mark_bits();
        }
        size = 4;
    }
    table apply_arg_t { actions = { apply_arg; } default_action = apply_arg(); }
    table apply_mask_t { actions = { apply_mask; } default_action = apply_mask(); }

    /* Each path (data packet, dequeue record, pktgen frame, received frame and its
     * resubmitted pass) first sets its flags; the tables that touch a register array
     * shared by several paths are applied once, at the top level. */
    apply {
        if (hdr.gen_first.isValid()) {
            if (hdr.deq_rest.isValid()) {
                record_start_t.apply();
            } else {
                refresh_port.apply();
            }
        } else if (hdr.bfc.isValid()) {
            if (hdr.bfc_apply.isValid()) {
                apply_start_t.apply();
                apply_shift_t.apply();
                apply_bit_t.apply();
                apply_arg_t.apply();
                apply_mask_t.apply();
            } else {
                frame_start_t.apply();
            }
        } else if (!hdr.ipv4.isValid()) {
            not_ipv4.apply();
        } else if (hdr.ipv4.ttl <= 1) {
            ttl_expired.apply();
        } else {
            ipv4_host.apply();
            data_start_t.apply();
            tag_t.apply();
        }
        if (meta.flow == 1) {
            touch_last_t.apply();
            flow_size_t.apply();
            pause_index_t.apply();
            pause_slot_t.apply();
            if (meta.is_data == 1) {
                port_key_t.apply();
            }
        }
        queue_paused_t.apply();
        if (meta.frame == 1) {
            frame_diff_t.apply();
            changed_queue.apply();
            if (meta.changed == 1) {
                resubmit_change_t.apply();
            }
        }
        if (meta.is_data == 1) {
            read_busy_t.apply();
            combine_t.apply();
            active_t.apply();
            halves_t.apply();
            bytes_t.apply();
            popcount0.apply();
            popcount1.apply();
            popcount2.apply();
            popcount3.apply();
            sum_pairs_t.apply();
            sum_all_t.apply();
            threshold.apply();
            hashed_queue.apply();
            first_free.apply();
            /* §3.3.1: an entry with no packet here, never touched or idle more than
             * STICKY_NS, takes a new queue. */
            if (meta.size_before == 0) {
                if (meta.seen == 0) {
                    assign_new.apply();
                } else if (meta.idle > STICKY_NS) {
                    reassign_t.apply();
                }
            }
            flow_queue_t.apply();
            queue_t.apply();
            read_depth_t.apply();
            /* §3.3.2: pause the upstream queue above Th, for a flow with a packet here. */
            if (meta.size_before >= 1) {
                if (meta.depth > meta.th) {
                    decide_pause_t.apply();
                }
            }
        }
        if (meta.counted == 1) {
            count_pause_t.apply();
            pause_edge_t.apply();
            if (meta.edge == 0) {
                edge_op_t.apply();
                if (meta.is_data == 1) {
                    issued_t.apply();
                } else {
                    resume_t.apply();
                }
            }
        }
        pause_bits_t.apply();
        if (meta.pb_op == 1) {
            fill_bitmap_t.apply();
        }
    }
}

/* The egress parser: a dequeue record's copy starts with its mirror header (§4), whose
 * first field, the record's marker, tells it apart; every other packet parses as in the
 * ingress (no packet in egress comes from a pktgen port or is resubmitted). */
parser EgressParser(packet_in pkt, out bfc_headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bfc_deq_h>().kind) {
            RECORD_MARKER: parse_record_copy;
            default: parse_eth;
        }
    }
    /* The copy's egress pass: its mirror header only. */
    state parse_record_copy { pkt.extract(hdr.bfc_deq); transition accept; }
    PARSE_FRAME(hdr)
}

/* Egress: data packets leave untagged, with their queue in the identification field (the
 * next hop's upstream queue), and a record of their departure is mirrored to the
 * recirculation port of the pipe they entered (session = that pipe). */
control Egress(inout bfc_headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action depart() {
        hdr.bfc_tag.setInvalid();
        hdr.ethernet.ether_type = hdr.bfc_tag.ether_type;
        hdr.ipv4.identification = (bit<16>) hdr.bfc_tag.queue;
        hdr.bfc_deq.kind = RECORD_MARKER;
        hdr.bfc_deq.in_port = hdr.bfc_tag.in_port;
        hdr.bfc_deq.uq = hdr.bfc_tag.uq;
        hdr.bfc_deq.caused = hdr.bfc_tag.caused;
        hdr.bfc_deq.fidx = hdr.bfc_tag.fidx;
        eg_dprsr_md.mirror_type = RECORD_MIRROR_TYPE;
    }
    action record_session() { meta.session = (bit<8>) (hdr.bfc_tag.in_port >> 7); }
    table record_session_t { actions = { record_session; } default_action = record_session(); }
    table depart_t { actions = { depart; } default_action = depart(); }
    apply {
        if (hdr.bfc_tag.isValid()) {
            record_session_t.apply();
            depart_t.apply();
        }
    }
}

control EgressDeparser(packet_out pkt, inout bfc_headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == RECORD_MIRROR_TYPE) {
            mirror.emit<bfc_deq_h>(meta.session, hdr.bfc_deq);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser(), Ghost()) pipe;
/* The report's line-rate budget: each data packet recirculates and mirrors one record. */
@t2sim_overhead(RECORD_BYTES, RECORD_BYTES)
Switch(pipe) main;
