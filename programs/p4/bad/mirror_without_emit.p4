#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action copy() { ig_dprsr_md.mirror_type = 2; }
    table t { actions = { copy; } default_action = copy(); }
    apply { t.apply(); }
}
MAIN
