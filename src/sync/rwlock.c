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
#include "sync/lbit.h"
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
    return l ? weft__lbit_destroy(&impl(l)->word) : EINVAL;
}

static int own_write(struct rwlock *rw, uint64_t v, uintptr_t me)
{
    /* relaxed: only this thread writes its own token (or a hand-off to it,
     * which happens before it resumed). */
    return (v & WRITER) && atomic_load_explicit(&rw->owner, memory_order_relaxed) == me;
}

static void wait_granted(struct rwlock *rw, struct weft__waitq *q, uint64_t nv)
{
    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_RWLOCK);
    self.data = weft__sync_owner();
    weft__waitq_push(q, &self);
    weft__lbit_drop(&rw->word, nv, L); /* publishes the queue to the granter */
    weft__waiter_block(&self, RWLOCK_SPIN_NS, NULL, 0);
}

/* What a lock decision reads and says. */
struct look {
    struct rwlock *rw;
    int rc; /* KEEP: the error */
};

/* The slow half of rdlock's and wrlock's decisions, for a value the lock
 * cannot be taken on lock-free: refuses a wait that would deadlock or
 * that a task would make, else takes L with the queue bit qbit. */
static enum weft__lbit_op refuse_or_queue(uint64_t v, uint64_t *nv, struct look *k, uint64_t qbit)
{
    if (own_write(k->rw, v, weft__sync_owner()))
        k->rc = EDEADLK;
    else if (weft__in_task())
        k->rc = EPERM; /* held: a task must not wait (sched.h) */
    else {
        *nv = v | L | qbit;
        return WEFT__LBIT_TAKE;
    }
    return WEFT__LBIT_KEEP;
}

/* rdlock's decision: enter while no writer holds the lock or waits. */
static enum weft__lbit_op read_or_queue(uint64_t v, uint64_t *nv, void *look)
{
    if (!(v & (WRITER | WQ))) {
        *nv = v + READER;
        return WEFT__LBIT_SET;
    }
    return refuse_or_queue(v, nv, look, RQ);
}

/* wrlock's decision: take it when free. */
static enum weft__lbit_op write_or_queue(uint64_t v, uint64_t *nv, void *look)
{
    if (v == 0) {
        *nv = WRITER;
        return WEFT__LBIT_SET;
    }
    return refuse_or_queue(v, nv, look, WQ);
}

/* rdlock (write 0) and wrlock (1): runs decide on the word; after TAKE
 * waits in the queue until an unlock grants the lock. */
WEFT_INLINE int lock(weft_rwlock *l, weft__lbit_decide *decide, int write)
{
    if (!l)
        return EINVAL;
    struct rwlock *rw = impl(l);
    struct look k = { rw, 0 };
    /* A writer starts from 0, the one value it takes lock-free. */
    uint64_t v = write ? 0 : atomic_load_explicit(&rw->word, memory_order_relaxed);
    /* acquire: pairs with the release of the unlock that let us in (a
     * grant's, through the wake, for a queued waiter). */
    switch (weft__lbit_update(&rw->word, &v, L, decide, &k, memory_order_acquire)) {
    case WEFT__LBIT_TAKE: wait_granted(rw, write ? &rw->wq : &rw->rq, v | (write ? WQ : RQ)); break;
    case WEFT__LBIT_SET:
        /* A granted writer was named by its granter; this one names itself. */
        if (write)
            atomic_store_explicit(&rw->owner, weft__sync_owner(), memory_order_relaxed);
        break;
    case WEFT__LBIT_KEEP: break;
    }
    return k.rc;
}

int weft_rwlock_rdlock(weft_rwlock *l)
{
    return lock(l, read_or_queue, 0);
}

int weft_rwlock_wrlock(weft_rwlock *l)
{
    return lock(l, write_or_queue, 1);
}

/* Under L: grants the lock to the oldest writer and drops L. */
static void grant_writer(struct rwlock *rw, uint64_t v)
{
    struct weft__waiter *w = weft__waitq_pop(&rw->wq);
    WEFT_ASSERT(w != NULL);
    atomic_store_explicit(&rw->owner, w->data, memory_order_relaxed);
    uint64_t nv = (v & ~(uint64_t)(L | WQ)) | WRITER | (weft__waitq_empty(&rw->wq) ? 0 : WQ);
    weft__lbit_drop(&rw->word, nv, L); /* publishes the hand-off */
    weft__waiter_wake(w);
}

/* unlock_write's decision: free it, or take L to grant it to waiters. */
static enum weft__lbit_op free_or_grant(uint64_t v, uint64_t *nv, void *unused)
{
    if (v == WRITER) {
        *nv = 0;
        return WEFT__LBIT_SET;
    }
    *nv = v | L;
    return WEFT__LBIT_TAKE;
}

static int unlock_write(struct rwlock *rw, uint64_t v)
{
    atomic_store_explicit(&rw->owner, 0, memory_order_relaxed);
    /* release: publishes the critical section to the next holder. */
    if (weft__lbit_update(&rw->word, &v, L, free_or_grant, NULL, memory_order_release) ==
        WEFT__LBIT_SET)
        return 0;
    if (v & WQ) {
        grant_writer(rw, v);
        return 0;
    }
    WEFT_ASSERT(v & RQ);
    struct weft__waiter *w = weft__waitq_take_all(&rw->rq);
    uint64_t n = 0;
    for (struct weft__waiter *x = w; x; x = x->next)
        n++;
    weft__lbit_drop(&rw->word, n * READER, L); /* publishes the grant */
    weft__waiter_wake_list(w);
    return 0;
}

/* unlock_read's decision: leave, or take L to grant the lock to the
 * oldest writer (the last reader out while one waits). */
static enum weft__lbit_op leave_or_grant(uint64_t v, uint64_t *nv, void *rc)
{
    if (v < READER) {
        *(int *)rc = EPERM;
        return WEFT__LBIT_KEEP;
    }
    if ((v >> 4) > 1 || !(v & WQ)) {
        *nv = v - READER;
        return WEFT__LBIT_SET;
    }
    *nv = v | L;
    return WEFT__LBIT_TAKE;
}

static int unlock_read(struct rwlock *rw, uint64_t v)
{
    int rc = 0;
    /* release: publishes the read section to a later writer. */
    if (weft__lbit_update(&rw->word, &v, L, leave_or_grant, &rc, memory_order_release) ==
        WEFT__LBIT_TAKE)
        grant_writer(rw, v - READER);
    return rc;
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
