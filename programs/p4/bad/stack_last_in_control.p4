#include <t2na.p4>
#include "../include/headers.p4"
struct stack_headers_t { ethernet_h ethernet; vlan_h[2] vlan; }
control C(inout stack_headers_t hdr) {
    action a() { hdr.vlan.last.vid = 1; }
    apply { a(); }
}
