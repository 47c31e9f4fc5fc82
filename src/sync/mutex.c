/* mutex.c: weft_mutex: an error-checking, adaptive (spin, then park or sleep) mutex for user and kernel threads alike.
 *
 * One 64-bit word holds the owner token and three bits:
 *   owner | K | W | L      owner: weft__sync_owner() of the holder, 0 = free
 *   L (1): the internal lock guarding the wait queue;
 *   W (2): the queue is not empty (exact whenever L is clear);
 *   K (4): a waiter has been woken and has not yet retried, so unlock need
 *          not wake another one (Go's mutexWoken): one wake-up in flight at
 *          a time, never a thundering herd.
 * Every CAS expects L clear except the L holder's own release, so while L
 * is held the word is frozen and the holder ends with a plain store. The
 * owner never changes while L is held, and "owner == 0" implies L clear.
 *
 * Lock: one CAS 0 → me. Unlock: one CAS me → 0. When they fail: lock
 * spins on the word for up to MUTEX_SPIN_NS (adaptive per mutex, see
 * weft__spin_learn; not for a user thread on a single worker, where the
 * owner cannot run meanwhile), then takes L, sets W,
 * queues a record and waits on it; unlock with W and no K takes L, pops
 * the head, sets K and wakes it. The woken waiter competes again (barging:
 * a running thread that relocks at once keeps its worker instead of
 * switching per critical section) and, if it loses, goes back to the head
 * of the queue. Direct hand-off as the rule was rejected: it serialises
 * every contended critical section behind a context switch. It is kept for
 * the starving (Go's starvation mode, SPEC "Fairness"): unlock hands the
 * mutex straight to a head waiter that has waited more than STARVE_NS
 * (see struct mwaiter's since) (the owner field becomes the waiter's token, K stays
 * clear, and the record says so), so a thread that keeps relocking -- and is preempted
 * while it holds the mutex, which parks every other -- cannot keep it for
 * ever: a newcomer finds it owned and queues behind. The release store
 * that ends unlock's slow path drops ownership and L together, so unlock
 * touches nothing of the mutex after another thread may own (or destroy)
 * it.
 */
#include "sync/mutex.h"

#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>

#include "policy/prio.h"
#include "sched/sched.h"
#include "sync/lbit.h"
#include "sync/wait.h"
#include "weft.h"

/* Pre-queue spin: a few critical sections' worth. */
#define MUTEX_SPIN_NS 2000u
/* A waiter that has waited longer than this (struct mwaiter's since) is
 * handed the mutex at the next unlock that pops it: Go's
 * starvationThresholdNs, at most the quantum unless one below 1 ms is set
 * (the SPEC asks for "longer than the quantum"; the default is 10 ms). */
#define STARVE_NS 1000000u

enum { L = 1, W = 2, K = 4, BITS = 7 };

struct mutex {
    _Atomic uint64_t word;      /* owner | K | W | L; see above */
    struct weft__waitq q;       /* under L */
    _Atomic uint32_t spin_hint; /* adaptive pre-queue spin budget (weft__spin_learn); racy */
};

WEFT__STORAGE(impl, struct mutex, weft_mutex, weft_private_)
_Static_assert(offsetof(struct mutex, word) == 0, "weft__mutex_take_free's word (mutex.h)");

/* A waiter's record in the queue, on its stack. w.data: 0 from
 * weft__waiter_init, 1 once an unlock handed it the mutex (written by that
 * unlock before it wakes the record, read by the waiter after its wake's
 * acquire; the waiter then returns, so it never goes back to 0). */
struct mwaiter {
    struct weft__waiter w; /* first: the queue links the record */
    uintptr_t me;          /* the waiter's owner token; set before queuing */
    uint64_t since;        /* weft__now_ns when it queued behind other waiters, or
                              else when it first lost a retry (was woken and found
                              the mutex taken); 0 before. A lone waiter's wait is a
                              critical section long, so a lightly contended mutex
                              (two threads) never reads the clock. The waiter's;
                              read under L by unlock */
};

static inline uintptr_t owner_of(uint64_t v)
{
    return (uintptr_t)(v & ~(uint64_t)BITS);
}

int weft_mutex_init(weft_mutex *m)
{
    return weft__init_zeroed(m, sizeof *m);
}

int weft_mutex_destroy(weft_mutex *m)
{
    return m ? weft__lbit_destroy(&impl(m)->word) : EINVAL;
}

int weft__mutex_held(weft_mutex *m, uintptr_t owner)
{
    /* relaxed: only the owner itself can make this true or false. */
    return owner_of(atomic_load_explicit(&impl(m)->word, memory_order_relaxed)) == owner;
}

static_assert(offsetof(struct mutex, word) == 0, "weft__mutex_owner_id's readers");

uint64_t weft__mutex_owner_id(uint64_t word)
{
    return weft__sync_owner_id(owner_of(word));
}

/* The longest chain of holders inheritance follows (a cycle is a
 * deadlock: the walk must end). */
#define CHAIN_MAX 16

/* Priority inheritance from a waiter of class c on the mutex held by the
 * thread with id `id`, through the chain of holders (SPEC: transitive):
 * a holder raised while it is parked on another weft_mutex raises that
 * one's holder, and so on. Called under the first mutex's L (its holder
 * cannot change); the later words are read racily, as weft_dump does: a
 * holder woken meanwhile has at worst raised a thread that unlocks soon
 * (it drops the class at that unlock). A waiter that arrives at a holder
 * already raised stops there: the chain beyond was raised with it, or is
 * raised when that holder queues on its own next mutex (lock_slow passes
 * the class it runs at). */
static void inherit(uint64_t id, int c)
{
    /* relaxed: no plug-in pool, no priority in use (a thread whose
     * priority is being set just now has not waited here yet). */
    if (!weft__pool_plugged())
        return;
    for (int depth = 0; id && depth < CHAIN_MAX; depth++) {
        struct weft_thread *h = weft__prio_inherit(id, c);
        if (!h || weft__thread_waits(h) != WEFT__WAIT_MUTEX)
            return;
        const struct mutex *m2 = __atomic_load_n(&h->wait_on, __ATOMIC_RELAXED);
        if (!m2)
            return;
        /* relaxed: a hint, see above. */
        id = weft__sync_owner_id(owner_of(atomic_load_explicit(&m2->word, memory_order_relaxed)));
    }
}

static int can_spin(struct weft__waiter *w)
{
    if (weft__wait_policy() == WEFT__WAIT_FUTEX)
        return 0;
    return w->thread == NULL || weft__nworkers_running() > 1;
}

/* What lock_slow's decision reads. */
struct lock_look {
    uintptr_t me; /* the caller's owner token */
    int woken;    /* 1 once it was woken from the queue: it clears K */
    int spinning; /* 1 while it spins before queuing */
};

/* The word with the caller queued (W), and K cleared by a woken waiter:
 * the next unlock may wake another. */
static inline uint64_t queue_bits(uint64_t v, int woken)
{
    return (v | W) & ~(uint64_t)(woken ? K : 0);
}

/* lock_slow's decision: own it if free; else spin on, or take L to queue. */
static enum weft__lbit_op own_or_queue(uint64_t v, uint64_t *nv, void *look)
{
    struct lock_look *k = look;
    if (owner_of(v) == 0) {
        *nv = k->me | (v & W) | (k->woken ? 0 : (v & K));
        return WEFT__LBIT_SET;
    }
    if (k->spinning)
        return WEFT__LBIT_KEEP;
    *nv = queue_bits(v, k->woken) | L;
    return WEFT__LBIT_TAKE;
}

WEFT_NOINLINE static int lock_slow(struct mutex *mx, uintptr_t me, uint64_t v)
{
    if (weft__in_task())
        return EPERM; /* held: a task must not wait (sched.h) */
    struct mwaiter mw;
    struct weft__waiter *const wp = &mw.w;
    weft__waiter_init(wp, WEFT__WAIT_MUTEX);
    mw.me = me;
    mw.since = 0;
    uint64_t budget = weft__spin_budget(&mx->spin_hint, MUTEX_SPIN_NS);
    struct lock_look k = { me, 0, can_spin(wp) && budget };
    unsigned i = 0;
    uint64_t spin_end = k.spinning ? weft__now_ns() + budget : 0;
    for (;;) {
        /* acquire: pairs with the release of the unlock that freed it. */
        enum weft__lbit_op op =
            weft__lbit_update(&mx->word, &v, L, own_or_queue, &k, memory_order_acquire);
        if (op == WEFT__LBIT_SET) {
            if (k.spinning && !k.woken)
                weft__spin_learn(&mx->spin_hint, WEFT__SPIN_HIT);
            return 0;
        }
        if (op == WEFT__LBIT_KEEP) { /* spinning, and held by another */
            weft__cpu_relax();
            if ((++i & 7) == 0 && weft__now_ns() >= spin_end) {
                k.spinning = 0;
                if (!k.woken)
                    weft__spin_learn(&mx->spin_hint, WEFT__SPIN_MISS);
            }
            v = atomic_load_explicit(&mx->word, memory_order_relaxed);
            continue;
        }
        /* Priority inheritance: the holder cannot change while we hold L. */
        if (wp->thread) {
            /* for weft_dump's deadlock report, and for inheritance's walk
             * along a chain of holders (before our own class is read) */
            __atomic_store_n(&wp->thread->wait_on, (const void *)mx, __ATOMIC_RELAXED);
            inherit(weft__sync_owner_id(owner_of(v)), weft__cls(wp->thread));
        }
        /* relaxed: the record is private until the release store below. */
        atomic_store_explicit(&wp->word, WEFT__WORD_WAITING, memory_order_relaxed);
        if (k.woken) {
            if (!mw.since) /* lost its first retry: barging may starve it */
                mw.since = weft__now_ns();
            weft__waitq_push_front(&mx->q, wp);
        } else {
            if (WEFT_UNLIKELY(v & W)) /* behind others: it may wait long */
                mw.since = weft__now_ns();
            weft__waitq_push(&mx->q, wp);
        }
        /* Publishes the queue to the unlock that pops us. */
        weft__lbit_drop(&mx->word, queue_bits(v, k.woken), L);
        weft__waiter_block(wp, 0, NULL, 0);
        if (wp->data)
            return 0; /* handed over: the word names us already */
        k.woken = 1;
        k.spinning = can_spin(wp);
        spin_end = k.spinning ? weft__now_ns() + MUTEX_SPIN_NS : 0;
        v = atomic_load_explicit(&mx->word, memory_order_relaxed);
    }
}

int weft_mutex_lock(weft_mutex *m)
{
    if (!m)
        return EINVAL;
    struct mutex *mx = impl(m);
    uintptr_t me = weft__sync_owner();
    uint64_t v = 0;
    /* acquire: pairs with the release of the unlock that freed the mutex. */
    if (atomic_compare_exchange_strong_explicit(&mx->word, &v, me, memory_order_acquire,
                                                memory_order_relaxed))
        return 0;
    if (owner_of(v) == me)
        return EDEADLK;
    return lock_slow(mx, me, v);
}

int weft_mutex_trylock(weft_mutex *m)
{
    if (!m)
        return EINVAL;
    struct mutex *mx = impl(m);
    uintptr_t me = weft__sync_owner();
    uint64_t v = atomic_load_explicit(&mx->word, memory_order_relaxed);
    do {
        if (owner_of(v) != 0)
            return EBUSY;
        /* acquire: pairs with the release of the unlock that freed it. */
    } while (!atomic_compare_exchange_weak_explicit(&mx->word, &v, me | (v & (W | K)),
                                                    memory_order_acquire, memory_order_relaxed));
    return 0;
}

/* unlock_slow's decision: free it, or take L to wake the oldest waiter. */
static enum weft__lbit_op free_or_wake(uint64_t v, uint64_t *nv, void *unused)
{
    if (!(v & W) || (v & K)) {
        /* Nobody to wake, or a woken waiter is on its way: just free it. */
        *nv = v & (W | K);
        return WEFT__LBIT_SET;
    }
    *nv = v | L;
    return WEFT__LBIT_TAKE;
}

/* 1 when the waiter has waited longer than STARVE_NS (since is set). Out
 * of line: the clock is the rare case. */
WEFT_NOINLINE static int starving(const struct mwaiter *mw)
{
    return weft__now_ns() - mw->since > STARVE_NS;
}

WEFT_NOINLINE static int unlock_slow(struct mutex *mx, uint64_t v)
{
    /* release: publishes the critical section to the next owner. */
    if (weft__lbit_update(&mx->word, &v, L, free_or_wake, NULL, memory_order_release) ==
        WEFT__LBIT_SET)
        return 0;
    struct weft__waiter *w = weft__waitq_pop(&mx->q);
    WEFT_ASSERT(w != NULL);
    struct mwaiter *mw = (struct mwaiter *)w;
    uint64_t rest = weft__waitq_empty(&mx->q) ? 0 : W;
    if (WEFT_UNLIKELY(mw->since) && starving(mw)) {
        /* Hand it over: the store below makes it the owner, and drops L
         * and publishes the queue, as in the other case. */
        w->data = 1;
        weft__lbit_drop(&mx->word, mw->me | rest, L);
    } else {
        /* Frees the mutex, drops L and publishes the queue in one store,
         * to the next owner or L taker. */
        weft__lbit_drop(&mx->word, K | rest, L);
    }
    weft__waiter_wake(w);
    weft__prio_disinherit(); /* back to our own class: a waiter did raise it */
    return 0;
}

int weft_mutex_unlock(weft_mutex *m)
{
    if (!m)
        return EINVAL;
    struct mutex *mx = impl(m);
    uintptr_t me = weft__sync_owner();
    uint64_t v = me;
    /* release: publishes the critical section; pairs with the acquire of
     * the next lock. */
    if (atomic_compare_exchange_strong_explicit(&mx->word, &v, 0, memory_order_release,
                                                memory_order_relaxed))
        return 0;
    if (owner_of(v) != me)
        return EPERM;
    return unlock_slow(mx, v);
}
