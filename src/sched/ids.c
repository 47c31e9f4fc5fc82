/* ids.c: the thread id counter (ids.h). */
#include "sched/ids.h"

_Atomic uint64_t weft__id_next;
