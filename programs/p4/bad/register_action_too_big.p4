#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    Register<bit<32>, bit<16>>(1024) r;
    RegisterAction<bit<32>, bit<16>, bit<32>>(r) classify = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (value < 10) {
                value = value + 1;
            } else if (value < 100) {
                value = value + 2;
            } else {
                value = 0;
            }
            rv = value;
        }
    };
    action a() { meta.count = classify.execute(meta.idx); }
    table t { actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
MAIN
