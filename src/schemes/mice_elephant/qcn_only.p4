/* qcn_only.p4: Mice/Elephant isolation's QCN baseline (Wang, Sun, Salamatian, Li, 2016,
 * §3: QCN alone, Fig. 6): every packet in one lossy queue (no PFC: the traffic manager's
 * settings, from the scheme's Rust code), with mice_elephant.p4's QCN congestion point. The
 * program is pfc_qcn.p4's. */
#define ONE_QUEUE
#include "mice_elephant.p4"
