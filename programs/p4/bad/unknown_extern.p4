#include "common.p4"
control Ingress(INGRESS_PARAMS) {
    Flowlet<bit<16>>(1024) flowlets;
    apply {}
}
MAIN
