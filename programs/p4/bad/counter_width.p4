#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    Counter<bit<16>, bit<16>>(1024, CounterType_t.BYTES) octets;
    action a() { octets.count(meta.idx); }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
