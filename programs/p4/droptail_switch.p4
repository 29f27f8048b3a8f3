/* droptail_switch.p4: host routes and nothing else (the TM's tail drop is the scheme). The
 * P4 version of programs/droptail_switch.json. */
#include <t2na.p4>
#include "include/headers.p4"

struct metadata_t {}

#include "include/host_routes.p4"
#include "include/no_egress.p4"

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
