/* rwlock.c: weft_rwlock: a writer-preferring reader-writer lock with direct hand-off, one CAS on each uncontended path.
 *
 * Word: readers << 4 | WQ | RQ | L | WRITER.
 *   WRITER (1): a writer holds the lock;  L (2): internal lock for the queues;
 *   RQ (4): readers are queued;  WQ (8): writers are queued.
 * Every CAS expects L clear, so the L holder ends with a plain store.
 * Writer preference: a reader may enter only when neither WRITER nor WQ is
 * set, so a queued writer holds back every new reader and is served as soon
 * as the readers inside leave: writers never starve. (Readers can, under a
 * continuous stream of writers, and a reader that takes the read lock
 * again while a writer is queued waits forever behind it: the price of
 * that preference, as with glibc's writer-nonrecursive kind.) Readers
 * queue only behind WRITER or WQ, so RQ implies one of them.
 * Hand-off: the unlocker grants the lock to the waiters it wakes, under L
 * (sets WRITER and the owner for one writer, or adds the count of every
 * queued reader), so a woken waiter owns the lock when it resumes. Last
 * reader out with WQ → the oldest writer. Writer out → the oldest writer
 * if any, else every queued reader.
 * The owner word names the writer (EDEADLK on its relock, EPERM on an
 * unlock by another thread); it is cleared before WRITER is, and written
 * for a handed-off writer under L, so reading one's own token there is
 * never stale. Readers are not tracked: an unlock by a thread holding
 * nothing while readers are inside releases one of their counts, like
 * pthreads.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>

#include "sched/sched.h"
#include "sync/wait.h"
#include "weft.h"

#define RWLOCK_SPIN_NS 3000u

enum { WRITER = 1, L = 2, RQ = 4, WQ = 8, READER = 16 };

struct rwlock {
    _Atomic uint64_t word;   /* readers << 4 | WQ | RQ | L | WRITER */
    _Atomic uintptr_t owner; /* the writer's token while WRITER, else 0; see above */
    struct weft__waitq rq;   /* under L: queued readers */
    struct weft__waitq wq;   /* under L: queued writers; w->data = their owner token */
};

WEFT__STORAGE(impl, struct rwlock, weft_rwlock, weft_private_)

int weft_rwlock_init(weft_rwlock *l)
{
    return weft__init_zeroed(l, sizeof *l);
}

int weft_rwlock_destroy(weft_rwlock *l)
{
    if (!l)
        return EINVAL;
    /* acquire: a destroy after the last unlock sees everything before it. */
    return atomic_load_explicit(&impl(l)->word, memory_order_acquire) != 0 ? EBUSY : 0;
}

static int own_write(struct rwlock *rw, uint64_t v, uintptr_t me)
{
    /* relaxed: only this thread writes its own token (or a hand-off to it,
     * which happens before it resumed). */
    return (v & WRITER) && atomic_load_explicit(&rw->owner, memory_order_relaxed) == me;
}

/* Takes L from v (L clear); returns 0 if the word moved. */
static int take_l(struct rwlock *rw, uint64_t *v, uint64_t extra)
{
    /* acquire: pairs with the release store that dropped L. */
    return atomic_compare_exchange_weak_explicit(&rw->word, v, *v | L | extra, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Drops L with the new word (L clear). */
static void drop_l(struct rwlock *rw, uint64_t nv)
{
    WEFT_ASSERT(!(nv & L));
    /* release: publishes the queues and any hand-off; pairs with the
     * acquire of the next L taker or lock holder. */
    atomic_store_explicit(&rw->word, nv, memory_order_release);
}

static void wait_granted(struct rwlock *rw, struct weft__waitq *q, uint64_t nv)
{
    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_RWLOCK);
    self.data = weft__sync_owner();
    weft__waitq_push(q, &self);
    drop_l(rw, nv);
    weft__waiter_block(&self, RWLOCK_SPIN_NS, NULL, 0);
}

/* The slow step of rdlock and wrlock (me: the caller's owner token), for a
 * word v the fast path could not take: refuses a wait that would deadlock
 * or that a task would make, waits for L while another holds it, else
 * takes L with the queue bit qbit and waits in q until the lock is granted
 * (0). AGAIN: v moved (reloaded), go round. */
#define AGAIN (-1)
static int wait_for_grant(struct rwlock *rw, uint64_t *v, uintptr_t me, uint64_t qbit,
                          struct weft__waitq *q, unsigned *spins)
{
    if (own_write(rw, *v, me))
        return EDEADLK;
    if (weft__in_task())
        return EPERM; /* held: a task must not wait (sched.h) */
    if (*v & L) {
        *v = weft__sync_unlocked(&rw->word, L, spins);
        return AGAIN;
    }
    if (!take_l(rw, v, qbit))
        return AGAIN;
    wait_granted(rw, q, *v | qbit);
    return 0;
}

int weft_rwlock_rdlock(weft_rwlock *l)
{
    if (!l)
        return EINVAL;
    struct rwlock *rw = impl(l);
    uint64_t v = atomic_load_explicit(&rw->word, memory_order_relaxed);
    unsigned spins = 0;
    for (;;) {
        if (!(v & (WRITER | WQ | L))) {
            /* acquire: pairs with the release of the last writer's unlock. */
            if (atomic_compare_exchange_weak_explicit(&rw->word, &v, v + READER,
                                                      memory_order_acquire, memory_order_relaxed))
                return 0;
            continue;
        }
        int rc = wait_for_grant(rw, &v, weft__sync_owner(), RQ, &rw->rq, &spins);
        if (rc != AGAIN)
            return rc;
    }
}

int weft_rwlock_wrlock(weft_rwlock *l)
{
    if (!l)
        return EINVAL;
    struct rwlock *rw = impl(l);
    uintptr_t me = weft__sync_owner();
    uint64_t v = 0;
    unsigned spins = 0;
    for (;;) {
        /* acquire: pairs with the release of the previous holder's unlock. */
        if (v == 0 &&
            atomic_compare_exchange_weak_explicit(&rw->word, &v, WRITER, memory_order_acquire,
                                                  memory_order_relaxed)) {
            atomic_store_explicit(&rw->owner, me, memory_order_relaxed);
            return 0;
        }
        if (v == 0)
            continue;
        int rc = wait_for_grant(rw, &v, me, WQ, &rw->wq, &spins);
        if (rc != AGAIN)
            return rc;
    }
}

/* Under L: grants the lock to the oldest writer and drops L. */
static void grant_writer(struct rwlock *rw, uint64_t v)
{
    struct weft__waiter *w = weft__waitq_pop(&rw->wq);
    WEFT_ASSERT(w != NULL);
    atomic_store_explicit(&rw->owner, w->data, memory_order_relaxed);
    uint64_t nv = (v & ~(uint64_t)(L | WQ)) | WRITER | (weft__waitq_empty(&rw->wq) ? 0 : WQ);
    drop_l(rw, nv);
    weft__waiter_wake(w);
}

static int unlock_write(struct rwlock *rw, uint64_t v)
{
    unsigned spins = 0;
    atomic_store_explicit(&rw->owner, 0, memory_order_relaxed);
    for (;;) {
        if (v == WRITER) {
            /* release: publishes the critical section to the next holder. */
            if (atomic_compare_exchange_weak_explicit(&rw->word, &v, 0, memory_order_release,
                                                      memory_order_relaxed))
                return 0;
            continue;
        }
        if (v & L) {
            v = weft__sync_unlocked(&rw->word, L, &spins);
            continue;
        }
        if (take_l(rw, &v, 0))
            break;
    }
    if (v & WQ) {
        grant_writer(rw, v);
        return 0;
    }
    WEFT_ASSERT(v & RQ);
    struct weft__waiter *w = weft__waitq_take_all(&rw->rq);
    uint64_t n = 0;
    for (struct weft__waiter *x = w; x; x = x->next)
        n++;
    drop_l(rw, n * READER);
    while (w) {
        struct weft__waiter *next = w->next; /* before the wake: w may vanish */
        weft__waiter_wake(w);
        w = next;
    }
    return 0;
}

static int unlock_read(struct rwlock *rw, uint64_t v)
{
    unsigned spins = 0;
    for (;;) {
        if (v & L) {
            v = weft__sync_unlocked(&rw->word, L, &spins);
            continue;
        }
        if (v < READER)
            return EPERM;
        if ((v >> 4) > 1 || !(v & WQ)) {
            /* release: publishes the read section to a later writer. */
            if (atomic_compare_exchange_weak_explicit(&rw->word, &v, v - READER,
                                                      memory_order_release, memory_order_relaxed))
                return 0;
            continue;
        }
        if (take_l(rw, &v, 0))
            break;
    }
    grant_writer(rw, v - READER);
    return 0;
}

int weft_rwlock_unlock(weft_rwlock *l)
{
    if (!l)
        return EINVAL;
    struct rwlock *rw = impl(l);
    uint64_t v = atomic_load_explicit(&rw->word, memory_order_relaxed);
    if (v & WRITER) {
        if (!own_write(rw, v, weft__sync_owner()))
            return EPERM;
        return unlock_write(rw, v);
    }
    return unlock_read(rw, v);
}
