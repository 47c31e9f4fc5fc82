/* mutex.h: what the condition variable needs to know about a mutex. */
#ifndef WEFT_SYNC_MUTEX_H
#define WEFT_SYNC_MUTEX_H

#include <stdint.h>

#include "weft.h"

/* 1 if m is locked by owner (a weft__sync_owner() token). Any thread. */
int weft__mutex_held(weft_mutex *m, uintptr_t owner);

/* weft_dump's deadlock report (observe/) reads a mutex's state word, the
 * first 8 bytes of its storage, by itself (it must survive a mutex freed
 * under its feet); this decodes the value read: the id of the user thread
 * that holds it, 0 when free or held by a plain kernel thread. */
uint64_t weft__mutex_owner_id(uint64_t word);

#endif
