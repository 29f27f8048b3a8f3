#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action a() { meta.count = meta.count |+| 1; }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
