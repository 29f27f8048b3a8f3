#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action a() { meta.small = hdr.ipv4.total_len; }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
