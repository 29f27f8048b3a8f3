#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    Register<bit<32>, bit<48>>(1024) r;
    RegisterAction<bit<32>, bit<48>, bit<32>>(r) bump = {
        void apply(inout bit<32> v) { v = v + 1; }
    };
    action count() { bump.execute(meta.idx); }
    table t { actions = { count; } default_action = count(); }
    apply { t.apply(); }
}
MAIN
