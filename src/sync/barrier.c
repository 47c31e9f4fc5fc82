/* barrier.c: weft_barrier: count arrivals under a short lock; the last arriver of an episode takes the queue and wakes it.
 *
 * An episode ends when the count-th thread arrives: it resets the count,
 * takes every queued record (the queue is then empty for the next
 * episode), drops the lock and wakes the records one by one; it is the one
 * that gets WEFT_BARRIER_SERIAL_THREAD. A thread of the next episode may
 * arrive before the last one of this episode has left: it only sees the
 * reset count and an empty queue, so episodes never mix. Barrier waiters
 * cannot time out, so the chain needs no claim step: each record stays
 * valid until its own wake.
 * Waiters spin up to BARRIER_SPIN_NS before parking or sleeping: in bulk-
 * synchronous code the others usually arrive within microseconds, and a
 * cross-core wake-up through the futex (or through an idle worker) costs
 * more than that. The budget adapts per barrier (halved after a wait the
 * spin did not catch, doubled back after one it did), and a user thread
 * stops spinning as soon as another thread is ready on its worker. A single shared episode word was rejected: waiters
 * spinning on one line is cheaper for the last arriver with many waiters,
 * but user threads would still need the queue to park, giving two wake-up
 * paths to keep consistent.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>

#include "sync/wait.h"
#include "weft.h"

#define BARRIER_SPIN_NS 50000u

struct barrier {
    _Atomic uint32_t lock; /* internal lock; weft__sync_lock */
    uint32_t count;        /* set by init; read under lock */
    uint32_t arrived;      /* under lock: arrivals in the current episode */
    _Atomic uint32_t spin_hint; /* adaptive spin budget (weft__spin_learn); racy by design */
    struct weft__waitq q;  /* under lock: this episode's waiters */
};

static_assert(sizeof(struct barrier) <= sizeof(weft_barrier), "weft_barrier storage too small");
static_assert(alignof(struct barrier) <= alignof(weft_barrier), "weft_barrier storage misaligned");

static inline struct barrier *impl(weft_barrier *b)
{
    return (struct barrier *)(void *)b->weft_private_;
}

int weft_barrier_init(weft_barrier *b, unsigned count)
{
    if (!b || count == 0)
        return EINVAL;
    *b = (weft_barrier){ { 0 } };
    impl(b)->count = count;
    return 0;
}

int weft_barrier_destroy(weft_barrier *b)
{
    if (!b)
        return EINVAL;
    struct barrier *br = impl(b);
    weft__sync_lock(&br->lock);
    int busy = br->arrived != 0;
    weft__sync_unlock(&br->lock);
    return busy ? EBUSY : 0;
}

int weft_barrier_wait(weft_barrier *b)
{
    if (!b)
        return EINVAL;
    struct barrier *br = impl(b);
    weft__sync_lock(&br->lock);
    if (br->count == 0) {
        weft__sync_unlock(&br->lock);
        return EINVAL;
    }
    if (++br->arrived == br->count) {
        br->arrived = 0;
        struct weft__waiter *w = weft__waitq_take_all(&br->q);
        weft__sync_unlock(&br->lock);
        while (w) {
            struct weft__waiter *next = w->next; /* before the wake: w may vanish */
            weft__waiter_wake(w);
            w = next;
        }
        return WEFT_BARRIER_SERIAL_THREAD;
    }
    struct weft__waiter self;
    weft__waiter_init(&self);
    weft__waitq_push(&br->q, &self);
    weft__sync_unlock(&br->lock);
    weft__waiter_block(&self, weft__spin_budget(&br->spin_hint, BARRIER_SPIN_NS), NULL, 0);
    weft__spin_learn(&br->spin_hint, self.spin);
    return 0;
}
