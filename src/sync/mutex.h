/* mutex.h: what the condition variable needs to know about a mutex. */
#ifndef WEFT_SYNC_MUTEX_H
#define WEFT_SYNC_MUTEX_H

#include <stdatomic.h>
#include <stdint.h>

#include "weft.h"

/* 1 if m is locked by owner (a weft__sync_owner() token). Any thread. */
int weft__mutex_held(weft_mutex *m, uintptr_t owner);

/* The uncontended lock, weft_mutex_lock's first step: one CAS of m's state
 * word (its first 8 bytes: mutex.c) from free to owner (a
 * weft__sync_owner() token); 1 if it took m. Inline for a caller that
 * chooses its own wait when it fails (the drop-in's pthread_mutex_lock). */
static inline int weft__mutex_take_free(weft_mutex *m, uintptr_t owner)
{
    uint64_t v = 0;
    /* acquire: pairs with the release of the unlock that freed it */
    return atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)(void *)m, &v, owner,
                                                   memory_order_acquire, memory_order_relaxed);
}

/* weft_dump's deadlock report (observe/) reads a mutex's state word, the
 * first 8 bytes of its storage, by itself (it must survive a mutex freed
 * under its feet); this decodes the value read: the id of the user thread
 * that holds it, 0 when free or held by a plain kernel thread. */
uint64_t weft__mutex_owner_id(uint64_t word);

#endif
