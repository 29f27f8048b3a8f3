#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action again() { ig_dprsr_md.resubmit_type = 2; }
    table t { actions = { again; } default_action = again(); }
    apply { t.apply(); }
}
MAIN
