/* ticket.h: the one ticket lock (weft_spin, the seed's MLTP_LOCK_SPIN): a
 * FIFO spin lock in one 64-bit word that never parks nor sleeps.
 *
 * Word: next ticket in the high 32 bits, the ticket now served in the low
 * 32. Lock takes a ticket with one fetch_add on the high half (a carry out
 * of bit 63 is simply lost) and waits for its turn with pause, backing off
 * in proportion to its distance from the head, and yielding the CPU every
 * WEFT__TICKET_YIELD_ROUNDS polls (a kernel thread holding it may have lost
 * its CPU; spinning through a time slice helps nobody). Unlock advances the
 * low half with one atomic; only the holder writes it, so it knows when the
 * half wraps and subtracts instead of letting a carry reach the tickets.
 * Holders are not tracked: unlock cannot tell a non-owner from the owner,
 * and reports misuse only when the lock is free.
 */
#ifndef WEFT_SYNC_TICKET_H
#define WEFT_SYNC_TICKET_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"

#define WEFT__TICKET              ((uint64_t)1 << 32)
#define WEFT__TICKET_YIELD_ROUNDS 1024u

static inline void weft__ticket_lock(_Atomic uint64_t *word)
{
    /* acquire: if the lock was free, pairs with the release of the last
     * unlock. */
    uint64_t v = atomic_fetch_add_explicit(word, WEFT__TICKET, memory_order_acquire);
    uint32_t mine = (uint32_t)(v >> 32);
    uint32_t serving = (uint32_t)v;
    unsigned rounds = 0;
    while (serving != mine) {
        uint32_t ahead = mine - serving;
        for (uint32_t i = 0; i < ahead; i++)
            weft__cpu_relax();
        if (++rounds % WEFT__TICKET_YIELD_ROUNDS == 0)
            sched_yield();
        /* acquire: pairs with the release of the unlock that serves us. */
        serving = (uint32_t)atomic_load_explicit(word, memory_order_acquire);
    }
}

/* 1 if taken, 0 if held by someone. */
static inline int weft__ticket_trylock(_Atomic uint64_t *word)
{
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
    if ((uint32_t)(v >> 32) != (uint32_t)v)
        return 0;
    /* acquire: pairs with the release of the last unlock. */
    return atomic_compare_exchange_strong_explicit(word, &v, v + WEFT__TICKET, memory_order_acquire,
                                                   memory_order_relaxed);
}

/* 0, or -1 when the lock is free (nothing to unlock). */
static inline int weft__ticket_unlock(_Atomic uint64_t *word)
{
    /* relaxed: the holder is the only writer of the low half. */
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
    if ((uint32_t)(v >> 32) == (uint32_t)v)
        return -1;
    /* release: publishes the critical section; pairs with the acquire of
     * the next ticket holder. */
    if ((uint32_t)v == UINT32_MAX)
        atomic_fetch_sub_explicit(word, UINT32_MAX, memory_order_release);
    else
        atomic_fetch_add_explicit(word, 1, memory_order_release);
    return 0;
}

#endif
