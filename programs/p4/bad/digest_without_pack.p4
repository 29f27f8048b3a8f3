#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action a() { ig_dprsr_md.digest_type = 3; }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
