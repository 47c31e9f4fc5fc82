/* pool_prio.c: priority classes as a pool, over the default one.
 *
 * Design
 * ------
 * Each worker keeps one list of ready threads per class (BACKGROUND,
 * NORMAL, HIGH, URGENT) under a lock of its own, and a bitmap of the
 * non-empty ones: the owner picks the highest class in O(1) (the bitmap's
 * top bit), a thief takes from the highest class it finds on any worker.
 * Within a class the order is today's: a readied thread goes to the front
 * (the owner runs it next: LIFO, as its deque), a yielded one to the back
 * (behind every other ready thread of its class), and the owner pops the
 * front while thieves take the back (the coldest). The default pool's own
 * queues (the deque and the yield FIFO) stay as part of the NORMAL class,
 * taken after its list: the pool is swapped in while workers run
 * (weft__prio_activate), and a worker that still saw the default pool
 * queues NORMAL threads there.
 *
 * A program that never uses a priority never gets here: rt.pool stays NULL
 * and every fast path is the default pool's, inlined. Once a priority is
 * used the pool stays until weft_finalize; every worker's GATE_POOL bit
 * sends its scheduling points through the slow paths.
 *
 * Why lists and not a deque per class: a thread whose class rises while it
 * waits (priority inheritance) must move to its new class at once, which a
 * doubly linked list under a lock allows (weft__prio_requeue) and a
 * Chase-Lev deque does not. Only programs that use priorities pay the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "policy/preempt.h"
#include "policy/prio.h"
#include "sched/sched.h"
#include "sched/switch.h"
#include "stack/stack.h"

#define NCLASS     4 /* WEFT_PRIO_BACKGROUND..WEFT_PRIO_URGENT */
#define IDX(c)     ((c)-WEFT_PRIO_BACKGROUND)
#define NORMAL_BIT (1u << IDX(WEFT_PRIO_NORMAL))

/* Inheritance reads other workers' running threads racily (a hint the
 * scheduler re-checks): hidden from ThreadSanitizer. */
#if defined(WEFT_SANITIZE_THREAD)
#define RACY_PRIO __attribute__((no_sanitize("thread")))
#else
#define RACY_PRIO
#endif

struct weft__prio_q {
    weft__lock lock;
    _Atomic uint32_t mask;         /* bit IDX(c): list c is not empty; written under
                                      lock, read racily as a hint */
    struct weft__tqueue l[NCLASS]; /* under lock; head: the front */
} __attribute__((aligned(WEFT_CACHELINE)));

static struct {
    pthread_mutex_t lock;    /* serialises activation */
    struct weft__prio_q *qs; /* one per worker; set before rt.pool, freed at finalize */
    int draining;            /* 1 while weft_finalize waits for the threads (pick_floor);
                                relaxed __atomic: read by the initial thread's worker */
} prio = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };

static inline struct weft__prio_q *q_of(struct weft__worker *w)
{
    /* acquire: pairs with the release store in weft__prio_activate (a
     * worker may reach the pool through a relaxed read of rt.pool). */
    return &__atomic_load_n(&prio.qs, __ATOMIC_ACQUIRE)[w->id];
}

/* ---- lists (under q->lock) ----------------------------------------------- */

/* t has just joined list i. */
static void note_linked(struct weft__prio_q *q, int i, struct weft_thread *t)
{
    __atomic_store_n(&t->pq, q, __ATOMIC_RELAXED);
    t->pq_cls = (int8_t)i;
    atomic_store_explicit(&q->mask, atomic_load_explicit(&q->mask, memory_order_relaxed) | 1u << i,
                          memory_order_relaxed);
}

static void link_front(struct weft__prio_q *q, int i, struct weft_thread *t)
{
    weft__tq_push_front(&q->l[i], t);
    note_linked(q, i, t);
}

static void link_back(struct weft__prio_q *q, int i, struct weft_thread *t)
{
    weft__tq_push(&q->l[i], t);
    note_linked(q, i, t);
}

static void unlink_t(struct weft__prio_q *q, struct weft_thread *t)
{
    int i = t->pq_cls;
    weft__tq_remove(&q->l[i], t);
    __atomic_store_n(&t->pq, NULL, __ATOMIC_RELAXED);
    if (weft__tq_empty(&q->l[i]))
        atomic_store_explicit(&q->mask,
                              atomic_load_explicit(&q->mask, memory_order_relaxed) & ~(1u << i),
                              memory_order_relaxed);
}

static int top_class(uint32_t mask)
{
    return 31 - __builtin_clz(mask);
}

/* ---- the pool --------------------------------------------------------------- */

static void prio_push(struct weft__worker *w, struct weft_thread *t)
{
    if (t->pinned && w->id != 0) {
        weft__mail(weft__worker0(), t); /* only worker 0 runs it */
        return;
    }
    struct weft__prio_q *q = q_of(w);
    int c = weft__cls(t);
    weft__lock_acquire(&q->lock);
    link_front(q, IDX(c), t);
    weft__lock_release(&q->lock);
    /* Raised while we queued it (weft__prio_inherit on a parked holder)?
     * seq_cst: pairs with the fence there. */
    weft__fence();
    if (WEFT_UNLIKELY(weft__cls(t) != c)) {
        c = weft__cls(t);
        weft__prio_requeue(t);
    }
    weft__preempt_for_class(c);
}

static void prio_push_yield(struct weft__worker *w, struct weft_thread *t)
{
    struct weft__prio_q *q = q_of(w);
    weft__lock_acquire(&q->lock);
    link_back(q, IDX(weft__cls(t)), t);
    weft__lock_release(&q->lock);
}

/* The front of w's highest non-empty list at or above class index `from`,
 * or NULL. */
static struct weft_thread *pop_from(struct weft__prio_q *q, int from)
{
    uint32_t m = atomic_load_explicit(&q->mask, memory_order_relaxed) >> from;
    if (!m)
        return NULL;
    weft__lock_acquire(&q->lock);
    m = atomic_load_explicit(&q->mask, memory_order_relaxed) >> from;
    struct weft_thread *t = NULL;
    if (m) {
        t = q->l[top_class(m) + from].head;
        unlink_t(q, t);
    }
    weft__lock_release(&q->lock);
    return t;
}

static struct weft_thread *steal_list(struct weft__prio_q *v, int i);

/* A thread of a class above `above` (an index) waiting on another worker,
 * taken from the highest such class, or NULL. */
static struct weft_thread *steal_above(struct weft__worker *w, int above)
{
    int n = weft__rt.nworkers;
    for (int i = NCLASS - 1; i > above; i--)
        for (int k = 1; k < n; k++) {
            struct weft_thread *t = steal_list(q_of(weft__rt.workers[(w->id + k) % n]), i);
            if (t) {
                __atomic_store_n(&w->nsteals, w->nsteals + 1, __ATOMIC_RELAXED);
                return t;
            }
        }
    return NULL;
}

/* The lowest class index the current thread of w lets run in its place:
 * its own while it is running (a yield, a preemption: "a worker never runs
 * a ready thread while a higher one is ready", the caller counting as
 * ready), 0 when it parks or when the scheduler context picks. A thread
 * that exits reads as running: NULL sends it through the scheduler
 * context, which picks the lower thread. The initial thread in
 * weft_finalize waits for the others (weft__prio_draining). */
static int pick_floor(struct weft__worker *w)
{
    struct weft_thread *self = w->current;
    if (!self || weft__thread_waits(self) != WEFT__WAIT_NONE ||
        (self == weft__rt.main && __atomic_load_n(&prio.draining, __ATOMIC_RELAXED)))
        return 0;
    return IDX(weft__cls(self));
}

static struct weft_thread *prio_pop(struct weft__worker *w)
{
    struct weft__prio_q *q = q_of(w);
    int floor = pick_floor(w);
    /* A higher class waiting elsewhere comes first: "a worker never runs a
     * ready thread while a higher one is ready" holds across workers as
     * far as the masks tell (a preempted worker lands here). */
    uint32_t mine = atomic_load_explicit(&q->mask, memory_order_relaxed);
    int local = mine ? top_class(mine) : -1;
    if (local < IDX(WEFT_PRIO_NORMAL) && weft__pool_ws.has_ready(w))
        local = IDX(WEFT_PRIO_NORMAL); /* the default pool's queues are NORMAL */
    if (local < floor - 1)
        local = floor - 1;
    if (weft__rt.nworkers > 1 && local < NCLASS - 1) {
        struct weft_thread *s = steal_above(w, local);
        if (s)
            return s;
    }
    int normal = IDX(WEFT_PRIO_NORMAL);
    struct weft_thread *t = pop_from(q, floor > normal ? floor : normal);
    if (!t && floor <= normal)
        t = weft__pick_default(w); /* the rest of NORMAL */
    if (!t && floor == 0)
        t = pop_from(q, IDX(WEFT_PRIO_BACKGROUND));
    return t;
}

/* The back of v's list i that is not the pinned initial thread, or NULL. */
static struct weft_thread *steal_list(struct weft__prio_q *v, int i)
{
    if (!(atomic_load_explicit(&v->mask, memory_order_relaxed) & 1u << i))
        return NULL;
    weft__lock_acquire(&v->lock);
    struct weft_thread *t = v->l[i].tail;
    while (t && t->pinned)
        t = t->prev;
    if (t)
        unlink_t(v, t);
    weft__lock_release(&v->lock);
    return t;
}

static struct weft_thread *prio_steal(struct weft__worker *w)
{
    int n = weft__rt.nworkers;
    for (int i = NCLASS - 1; i >= 0; i--) {
        for (int k = 1; k < n; k++) {
            struct weft__worker *v = weft__rt.workers[(w->id + k) % n];
            struct weft_thread *t = steal_list(q_of(v), i);
            if (t) {
                __atomic_store_n(&w->nsteals, w->nsteals + 1, __ATOMIC_RELAXED);
                return t;
            }
        }
        if (i == IDX(WEFT_PRIO_NORMAL)) {
            struct weft_thread *t = weft__ws_steal(w);
            if (t)
                return t;
        }
    }
    return NULL;
}

static int prio_has_ready(struct weft__worker *w)
{
    return atomic_load_explicit(&q_of(w)->mask, memory_order_relaxed) != 0 ||
           weft__pool_ws.has_ready(w);
}

static int prio_has_work(struct weft__worker *w)
{
    for (int i = 0; i < weft__rt.nworkers; i++)
        if (atomic_load_explicit(&q_of(weft__rt.workers[i])->mask, memory_order_relaxed))
            return 1;
    return weft__pool_ws.has_work(w);
}

static void prio_destroy(void)
{
    free(prio.qs);
    prio.qs = NULL;
}

const struct weft__pool_ops weft__pool_prio = {
    .name = "prio",
    .destroy = prio_destroy,
    .push = prio_push,
    .push_yield = prio_push_yield,
    .push_front = prio_push,
    .pop = prio_pop,
    .steal = prio_steal,
    .has_work = prio_has_work,
    .has_ready = prio_has_ready,
};

/* ---- activation, inheritance, spawn ------------------------------------------ */

int weft__prio_activate(void)
{
    if (__atomic_load_n(&weft__rt.pool, __ATOMIC_ACQUIRE))
        return 0; /* in place already, or another plug-in (priorities are stored only) */
    int rc = 0;
    pthread_mutex_lock(&prio.lock);
    if (!__atomic_load_n(&weft__rt.pool, __ATOMIC_RELAXED)) {
        int n = weft__rt.nworkers;
        struct weft__prio_q *qs = aligned_alloc(WEFT_CACHELINE, (size_t)n * sizeof *qs);
        if (!qs) {
            rc = ENOMEM;
        } else {
            memset(qs, 0, (size_t)n * sizeof *qs);
            weft__preempt_set_top(weft__prio_top);
            __atomic_store_n(&prio.qs, qs, __ATOMIC_RELEASE); /* pairs with q_of */
            /* release: the lists are initialised before any worker that
             * sees the pool uses them; pairs with the acquire above (and
             * a worker's later lock acquisitions). */
            __atomic_store_n(&weft__rt.pool, &weft__pool_prio, __ATOMIC_RELEASE);
            for (int i = 0; i < n; i++)
                atomic_fetch_or_explicit(&weft__rt.workers[i]->gate, WEFT__GATE_POOL,
                                         memory_order_release);
        }
    }
    pthread_mutex_unlock(&prio.lock);
    return rc;
}

void weft__prio_drain(int on)
{
    __atomic_store_n(&prio.draining, on, __ATOMIC_RELAXED);
}

void weft__prio_requeue(struct weft_thread *t)
{
    if (__atomic_load_n(&weft__rt.pool, __ATOMIC_ACQUIRE) != &weft__pool_prio)
        return;
    struct weft__prio_q *q = __atomic_load_n(&t->pq, __ATOMIC_RELAXED);
    if (!q)
        return; /* running, parked, or in a queue of the default pool */
    weft__lock_acquire(&q->lock);
    if (t->pq == q) {
        unlink_t(q, t);
        link_front(q, IDX(weft__cls(t)), t);
    }
    weft__lock_release(&q->lock);
}

void weft__prio_update(struct weft_thread *t)
{
    int c = __atomic_load_n(&t->prio, __ATOMIC_RELAXED);
    int b = __atomic_load_n(&t->boost, __ATOMIC_RELAXED);
    if (b && b - 2 > c)
        c = b - 2;
    if (__atomic_exchange_n(&t->pcls, (int8_t)c, __ATOMIC_RELAXED) != c)
        weft__prio_requeue(t);
}

int weft__prio_top(struct weft__worker *w)
{
    if (__atomic_load_n(&weft__rt.pool, __ATOMIC_ACQUIRE) == &weft__pool_prio) {
        uint32_t m = atomic_load_explicit(&q_of(w)->mask, memory_order_relaxed);
        if (m & ~(NORMAL_BIT | (NORMAL_BIT - 1)))
            return top_class(m) + WEFT_PRIO_BACKGROUND;
        if (m & NORMAL_BIT)
            return WEFT_PRIO_NORMAL;
        if (weft__pool_ws.has_ready(w))
            return WEFT_PRIO_NORMAL;
        if (m)
            return WEFT_PRIO_BACKGROUND;
        return WEFT_PRIO_BACKGROUND - 1;
    }
    return weft__pool()->has_ready(w) ? WEFT_PRIO_NORMAL : WEFT_PRIO_BACKGROUND - 1;
}

/* Raises t to class c (t->boost), if that is above its own. */
static int raise_to(struct weft_thread *t, int c)
{
    int b = __atomic_load_n(&t->boost, __ATOMIC_RELAXED);
    if (b && b - 2 >= c)
        return 0;
    __atomic_store_n(&t->boost, (int8_t)(c + 2), __ATOMIC_RELAXED);
    return c > weft__cls(t);
}

/* weft__prio_inherit's search among the parked threads. */
struct find_parked {
    uint64_t id;
    struct weft_thread *t;
};

RACY_PRIO static void match_parked(struct weft_thread *t, void *arg)
{
    struct find_parked *f = arg;
    /* A parked thread has a wait kind; a free slot's id is stale, and an
     * exited thread's join word says so. */
    if (!f->t && __atomic_load_n(&t->id, __ATOMIC_RELAXED) == f->id &&
        weft__thread_waits(t) != WEFT__WAIT_NONE &&
        !(atomic_load_explicit(&t->join, memory_order_relaxed) & (WEFT__J_DONE | WEFT__J_FREED)))
        f->t = t;
}

RACY_PRIO struct weft_thread *weft__prio_inherit(uint64_t id, int c)
{
    if (!id || c <= WEFT_PRIO_BACKGROUND ||
        __atomic_load_n(&weft__rt.pool, __ATOMIC_ACQUIRE) != &weft__pool_prio)
        return NULL;
    int n = weft__rt.nworkers;
    /* Running: its class counts when it is preempted, yields or parks. */
    for (int i = 0; i < n; i++) {
        struct weft_thread *cur = __atomic_load_n(&weft__rt.workers[i]->current, __ATOMIC_RELAXED);
        if (cur && __atomic_load_n(&cur->id, __ATOMIC_RELAXED) == id) {
            if (!raise_to(cur, c))
                return NULL;
            __atomic_store_n(&cur->pcls, (int8_t)c, __ATOMIC_RELAXED);
            return cur;
        }
    }
    /* Queued: it moves to the front of its new class. */
    for (int i = 0; i < n; i++) {
        struct weft__prio_q *q = q_of(weft__rt.workers[i]);
        if (!atomic_load_explicit(&q->mask, memory_order_relaxed))
            continue;
        weft__lock_acquire(&q->lock);
        for (int k = 0; k < NCLASS; k++)
            for (struct weft_thread *t = q->l[k].head; t; t = t->next)
                if (__atomic_load_n(&t->id, __ATOMIC_RELAXED) == id) {
                    int raised = raise_to(t, c);
                    if (raised) {
                        __atomic_store_n(&t->pcls, (int8_t)c, __ATOMIC_RELAXED);
                        unlink_t(q, t);
                        link_front(q, IDX(c), t);
                    }
                    weft__lock_release(&q->lock);
                    weft__preempt_for_class(c);
                    return raised ? t : NULL;
                }
        weft__lock_release(&q->lock);
    }
    /* Parked on something else (SPEC: it runs at c as soon as it is ready
     * again): the walk over every descriptor is the cost of having no
     * index from id to descriptor, paid only here. */
    struct find_parked f = { id, NULL };
    struct weft_thread *m = weft__rt.main;
    if (m && __atomic_load_n(&m->id, __ATOMIC_RELAXED) == id)
        f.t = m;
    else if (weft__stack_each(match_parked, &f) != 0)
        return NULL;
    if (!f.t || !raise_to(f.t, c))
        return NULL;
    __atomic_store_n(&f.t->pcls, (int8_t)c, __ATOMIC_RELAXED);
    /* Readied meanwhile, at its old class? seq_cst: pairs with the fence
     * in prio_push, so that one of us sees the other's store (the class,
     * or the list that now holds it). */
    weft__fence();
    if (__atomic_load_n(&f.t->pq, __ATOMIC_RELAXED)) {
        weft__prio_requeue(f.t);
        weft__preempt_for_class(c);
    }
    return f.t;
}

void weft__prio_disinherit(void)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w ? w->current : NULL;
    if (!self || !__atomic_load_n(&self->boost, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&self->boost, 0, __ATOMIC_RELAXED);
    weft__prio_update(self);
    /* Below a ready thread now (the waiter we woke, usually): let it run. */
    if (weft__prio_top(w) > weft__cls(self)) {
        struct weft_thread *next = weft__pick_local(w);
        if (next)
            weft__switch(w, self, next, (uintptr_t)self | XF_YIELD);
    }
}
