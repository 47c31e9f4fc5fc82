/* wait.h: the wait word, the waiter record and wait queue every sync object parks on, and the wait policy.
 *
 * The design (why one word per waiter, the phases) is the block at the
 * top of wait.c; the word itself and the kernel-thread wait (spin → UMWAIT
 * → futex) are os/kwait.h's. In short:
 *
 *  - A waiter owns a record on its own stack: struct weft__waiter. Its word
 *    goes WAITING → (WAKING →) WOKEN, or WAITING → TIMEDOUT; bit 0
 *    (SLEEPER) says the waiter is parked (user thread) or asleep on the
 *    futex (kernel thread) and the waker must wake it.
 *  - An object decides under its own lock that a thread must wait, links
 *    the record in its queue, drops its lock, then calls
 *    weft__waiter_block(). The waker unlinks the record under the object's
 *    lock and calls weft__waiter_wake() (or claim under the lock, wake
 *    after it). The record is the only thing the waker touches after the
 *    object's lock is released.
 */
#ifndef WEFT_SYNC_WAIT_H
#define WEFT_SYNC_WAIT_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/base.h"
#include "base/fifo.h"
#include "os/kwait.h"
#include "thread/thread.h" /* WEFT__WAIT_*, for weft__waiter_init */

struct weft_thread;

/* Spins while (*word & mask) == value (acquire loads), in the manner of the
 * calling thread: a user thread only with more than one worker and only
 * while its worker has nothing else ready; none under WEFT_WAIT=futex; at
 * most budget_ns. For objects whose waiters can watch a shared word before
 * they queue a record. Returns WEFT__SPIN_HIT when the word changed,
 * WEFT__SPIN_MISS when the budget ran out, WEFT__SPIN_NONE when spinning
 * was not allowed or was cut short. */
unsigned weft__spin_while(_Atomic uint64_t *word, uint64_t mask, uint64_t value,
                          uint64_t budget_ns);

/* ---- waiter records and queues -------------------------------------------- */

struct weft__waiter {
    struct weft__waiter *next;  /* under the object's lock while queued; the waker
                                   reads it before it wakes this record */
    struct weft__waiter *prev;  /* under the object's lock while queued */
    struct weft_thread *thread; /* the waiter, NULL for a plain kernel thread; set
                                   before queuing, read-only afterwards */
    _Atomic uint32_t word;      /* the wait word above; the futex word of a kernel waiter */
    uint16_t spin;              /* the waiter's own: how its spin phase ended (WEFT__SPIN_*) */
    uint8_t kind;               /* WEFT__WAIT_*: what it waits on; set by init */
    uintptr_t data;             /* object-specific: set by the waiter before queuing, or
                                   by the waker before it wakes the record */
};

/* struct weft__waitq, a FIFO of waiters (base/fifo.h: weft__waitq_push,
 * _pop, _remove, _take_all, ...). All fields under the owning object's lock. */
WEFT__FIFO(weft__waitq, weft__waitq, struct weft__waiter)

/* Prepares a record for the calling thread (user or kernel); kind
 * (WEFT__WAIT_*, thread/thread.h) names the object for weft_dump. */
void weft__waiter_init(struct weft__waiter *w, uint8_t kind);

/* Waits until the record is woken (or timed out); returns the final word
 * and leaves the spin verdict in w->spin. A user thread spins on its word
 * for up to spin_ns (only when there is more than one worker, since on one
 * the waker cannot run meanwhile, and only while its worker has no other
 * thread ready; none under WEFT_WAIT=futex), then parks, freeing its
 * worker. A kernel thread follows the policy through weft__wait_word with
 * the same spin budget and the deadline if not NULL. A user thread's deadline
 * is the caller's business: arm a timer (timer.h) that calls
 * weft__waiter_expire. */
uint32_t weft__waiter_block(struct weft__waiter *w, uint64_t spin_ns,
                            const struct timespec *deadline, int realtime);

/* Wakes a record the caller has unlinked (under the object's lock or after
 * it), for waits that cannot time out, or one it claimed (the second step
 * of weft__waiter_claim, below): final value WOKEN, and the wake-up. The
 * record may vanish as soon as this returns; read w->next before. Any
 * thread. */
void weft__waiter_wake(struct weft__waiter *w);

/* Wakes a chain of records taken with weft__waitq_take_all, in order, for
 * waits that cannot time out. Each next is read before its record is woken
 * (a woken record may vanish); the records after it stay valid until woken. */
static inline void weft__waiter_wake_list(struct weft__waiter *w)
{
    while (w) {
        struct weft__waiter *next = w->next;
        weft__waiter_wake(w);
        w = next;
    }
}

/* Two-step waking for records that may time out, or when the waker walks a
 * chain after dropping the object's lock: claim under the object's lock
 * (WAITING → WAKING; returns 0 if the waiter already timed out, and then
 * the record must be left alone), then weft__waiter_wake after the lock
 * is dropped. Between the two the waiter cannot return, so the record,
 * w->next included, stays valid. */
int weft__waiter_claim(struct weft__waiter *w);

/* The timer's side of a user thread's timed wait: WAITING → TIMEDOUT and
 * readies the thread if it is parked. Returns 1 if the timeout won. */
int weft__waiter_expire(struct weft__waiter *w);

/* ---- adaptive spin budgets ------------------------------------------------------
 * An object may keep a hint word (zero-initialised: full budget) that
 * halves its waiters' spin budget after each miss and doubles it back after
 * each hit, so spinning fades where waits are long (or the machine is
 * oversubscribed) and stays where waits are short. Racy by design: relaxed
 * loads and stores, a lost update only delays the adaptation. */
enum { WEFT__SPIN_SHIFT_MAX = 6 };

static inline uint64_t weft__spin_budget(_Atomic uint32_t *hint, uint64_t max_ns)
{
    /* relaxed: a heuristic, see above. */
    return max_ns >> atomic_load_explicit(hint, memory_order_relaxed);
}

static inline void weft__spin_learn(_Atomic uint32_t *hint, unsigned verdict)
{
    uint32_t s = atomic_load_explicit(hint, memory_order_relaxed);
    if (verdict == WEFT__SPIN_MISS && s < WEFT__SPIN_SHIFT_MAX)
        atomic_store_explicit(hint, s + 1, memory_order_relaxed);
    else if (verdict == WEFT__SPIN_HIT && s > 0)
        atomic_store_explicit(hint, s - 1, memory_order_relaxed);
}

/* ---- the objects' internal locks ------------------------------------------------ */

/* An object's internal lock: base.h's weft__lock (all-zero: free), held
 * for a few instructions on slow paths, never across a switch or a system
 * call. A waiter backs off (weft__sync_backoff) rather than spin flat out:
 * the holder may be a kernel thread that lost its CPU. */
static inline void weft__sync_lock(weft__lock *l);
static inline void weft__sync_unlock(weft__lock *l);

/* ---- helpers for the objects' internal locks ------------------------------------ */

/* One step of a wait for a lock (or lock bit, sync/lbit.h) held for a few
 * instructions: pause, and every 64 steps sched_yield (the holder may have
 * lost its CPU). */
void weft__sync_backoff(unsigned *spins);

/* The caller's identity as a lock owner: from its id for a user thread
 * (weft_self(), so inside weft_blocking the caller), never reused by a
 * later thread; else a per-kernel-thread token. 8-byte aligned, never 0. */
uintptr_t weft__sync_owner(void);
/* The thread id in an owner token of weft__sync_owner, 0 for a plain
 * kernel thread's. */
uint64_t weft__sync_owner_id(uintptr_t owner);

static inline void weft__sync_lock(weft__lock *l)
{
    unsigned spins = 0;
    uint32_t z = 0;
    /* A CAS first, as the lock is mostly free: one step where
     * weft__lock_try takes two (its load spares a held lock's line a
     * write, which the backoff loop does here). acquire: pairs with the
     * release in weft__lock_release. */
    while (!atomic_compare_exchange_weak_explicit(&l->v, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        do
            weft__sync_backoff(&spins);
        while (atomic_load_explicit(&l->v, memory_order_relaxed));
        z = 0;
    }
}

static inline void weft__sync_unlock(weft__lock *l)
{
    weft__lock_release(l);
}

#endif
