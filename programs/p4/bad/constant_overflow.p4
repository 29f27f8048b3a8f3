#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    table t { actions = { NoAction; } size = (1 << 4294967296) + 600; }
    apply { t.apply(); }
}
MAIN
