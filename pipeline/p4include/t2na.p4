/* t2na.p4 for t2sim: Tofino2 Native Architecture (T2NA, arch "T2NA" version 1.0.1).
 * Chip-specific widths from Intel's tofino2_specs.p4 (public): 9-bit ports, 7-bit queue
 * ids, 8-bit mirror session ids; 4-bit mirror type. */
#ifndef _T2SIM_T2NA_P4_
#define _T2SIM_T2NA_P4_

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

#define PORT_METADATA_SIZE 32w192
#define PKTGEN_PORT(pipe) ((PortId_t) (pipe << 7 | 6))

#include "tofino_common.p4"

#endif
