#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action stop() { meta.small = 1; exit; }
    action b() { meta.idx = 2; }
    table after { actions = { b; } default_action = b(); }
    apply {
        stop();
        after.apply();
    }
}
MAIN
