#include <t2na.p4>
#include "../include/headers.p4"
struct stack_headers_t { ethernet_h ethernet; vlan_h[2] vlan; }
parser P(packet_in pkt, out stack_headers_t hdr) {
    state start { pkt.extract(hdr.ethernet); transition select(hdr.vlan.next.ether_type) { default: accept; } }
}
