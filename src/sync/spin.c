/* spin.c: weft_spin: a ticket lock in one word that never parks nor sleeps.
 *
 * Word: next ticket in the high 32 bits, the ticket now served in the low
 * 32. Lock takes a ticket with one fetch_add on the high half (a carry out
 * of bit 63 is simply lost) and waits for its turn with pause, backing off
 * in proportion to its distance from the head, and yielding the CPU now and
 * then (a kernel thread holding it may have been preempted). Unlock advances
 * the low half with one atomic; only the holder writes it, so it knows when
 * the half wraps and subtracts instead of letting a carry reach the
 * tickets. FIFO: no waiter starves. A user thread must not switch while it
 * holds one (a waiter on the same worker would spin forever); holders are
 * not tracked (one word), so unlock cannot tell a non-owner from the owner
 * and returns EPERM only when the lock is free.
 */
#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>

#include "sync/wait.h"
#include "weft.h"

#define TICKET ((uint64_t)1 << 32)

struct spin {
    _Atomic uint64_t word; /* next << 32 | serving */
};

static_assert(sizeof(struct spin) <= sizeof(weft_spin), "weft_spin storage too small");
static_assert(alignof(struct spin) <= alignof(weft_spin), "weft_spin storage misaligned");

static inline struct spin *impl(weft_spin *s)
{
    return (struct spin *)(void *)s->weft_private_;
}

int weft_spin_init(weft_spin *s)
{
    if (!s)
        return EINVAL;
    *s = (weft_spin)WEFT_SPIN_INIT;
    return 0;
}

int weft_spin_lock(weft_spin *s)
{
    if (!s)
        return EINVAL;
    struct spin *sp = impl(s);
    /* acquire: if the lock was free, pairs with the release of the last
     * unlock. */
    uint64_t v = atomic_fetch_add_explicit(&sp->word, TICKET, memory_order_acquire);
    uint32_t mine = (uint32_t)(v >> 32);
    uint32_t serving = (uint32_t)v;
    unsigned rounds = 0;
    while (serving != mine) {
        uint32_t ahead = mine - serving;
        for (uint32_t i = 0; i < ahead; i++)
            weft__cpu_relax();
        if ((++rounds & 1023) == 0)
            sched_yield();
        /* acquire: pairs with the release of the unlock that serves us. */
        serving = (uint32_t)atomic_load_explicit(&sp->word, memory_order_acquire);
    }
    return 0;
}

int weft_spin_trylock(weft_spin *s)
{
    if (!s)
        return EINVAL;
    struct spin *sp = impl(s);
    uint64_t v = atomic_load_explicit(&sp->word, memory_order_relaxed);
    if ((uint32_t)(v >> 32) != (uint32_t)v)
        return EBUSY;
    /* acquire: pairs with the release of the last unlock. */
    if (!atomic_compare_exchange_strong_explicit(&sp->word, &v, v + TICKET, memory_order_acquire,
                                                 memory_order_relaxed))
        return EBUSY;
    return 0;
}

int weft_spin_unlock(weft_spin *s)
{
    if (!s)
        return EINVAL;
    struct spin *sp = impl(s);
    /* relaxed: the holder is the only writer of the low half. */
    uint64_t v = atomic_load_explicit(&sp->word, memory_order_relaxed);
    if ((uint32_t)(v >> 32) == (uint32_t)v)
        return EPERM;
    /* release: publishes the critical section; pairs with the acquire of
     * the next ticket holder. */
    if ((uint32_t)v == UINT32_MAX)
        atomic_fetch_sub_explicit(&sp->word, UINT32_MAX, memory_order_release);
    else
        atomic_fetch_add_explicit(&sp->word, 1, memory_order_release);
    return 0;
}
