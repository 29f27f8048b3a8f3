/* pfc_qcn.p4: the hybrid that Mice/Elephant isolation (Wang, Sun, Salamatian, Li, 2016)
 * argues against (§3-4: PFC's hop-by-hop and QCN's end-to-end control on the same traffic):
 * every packet in one queue, lossless under PFC (the traffic manager's settings, from the
 * scheme's Rust code), with mice_elephant.p4's QCN congestion point on it. */
#define ONE_QUEUE
#include "mice_elephant.p4"
