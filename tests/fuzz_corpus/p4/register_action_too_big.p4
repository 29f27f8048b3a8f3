# 0 "programs/p4/bad/register_action_too_big.p4"
# 0 "<built-in>"
# 0 "<command-line>"
# 1 "programs/p4/bad/register_action_too_big.p4"
# 1 "programs/p4/bad/common.p4" 1
/* What every program of the broken corpus shares: t2na, the corpus headers, an ingress
 * parser and deparser, the empty egress; each file writes its control `Ingress` and ends
 * with MAIN. */
# 1 "pipeline/p4include/t2na.p4" 1
/* t2na.p4 for t2sim: Tofino2 Native Architecture (T2NA, arch "T2NA" version 1.0.1).
 * Chip-specific widths from Intel's tofino2_specs.p4 (public): 9-bit ports, 7-bit queue
 * ids, 8-bit mirror session ids; 4-bit mirror type. */



typedef bit<9> PortId_t;
typedef bit<16> MulticastGroupId_t;
typedef bit<7> QueueId_t;
typedef bit<4> MirrorType_t;
typedef bit<8> MirrorId_t;
typedef bit<3> ResubmitType_t;
typedef bit<3> DigestType_t;
typedef bit<16> ReplicationId_t;
typedef bit<16> L1ExclusionId_t;
typedef bit<9> L2ExclusionId_t;




# 1 "pipeline/p4include/tofino_common.p4" 1
/* Declarations shared by t2sim's tna.p4 and t2na.p4: the intrinsic metadata, externs and
 * packages of Intel's Tofino Native Architectures, written for t2sim from the public
 * architecture files (p4lang/p4c backends/tofino/bf-p4c/p4include): the same names, field
 * widths and signatures, without padding fields. The including file first defines
 * PortId_t, QueueId_t, MirrorId_t and friends for its chip. */



# 1 "pipeline/p4include/core.p4" 1
/* core.p4 for t2sim: the P4-16 core library declarations (P4-16 spec, section "core
 * library"), written for t2sim's front end. Names and signatures follow the spec. */



error { NoError, PacketTooShort, NoMatch, StackOutOfBounds, HeaderTooShort,
        ParserTimeout, ParserInvalidArgument }

/* The packet a parser reads and a deparser writes. */
extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

extern packet_out {
    void emit<T>(in T hdr);
}

extern void verify(in bool check, in error toSignal);

/* The action a table runs when nothing else is said. */
action NoAction() {}

match_kind { exact, ternary, lpm }
# 10 "pipeline/p4include/tofino_common.p4" 2

enum MeterType_t { PACKETS, BYTES }
enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }
enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }
enum SelectorMode_t { FAIR, RESILIENT }
enum HashAlgorithm_t { IDENTITY, RANDOM, XOR8, XOR16, XOR32, CRC8, CRC16, CRC32, CRC64,
                       CUSTOM }

match_kind { range, selector, dleft_hash, atcam_partition_index }

/* Ingress intrinsic metadata (set by the chip before the ingress parser). */
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag;
    bit<2> packet_version;
    PortId_t ingress_port;
    bit<48> ingress_mac_tstamp;
}

/* What the ingress tells the traffic manager. */
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port;
    bit<1> bypass_egress;
    bit<1> deflect_on_drop;
    bit<3> ingress_cos;
    QueueId_t qid;
    bit<3> icos_for_copy_to_cpu;
    bit<1> copy_to_cpu;
    bit<2> packet_color;
    bit<1> disable_ucast_cutthru;
    bit<1> enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;
    MulticastGroupId_t mcast_grp_b;
    bit<13> level1_mcast_hash;
    bit<13> level2_mcast_hash;
    L1ExclusionId_t level1_exclusion_id;
    L2ExclusionId_t level2_exclusion_id;
    bit<16> rid;
}

struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;
    DigestType_t digest_type;
    ResubmitType_t resubmit_type;
    MirrorType_t mirror_type;
    bit<1> mirror_io_select;
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;
    bit<32> adv_flow_ctl;
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
    bit<1> pktgen;
    bit<14> pktgen_address;
    bit<10> pktgen_length;
}

/* Tofino2's ghost thread: queue-depth updates from the traffic manager. */
header ghost_intrinsic_metadata_t {
    bit<1> ping_pong;
    bit<18> qlength;
    bit<11> qid;
    bit<2> pipe_id;
}

/* Egress intrinsic metadata (set by the traffic manager before the egress parser). */
header egress_intrinsic_metadata_t {
    PortId_t egress_port;
    bit<19> enq_qdepth;
    bit<2> enq_congest_stat;
    bit<32> enq_tstamp;
    bit<19> deq_qdepth;
    bit<2> deq_congest_stat;
    bit<8> app_pool_congest_stat;
    bit<32> deq_timedelta;
    bit<16> egress_rid;
    bit<1> egress_rid_first;
    QueueId_t egress_qid;
    bit<3> egress_cos;
    bit<1> deflection_flag;
    bit<16> pkt_length;
}

struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

struct egress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;
    MirrorType_t mirror_type;
    bit<1> coalesce_flush;
    bit<7> coalesce_length;
    bit<1> mirror_io_select;
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;
    bit<32> adv_flow_ctl;
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
}

struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
    bit<1> force_tx_error;
}

/* Packet generator header (Tofino2 layout: 6 bytes). */
header pktgen_timer_header_t {
    bit<2> pipe_id;
    bit<2> _pad1;
    bit<4> app_id;
    bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

/* Externs. The front end knows their methods by name (docs/p4.md says which it lowers). */
extern Checksum { Checksum(); void add<T>(in T data); void subtract<T>(in T data);
                  bool verify(); bit<16> get(); bit<16> update<T>(in T data); }
extern ParserCounter { ParserCounter(); void set<T>(in T value); bool is_zero(); }
extern Hash<W> { Hash(HashAlgorithm_t algo); W get<D>(in D data); }
extern CRCPolynomial<T> { CRCPolynomial(T coeff, bool reversed, bool msb, bool extended,
                                        T init, T xor); }
extern Random<W> { Random(); W get(); }
extern Counter<W, I> { Counter(bit<32> size, CounterType_t type); void count(in I index); }
extern DirectCounter<W> { DirectCounter(CounterType_t type); void count(); }
extern Meter<I> { Meter(bit<32> size, MeterType_t type); bit<8> execute(in I index); }
extern DirectMeter { DirectMeter(MeterType_t type); bit<8> execute(); }
extern Lpf<T, I> { Lpf(bit<32> size); T execute(in T val, in I index); }
extern Wred<T, I> { Wred(bit<32> size, bit<8> drop_value, bit<8> no_drop_value); }
extern Register<T, I> { Register(bit<32> size); Register(bit<32> size, T initial_value);
                        T read(in I index); void write(in I index, in T value); }
extern DirectRegister<T> { DirectRegister(); }
extern RegisterParam<T> { RegisterParam(T initial_value); T read(); }
extern RegisterAction<T, I, U> { RegisterAction(Register<T, I> reg);
                                 U execute(in I index);
                                 abstract void apply(inout T value, @optional out U rv); }
extern DirectRegisterAction<T, U> { DirectRegisterAction(DirectRegister<T> reg);
                                    U execute(); }
extern MathUnit<T> { MathUnit(bool invert, int<2> shift, int<6> scale); T execute(in T x); }
extern ActionProfile { ActionProfile(bit<32> size); }
extern ActionSelector { ActionSelector(ActionProfile profile, Hash<_> hash,
                                       SelectorMode_t mode, bit<32> max_group_size,
                                       bit<32> num_groups); }
extern Mirror { Mirror(); void emit(in MirrorId_t session_id);
                void emit<T>(in MirrorId_t session_id, in T hdr); }
extern Resubmit { Resubmit(); void emit(); void emit<T>(in T hdr); }
extern Digest<T> { Digest(); void pack(in T data); }
extern Pktgen { Pktgen(); }

/* The programmable blocks and the packages that hold them. */
parser IngressParserT<H, M>(packet_in pkt, out H hdr, out M ig_md,
    out ingress_intrinsic_metadata_t ig_intr_md,
    @optional out ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm,
    @optional out ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr);
parser EgressParserT<H, M>(packet_in pkt, out H hdr, out M eg_md,
    out egress_intrinsic_metadata_t eg_intr_md,
    @optional out egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr,
    @optional out egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr);
control IngressT<H, M>(inout H hdr, inout M ig_md,
    in ingress_intrinsic_metadata_t ig_intr_md,
    in ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr,
    inout ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    inout ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm,
    @optional in ghost_intrinsic_metadata_t gh_intr_md);
control GhostT(in ghost_intrinsic_metadata_t gh_intr_md);
control EgressT<H, M>(inout H hdr, inout M eg_md,
    in egress_intrinsic_metadata_t eg_intr_md,
    in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr,
    inout egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    inout egress_intrinsic_metadata_for_output_port_t eg_intr_md_for_oport);
control IngressDeparserT<H, M>(packet_out pkt, inout H hdr, in M metadata,
    in ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    @optional in ingress_intrinsic_metadata_t ig_intr_md);
control EgressDeparserT<H, M>(packet_out pkt, inout H hdr, in M metadata,
    in egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    @optional in egress_intrinsic_metadata_t eg_intr_md,
    @optional in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr);

package Pipeline<IH, IM, EH, EM>(IngressParserT<IH, IM> ingress_parser,
    IngressT<IH, IM> ingress, IngressDeparserT<IH, IM> ingress_deparser,
    EgressParserT<EH, EM> egress_parser, EgressT<EH, EM> egress,
    EgressDeparserT<EH, EM> egress_deparser, @optional GhostT ghost);

package Switch<IH0, IM0, EH0, EM0, IH1, IM1, EH1, EM1,
               IH2, IM2, EH2, EM2, IH3, IM3, EH3, EM3>(
    Pipeline<IH0, IM0, EH0, EM0> pipe0, @optional Pipeline<IH1, IM1, EH1, EM1> pipe1,
    @optional Pipeline<IH2, IM2, EH2, EM2> pipe2, @optional Pipeline<IH3, IM3, EH3, EM3> pipe3);
# 22 "pipeline/p4include/t2na.p4" 2
# 5 "programs/p4/bad/common.p4" 2
# 1 "programs/p4/bad/../include/headers.p4" 1
/* Headers the corpus shares, laid out as t2sim's built-in ethernet, ipv4, udp and tcp
 * (so they keep the built-in PHV containers; docs/p4.md), and an 802.1Q tag. */



header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header vlan_h {
    bit<3> pcp;
    bit<1> dei;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<6> diffserv;
    bit<2> ecn;
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

/* Ethernet, IPv4 by ether type, UDP or TCP by protocol: t2sim's built-in graph. */
# 75 "programs/p4/bad/../include/headers.p4"
struct l3_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    tcp_h tcp;
}
# 6 "programs/p4/bad/common.p4" 2
# 1 "programs/p4/bad/../include/no_egress.p4" 1
/* An egress that parses nothing, runs no tables and emits nothing (the packet passes
 * through unchanged): EgressParser, Egress and EgressDeparser for programs that work in
 * ingress only. */



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
# 7 "programs/p4/bad/common.p4" 2

struct metadata_t {
    bit<16> idx;
    bit<8> small;
    bit<32> count;
}

parser IngressParser(packet_in pkt, out l3_headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(32w192);
        transition parse_ethernet;
    }
    state parse_ethernet { pkt.extract(hdr.ethernet); transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; } } state parse_ipv4 { pkt.extract(hdr.ipv4); transition select(hdr.ipv4.protocol) { 17: parse_udp; 6: parse_tcp; default: accept; } } state parse_udp { pkt.extract(hdr.udp); transition accept; } state parse_tcp { pkt.extract(hdr.tcp); transition accept; }
}

control IngressDeparser(packet_out pkt, inout l3_headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
# 2 "programs/p4/bad/register_action_too_big.p4" 2
control Ingress(inout l3_headers_t hdr, inout metadata_t meta, in ingress_intrinsic_metadata_t ig_intr_md, in ingress_intrinsic_metadata_from_parser_t ig_prsr_md, inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md, inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<16>>(1024) r;
    RegisterAction<bit<32>, bit<16>, bit<32>>(r) classify = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (value < 10) {
                value = value + 1;
            } else if (value < 100) {
                value = value + 2;
            } else {
                value = 0;
            }
            rv = value;
        }
    };
    action a() { meta.count = classify.execute(meta.idx); }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(), EgressParser(), Egress(), EgressDeparser()) pipe; Switch(pipe) main;
