#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action a() { meta.small = 1; }
    table t { actions = { a; } default_action = a(); }
    apply {
        t.apply();
        if (hdr.ipv4.isValid()) {
            t.apply();
        }
    }
}
MAIN
