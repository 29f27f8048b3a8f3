#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    DirectCounter<bit<32>>(CounterType_t.PACKETS) hits;
    action a() { hits.count(); }
    table t { key = { hdr.ipv4.dst_addr : exact; } actions = { a; } }
    apply { t.apply(); }
}
MAIN
