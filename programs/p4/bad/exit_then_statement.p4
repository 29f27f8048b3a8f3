#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action a() { meta.small = 1; exit; meta.idx = 2; }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
