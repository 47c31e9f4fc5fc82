/* sem.c: weft_sem: a counting semaphore whose value and waiter bit share one word, with direct hand-off of a unit to the oldest waiter.
 *
 * Word: value << 2 | W | L. L (1) is the internal lock guarding the queue,
 * W (2) says the queue is not empty (exact whenever L is clear). Every CAS
 * expects L clear, so the L holder ends with a plain store.
 * wait: one CAS value → value-1 when the value is positive; otherwise take
 * L, queue a record, set W, wait. post: one CAS value → value+1 when W is
 * clear; otherwise take L, pop the oldest waiter and hand it the unit
 * (the value stays 0), so a waiter that was woken never has to compete
 * again and the value can never be positive while W is set.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>

#include "sched/sched.h"
#include "sync/wait.h"
#include "weft.h"

#define SEM_SPIN_NS 3000u
#define SEM_MAX     0xffffffffu

enum { L = 1, W = 2, ONE = 4 };

struct sem {
    _Atomic uint64_t word;      /* value << 2 | W | L */
    struct weft__waitq q;       /* under L */
    _Atomic uint32_t spin_hint; /* adaptive spin budget (weft__spin_learn); racy by design */
};

WEFT__STORAGE(impl, struct sem, weft_sem, weft_private_)

int weft_sem_init(weft_sem *s, unsigned value)
{
    if (!s || value > SEM_MAX)
        return EINVAL;
    *s = (weft_sem){ { 0 } };
    atomic_init(&impl(s)->word, (uint64_t)value * ONE);
    return 0;
}

int weft_sem_destroy(weft_sem *s)
{
    if (!s)
        return EINVAL;
    /* relaxed: a snapshot; waiters that arrive later are the caller's bug. */
    return atomic_load_explicit(&impl(s)->word, memory_order_relaxed) & (W | L) ? EBUSY : 0;
}

int weft_sem_trywait(weft_sem *s)
{
    if (!s)
        return EINVAL;
    struct sem *sm = impl(s);
    unsigned spins = 0;
    uint64_t v = atomic_load_explicit(&sm->word, memory_order_relaxed);
    for (;;) {
        if (v < ONE)
            return EAGAIN;
        if (v & L) {
            v = weft__sync_unlocked(&sm->word, L, &spins);
            continue;
        }
        /* acquire: takes the unit a post published with release. */
        if (atomic_compare_exchange_weak_explicit(&sm->word, &v, v - ONE, memory_order_acquire,
                                                  memory_order_relaxed))
            return 0;
    }
}

int weft_sem_wait(weft_sem *s)
{
    if (!s)
        return EINVAL;
    struct sem *sm = impl(s);
    unsigned spins = 0;
    uint64_t v = atomic_load_explicit(&sm->word, memory_order_relaxed);
    for (;;) {
        if (v & L) {
            v = weft__sync_unlocked(&sm->word, L, &spins);
            continue;
        }
        if (v >= ONE) {
            /* acquire: takes the unit a post published with release. */
            if (atomic_compare_exchange_weak_explicit(&sm->word, &v, v - ONE, memory_order_acquire,
                                                      memory_order_relaxed))
                return 0;
            continue;
        }
        if (weft__in_task())
            return EPERM; /* a task must not wait (sched.h) */
        /* acquire: takes L; pairs with the release store that dropped it. */
        if (atomic_compare_exchange_weak_explicit(&sm->word, &v, v | L | W, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_SEM);
    weft__waitq_push(&sm->q, &self);
    /* release: drops L and publishes the queue; pairs with post's acquire. */
    atomic_store_explicit(&sm->word, v | W, memory_order_release);
    weft__waiter_block(&self, weft__spin_budget(&sm->spin_hint, SEM_SPIN_NS), NULL, 0);
    weft__spin_learn(&sm->spin_hint, self.spin);
    return 0;
}

int weft_sem_post(weft_sem *s)
{
    if (!s)
        return EINVAL;
    struct sem *sm = impl(s);
    unsigned spins = 0;
    uint64_t v = atomic_load_explicit(&sm->word, memory_order_relaxed);
    for (;;) {
        if (v & L) {
            v = weft__sync_unlocked(&sm->word, L, &spins);
            continue;
        }
        if (!(v & W)) {
            if ((v >> 2) == SEM_MAX)
                return EOVERFLOW;
            /* release: publishes what precedes the post to the waiter
             * that takes this unit. */
            if (atomic_compare_exchange_weak_explicit(&sm->word, &v, v + ONE, memory_order_release,
                                                      memory_order_relaxed))
                return 0;
            continue;
        }
        /* acquire: takes L; pairs with the release store that dropped it. */
        if (atomic_compare_exchange_weak_explicit(&sm->word, &v, v | L, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    struct weft__waiter *w = weft__waitq_pop(&sm->q);
    WEFT_ASSERT(w != NULL && v < ONE);
    /* release: drops L and publishes the queue. The unit itself goes to w
     * through the release of its wake. */
    atomic_store_explicit(&sm->word, weft__waitq_empty(&sm->q) ? 0 : W, memory_order_release);
    weft__waiter_wake(w);
    return 0;
}
