#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    Meter<bit<16>>(1024, MeterType_t.PACKETS) rate;
    apply {}
}
MAIN
