#include "common.p4"
#if __TARGET_TOFINO__ != 2
#error this program needs Tofino2
#endif
#ifndef NEEDED
#error define NEEDED (-D NEEDED)
#endif
MAIN
