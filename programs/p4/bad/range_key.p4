#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    action a() { meta.small = 1; }
    table t {
        key = { hdr.udp.dst_port : range; }
        actions = { a; }
        default_action = a();
    }
    apply { t.apply(); }
}
MAIN
