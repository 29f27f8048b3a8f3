#include "common.p4"
#include "/dev/zero"
