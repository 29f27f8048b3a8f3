#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    Counter<bit<32>, bit<16>>(1024, CounterType_t.PACKETS) packets;
    apply {}
}
MAIN
