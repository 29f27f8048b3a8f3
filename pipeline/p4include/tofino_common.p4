/* Declarations shared by t2sim's tna.p4 and t2na.p4: the intrinsic metadata, externs and
 * packages of Intel's Tofino Native Architectures, written for t2sim from the public
 * architecture files (p4lang/p4c backends/tofino/bf-p4c/p4include): the same names, field
 * widths and signatures, without padding fields. The including file first defines
 * PortId_t, QueueId_t, MirrorId_t and friends for its chip. */
#ifndef _T2SIM_TOFINO_COMMON_P4_
#define _T2SIM_TOFINO_COMMON_P4_

#include <core.p4>

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
/* `predicate`: T2NA's four comparators (TNA names its two cmplo, cmphi); the model's
 * predicate output is bit i for comparator i (docs/p4.md). */
extern RegisterAction<T, I, U> { RegisterAction(Register<T, I> reg);
                                 U execute(in I index);
                                 abstract void apply(inout T value, @optional out U rv);
                                 U predicate(@optional in bool cmp0, @optional in bool cmp1,
                                             @optional in bool cmp2, @optional in bool cmp3); }
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

#endif
