/* mutex.h: what the condition variable needs to know about a mutex. */
#ifndef WEFT_SYNC_MUTEX_H
#define WEFT_SYNC_MUTEX_H

#include <stdint.h>

#include "weft.h"

/* 1 if m is locked by owner (a weft__sync_owner() token). Any thread. */
int weft__mutex_held(weft_mutex *m, uintptr_t owner);

#endif
