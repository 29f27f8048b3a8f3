#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    bit<8> x = 3;
    action a() { meta.small = x; }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
