/* barrier.c: weft_barrier: arrivals count on one word with one atomic each; waiters watch that word, and only those that stop watching queue a record under a lock.
 *
 * Word: episode << 32 | SLEEPERS | arrived.
 *   arrived (bits 0-30): arrivals in the current episode;
 *   SLEEPERS (bit 31): some waiter of this episode queued a record (parked
 *   or sleeping) and must be woken through the queue;
 *   episode (bits 32-63): bumped by the last arriver; wraps harmlessly,
 *   waiters only compare it for equality.
 * Arrive: one fetch_add. The count-th arrival gets
 * WEFT_BARRIER_SERIAL_THREAD and moves the word to the next episode with
 * no arrivals and no SLEEPERS: with one CAS when SLEEPERS is clear (then
 * the queue is empty), else under the lock, where it also detaches the
 * queue, waking the records after dropping the lock. Any other arrival
 * watches the word for a new episode (weft__spin_while: an adaptive budget
 * up to BARRIER_SPIN_NS, a user thread only while its worker has nothing
 * else to run), then, if it must stop watching, takes the lock, re-checks
 * the episode, sets SLEEPERS, queues a record and blocks on it.
 * Invariant (under the lock): the queue is not empty only if SLEEPERS is
 * set, and it holds records of the current episode only.
 * No lost wake-up: the check-set-queue runs under the lock, and the last
 * arriver either finds SLEEPERS clear in its CAS (so nobody is queued) or
 * changes the episode under the lock, so either the waiter sees the new
 * episode, or its record is queued before the last arriver empties the
 * queue. Episodes never mix: a waiter of the next episode can queue only
 * after the change, which empties the queue in the same critical section.
 * With two threads an episode costs each one atomic on one shared line
 * plus the waiter's reload; the first design (a lock and a queued record
 * for every waiter, woken one by one) cost a lock round trip and a
 * record write per waiter even when nobody slept, and made the last
 * arriver touch N-1 lines.
 * Spinning pays because in bulk-synchronous code the others usually arrive
 * within microseconds, and a cross-core wake-up through the futex (or
 * through an idle worker) costs more than that; the per-barrier budget is
 * halved after each wait the spin did not catch and doubled back after
 * each one it did.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>

#include "sched/sched.h"
#include "sync/wait.h"
#include "weft.h"

#define BARRIER_SPIN_NS 50000u

#define ARRIVED   ((uint64_t)0x7fffffff)
#define SLEEPERS  ((uint64_t)1 << 31)
#define EPISODE   (~(uint64_t)0xffffffff)
#define MAX_COUNT 0x7fffffffu

struct barrier {
    _Atomic uint64_t word;      /* episode << 32 | SLEEPERS | arrived; see above */
    uint32_t count;             /* set by init, read-only while in use */
    weft__lock lock;            /* internal lock (weft__sync_lock) over q and SLEEPERS */
    struct weft__waitq q;       /* under lock: records of the current episode */
    _Atomic uint32_t spin_hint; /* adaptive spin budget (weft__spin_learn); racy by design */
};

WEFT__STORAGE(impl, struct barrier, weft_barrier, weft_private_)

int weft_barrier_init(weft_barrier *b, unsigned count)
{
    if (!b || count == 0 || count > MAX_COUNT)
        return EINVAL;
    *b = (weft_barrier){ { 0 } };
    impl(b)->count = count;
    return 0;
}

int weft_barrier_destroy(weft_barrier *b)
{
    if (!b)
        return EINVAL;
    /* relaxed: a snapshot; arrivals after it are the caller's bug. */
    return atomic_load_explicit(&impl(b)->word, memory_order_relaxed) & ARRIVED ? EBUSY : 0;
}

/* The last arrival of episode e: open episode e+1 and wake the sleepers.
 * With SLEEPERS set the episode changes under the lock, together with the
 * detaching of the queue: a waiter of the next episode (one that saw the
 * change and came back) cannot queue before the old records are gone. */
static int release(struct barrier *br, uint64_t v)
{
    uint64_t next = (uint64_t)((uint32_t)(v >> 32) + 1) << 32;
    for (;;) {
        if (v & SLEEPERS) {
            weft__sync_lock(&br->lock);
            /* release: as below; under the lock nothing else moves. */
            atomic_store_explicit(&br->word, next, memory_order_release);
            struct weft__waiter *w = weft__waitq_take_all(&br->q);
            weft__sync_unlock(&br->lock);
            weft__waiter_wake_list(w);
            return WEFT_BARRIER_SERIAL_THREAD;
        }
        /* release: publishes every arrival's work to the waiters that see
         * the new episode (pairs with their acquire loads). Fails only if
         * a waiter set SLEEPERS meanwhile. */
        if (atomic_compare_exchange_weak_explicit(&br->word, &v, next, memory_order_release,
                                                  memory_order_relaxed))
            return WEFT_BARRIER_SERIAL_THREAD;
    }
}

int weft_barrier_wait(weft_barrier *b)
{
    if (!b)
        return EINVAL;
    struct barrier *br = impl(b);
    uint32_t count = br->count;
    if (count == 0)
        return EINVAL;
    if (weft__in_task())
        return EPERM; /* a task must not wait (sched.h) */
    /* acq_rel: release publishes this thread's work before its arrival;
     * acquire (for the last arriver) takes everybody else's. */
    uint64_t v = atomic_fetch_add_explicit(&br->word, 1, memory_order_acq_rel) + 1;
    if ((v & ARRIVED) == count)
        return release(br, v);

    uint64_t episode = v & EPISODE;
    unsigned verdict = weft__spin_while(&br->word, EPISODE, episode,
                                        weft__spin_budget(&br->spin_hint, BARRIER_SPIN_NS));
    weft__spin_learn(&br->spin_hint, verdict);
    if (verdict == WEFT__SPIN_HIT)
        return 0;

    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_BARRIER);
    weft__sync_lock(&br->lock);
    /* acquire: as the spin's loads, if the episode already moved on (also
     * on a failed CAS below). Setting SLEEPERS needs no ordering of its
     * own: the record is published by the lock, which the last arriver
     * takes after its CAS has read SLEEPERS. */
    v = atomic_load_explicit(&br->word, memory_order_acquire);
    for (;;) {
        if ((v & EPISODE) != episode) {
            weft__sync_unlock(&br->lock);
            return 0;
        }
        if ((v & SLEEPERS) ||
            atomic_compare_exchange_weak_explicit(&br->word, &v, v | SLEEPERS, memory_order_acquire,
                                                  memory_order_acquire))
            break;
    }
    weft__waitq_push(&br->q, &self);
    weft__sync_unlock(&br->lock);
    weft__waiter_block(&self, 0, NULL, 0);
    return 0;
}
