/* tna.p4 for t2sim: Tofino Native Architecture (TNA, arch "TNA" version 1.0.1).
 * Tofino1 widths from Intel's tofino1_specs.p4 (public): 9-bit ports, 5-bit queue ids,
 * 10-bit mirror session ids, 3-bit mirror type. A TNA program runs on t2sim's Tofino2
 * model where the construct is the same (docs/p4.md). */
#ifndef _T2SIM_TNA_P4_
#define _T2SIM_TNA_P4_

typedef bit<9> PortId_t;
typedef bit<16> MulticastGroupId_t;
typedef bit<5> QueueId_t;
typedef bit<3> MirrorType_t;
typedef bit<10> MirrorId_t;
typedef bit<3> ResubmitType_t;
typedef bit<3> DigestType_t;
typedef bit<16> ReplicationId_t;
typedef bit<16> L1ExclusionId_t;
typedef bit<9> L2ExclusionId_t;

#define PORT_METADATA_SIZE 32w64

#include "tofino_common.p4"

#endif
