/* task.c: zero-wait tasks: records, continuations, and running them on the
 * workers' scheduler contexts.
 *
 * Design
 * ------
 * A task is a continuation-based thread: fn, arg and a synchronisation
 * counter. Each weft_task_continue is one atomic decrement (acq_rel: what
 * the sender wrote before it is visible to fn); the sender that takes the
 * counter to zero readies the task. A ready task runs to completion on the
 * scheduler context's stack of whichever worker takes it, so a waiting task
 * costs one cache line and no stack, and running one costs no switch.
 *
 * Where a ready task goes, by who readied it:
 *  - a task running on worker w: w's child-first slot (tw->next) when it is
 *    empty, so the first successor a task readies runs right after it with
 *    no queue operation; further ones go to w's deque;
 *  - a user thread (or the scheduler context) on w: w's deque;
 *  - a plain kernel thread: the injection list, taken by any worker.
 * Each worker has its own Chase-Lev deque of tasks (the owner pushes and
 * pops at the bottom, thieves take the top), beside the scheduler's deque
 * of threads: a worker runs its own ready tasks each time it enters its
 * scheduler context, before it looks for threads, and steals tasks after it
 * found no thread to run or steal. So tasks and threads share the workers,
 * their idling (a worker sleeps only when weft__task_has_work says no task
 * is ready anywhere, the same Dekker pair as threads: push, then
 * weft__maybe_wake) and their I/O rings. A user thread that readies tasks
 * keeps its worker until it parks or yields (it sets WEFT__ATTN_TASK, which
 * sends its next yield through the scheduler context); idle workers steal
 * meanwhile.
 *
 * Records: one cache line each, handed out in address order from a chunk
 * (64 KiB, aligned to its size) that the creating worker owns, by bumping a
 * pointer: no lock, no system call, and tasks created together lie
 * together, whatever order earlier ones ran in (a free list would hand them
 * out in the order the last graph finished, and a graph whose tasks run in
 * another order than they were made, a binary tree say, then misses the
 * cache at every continuation). A chunk counts its records still out
 * (live); a freed record only decrements that count, batched per worker
 * while consecutive frees hit the same chunk, and the chunk is reused as a
 * whole when the count reaches zero: first by the worker that emptied it
 * (a few kept), then through a locked spare list. The price: one waiting
 * task keeps its chunk from reuse. Chunks are freed at weft_finalize, with
 * the records of tasks whose counter never reached zero.
 *
 * weft_finalize waits for ready and running tasks and split-phase calls in
 * flight: each is a unit opened where it starts (readied, issued) and
 * closed where it ends, counted per worker (owner stores, finalize reads).
 *
 * Rejected: tasks as user threads with a stack each (a parked stack per
 * waiting node, ~100 bytes of descriptor and a switch per task); tasks in
 * the threads' deque (a tag test on every pick and steal of the thread hot
 * path); one shared ready queue (a lock per task).
 */
#include "task/task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "sched/events.h"
#include "sched/sched.h"

#define CHUNK_BYTES  ((uintptr_t)64 << 10) /* a chunk of records, aligned to its size */
#define CHUNK_RECS   ((long)(CHUNK_BYTES / sizeof(struct weft_task))) /* the first: header */
#define CHUNK_HOLD   ((int64_t)1 << 40) /* live while the chunk's owner still carves it */
#define CHUNKS_KEPT  4u                 /* empty chunks a worker keeps before the spare list */
#define DQ_INIT      256                /* first size of a worker's task deque */
#define ATTEND_EVERY 64u                /* tasks run between two looks at the worker's ring */

/* The header of a chunk of records: its first record. */
struct chunk {
    _Atomic int64_t live; /* records out and not freed, + CHUNK_HOLD while its owner
                             carves it; freers decrement (acq_rel), the one that
                             reaches 0 reuses the chunk */
    struct chunk *next;   /* in an empty-chunk list: that list's owner */
    struct chunk *all;    /* every chunk; under glock */
};

/* Where records are carved: a worker's, or the one for plain kernel threads
 * (under glock). */
struct arena {
    struct weft_task *pos, *end; /* the current chunk's records not handed out */
    struct chunk *cur;           /* the current chunk, NULL before the first */
};

/* Per-worker task state, indexed by worker id. */
struct task_worker {
    struct weft__deque dq;
    struct weft_task *next WEFT_ALIGNED; /* child-first slot; owner only */
    int depth;                           /* 1 while a task's fn runs here; owner only */
    unsigned tick;                       /* tasks run, for ATTEND_EVERY; owner only */
    struct arena arena;                  /* owner only */
    struct chunk *pend;                  /* frees not yet subtracted from pend->live;
                                            owner only */
    int64_t npend;                       /* how many; owner only */
    struct chunk *empty;                 /* empty chunks kept, through next; owner only */
    unsigned nempty;                     /* owner only */
    struct weft_task *overflow;          /* ready tasks the deque could not take (out of
                                            memory), linked through next; owner only */
    uint64_t rng;                        /* victim selection; owner only */
    /* owner stores (release for the unit counts: finalize's acquire loads
     * pair with them), others read */
    _Atomic uint64_t nopen, nclosed;
    _Atomic uint64_t nrun, nstolen, ncalls;
};

static struct task_worker **tws; /* immutable while running */
static int ntws;

static weft__lock glock;            /* the chunk lists, ext_arena, the injection list */
static struct chunk *chunks;        /* every chunk, through all; under glock */
static struct chunk *spare;         /* empty chunks, through next; under glock */
static struct arena ext_arena;      /* plain kernel threads' records; under glock */
static struct weft_task *inj_head;  /* ready tasks from plain kernel threads; under glock */
static struct weft_task *inj_tail;  /* under glock */
static _Atomic int ninj;            /* hint: tasks in the injection list */
static _Atomic uint64_t ext_open;   /* units opened by plain kernel threads */
static _Atomic uint64_t ext_calls;  /* split-phase calls from plain kernel threads */
static _Atomic int64_t kernel_busy; /* plain kernel threads inside a task call */

/* ---- records ---------------------------------------------------------------- */

WEFT_INLINE struct task_worker *tw_of(struct weft__worker *w)
{
    return tws[w->id];
}

WEFT_INLINE struct chunk *chunk_of(struct weft_task *t)
{
    return (struct chunk *)((uintptr_t)t & ~(CHUNK_BYTES - 1));
}

/* An empty chunk: kept by tw (NULL: to the spare list). */
static void chunk_reuse(struct task_worker *tw, struct chunk *c)
{
    if (tw && tw->nempty < CHUNKS_KEPT) {
        c->next = tw->empty;
        tw->empty = c;
        tw->nempty++;
        return;
    }
    weft__lock_acquire(&glock);
    c->next = spare;
    spare = c;
    weft__lock_release(&glock);
}

/* Subtracts n freed records from c; the one that empties it reuses it. */
static void chunk_put(struct task_worker *tw, struct chunk *c, int64_t n)
{
    /* acq_rel: release orders our last use of the records before their
     * reuse; acquire (by the one that reaches 0) takes everybody's. */
    if (atomic_fetch_sub_explicit(&c->live, n, memory_order_acq_rel) == n)
        chunk_reuse(tw, c);
}

/* a's chunk is used up (or about to be dropped with n records carved):
 * the owner's hold goes. */
static void arena_retire(struct task_worker *tw, struct arena *a)
{
    struct chunk *c = a->cur;
    if (!c)
        return;
    long carved = (long)(a->pos - ((struct weft_task *)c + 1));
    a->cur = NULL;
    a->pos = a->end = NULL;
    chunk_put(tw, c, CHUNK_HOLD - carved);
}

/* A new current chunk for a: tw's kept one, a spare one, or a new one.
 * With glock held when tw is NULL (ext_arena). 0 when out of memory. */
static int arena_refill(struct task_worker *tw, struct arena *a)
{
    struct chunk *c = NULL;
    if (tw && tw->empty) {
        c = tw->empty;
        tw->empty = c->next;
        tw->nempty--;
    } else {
        if (tw)
            weft__lock_acquire(&glock);
        c = spare;
        if (c) {
            spare = c->next;
        } else if ((c = aligned_alloc(CHUNK_BYTES, CHUNK_BYTES)) != NULL) {
            c->all = chunks;
            chunks = c;
        }
        if (tw)
            weft__lock_release(&glock);
        if (!c)
            return 0;
    }
    /* relaxed: nobody else holds a record of an empty chunk */
    atomic_store_explicit(&c->live, CHUNK_HOLD, memory_order_relaxed);
    a->cur = c;
    a->pos = (struct weft_task *)c + 1;
    a->end = (struct weft_task *)c + CHUNK_RECS;
    return 1;
}

static WEFT_NOINLINE struct weft_task *alloc_slow(struct task_worker *tw, struct arena *a)
{
    arena_retire(tw, a);
    if (!arena_refill(tw, a))
        return NULL;
    return a->pos++;
}

static struct weft_task *ext_alloc(void)
{
    weft__lock_acquire(&glock);
    struct arena *a = &ext_arena;
    struct weft_task *t = a->pos != a->end ? a->pos++ : alloc_slow(NULL, a);
    weft__lock_release(&glock);
    return t;
}

WEFT_INLINE struct weft_task *rec_alloc(struct weft__worker *w)
{
    if (WEFT_UNLIKELY(!w))
        return ext_alloc();
    struct task_worker *tw = tw_of(w);
    struct arena *a = &tw->arena;
    if (WEFT_UNLIKELY(a->pos == a->end))
        return alloc_slow(tw, a);
    return a->pos++;
}

/* Frees of the same chunk in a row cost no atomic operation: counted here,
 * subtracted when a free hits another chunk or the worker runs out of
 * tasks (flush). */
static void flush(struct task_worker *tw)
{
    if (tw->pend) {
        chunk_put(tw, tw->pend, tw->npend);
        tw->pend = NULL;
    }
}

WEFT_INLINE void rec_free(struct weft__worker *w, struct weft_task *t)
{
    struct chunk *c = chunk_of(t);
    if (!w) { /* not on a worker: error paths only */
        chunk_put(NULL, c, 1);
        return;
    }
    struct task_worker *tw = tw_of(w);
    if (WEFT_LIKELY(c == tw->pend)) {
        tw->npend++;
        return;
    }
    flush(tw);
    tw->pend = c;
    tw->npend = 1;
}

void *weft__task_rec_alloc(struct weft__worker *w)
{
    return rec_alloc(w);
}

void weft__task_rec_free(struct weft__worker *w, void *rec)
{
    rec_free(w, rec);
}

/* ---- units, counters ------------------------------------------------------------ */

/* Owner-only counters: load, add, store (release where finalize pairs). */
#define BUMP(field, order)                                                                         \
    atomic_store_explicit(&(field), atomic_load_explicit(&(field), memory_order_relaxed) + 1, order)

void weft__task_open(struct weft__worker *w)
{
    if (w)
        BUMP(tw_of(w)->nopen, memory_order_release); /* pairs with weft__task_opened */
    else
        atomic_fetch_add_explicit(&ext_open, 1, memory_order_release);
}

void weft__task_close(struct weft__worker *w)
{
    /* Closes happen on workers only: a task runs on one, a ring call
     * completes on one, and a fallback call's thread runs on one. */
    BUMP(tw_of(w)->nclosed, memory_order_release); /* pairs with weft__task_closed */
}

void weft__task_count_call(struct weft__worker *w)
{
    if (w)
        BUMP(tw_of(w)->ncalls, memory_order_relaxed); /* a statistic */
    else
        atomic_fetch_add_explicit(&ext_calls, 1, memory_order_relaxed);
}

uint64_t weft__task_closed(void)
{
    uint64_t n = 0;
    for (int i = 0; i < ntws; i++)
        n += atomic_load_explicit(&tws[i]->nclosed, memory_order_acquire);
    return n;
}

uint64_t weft__task_opened(void)
{
    uint64_t n = atomic_load_explicit(&ext_open, memory_order_acquire);
    for (int i = 0; i < ntws; i++)
        n += atomic_load_explicit(&tws[i]->nopen, memory_order_acquire);
    return n;
}

void weft__task_counters(struct weft__task_counters *out)
{
    memset(out, 0, sizeof *out);
    out->calls = atomic_load_explicit(&ext_calls, memory_order_relaxed);
    for (int i = 0; i < ntws; i++) {
        out->run += atomic_load_explicit(&tws[i]->nrun, memory_order_relaxed);
        out->stolen += atomic_load_explicit(&tws[i]->nstolen, memory_order_relaxed);
        out->calls += atomic_load_explicit(&tws[i]->ncalls, memory_order_relaxed);
    }
}

int64_t weft__task_kernel_calls(void)
{
    /* acquire: pairs with the release decrement in kernel_leave. */
    return atomic_load_explicit(&kernel_busy, memory_order_acquire);
}

/* ---- readying ---------------------------------------------------------------------- */

/* t's counter reached zero on the caller's worker w (NULL: a plain kernel
 * thread, or one acting for a user thread off the workers). */
static void make_ready(struct weft__worker *w, struct weft_task *t)
{
    weft__task_open(w);
    if (WEFT_LIKELY(w != NULL)) {
        struct task_worker *tw = tw_of(w);
        if (tw->depth && !tw->next) {
            tw->next = t; /* child-first: runs next on this worker */
            return;
        }
        if (WEFT_UNLIKELY(!weft__deque_try_push(&tw->dq, t))) {
            t->next = tw->overflow;
            tw->overflow = t;
        }
        /* A user thread readied it: the thread's next yield lets the
         * scheduler context run it, even if other threads are ready.
         * relaxed: only w reads the bit, at its scheduling points. */
        if (w->current && !(atomic_load_explicit(&w->attn, memory_order_relaxed) & WEFT__ATTN_TASK))
            atomic_fetch_or_explicit(&w->attn, WEFT__ATTN_TASK, memory_order_relaxed);
        weft__maybe_wake();
        return;
    }
    t->next = NULL;
    weft__lock_acquire(&glock);
    if (inj_tail)
        inj_tail->next = t;
    else
        inj_head = t;
    inj_tail = t;
    atomic_fetch_add_explicit(&ninj, 1, memory_order_relaxed);
    weft__lock_release(&glock);
    /* Workers busy with user threads take it at their threads' next yield
     * (WEFT__ATTN_TASK; relaxed: a hint, as for the threads' injection). */
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        if (!(atomic_load_explicit(&v->attn, memory_order_relaxed) & WEFT__ATTN_TASK))
            atomic_fetch_or_explicit(&v->attn, WEFT__ATTN_TASK, memory_order_relaxed);
    }
    /* seq_cst: as weft__inject: no worker may be awake to see it. */
    weft__fence();
    if (atomic_load_explicit(&weft__rt.nsleeping, memory_order_relaxed) > 0)
        weft__wake_one();
}

/* A plain kernel thread (no worker, no user thread) enters a task call:
 * counted before it reads the state (Dekker with finalize's stopping CAS,
 * as spawns from such threads). Returns 1 when it must leave again. */
static int plain_kernel(struct weft__worker *w)
{
    return !w && !weft__tls_user();
}

static int kernel_enter(void)
{
    /* seq_cst: pairs with finalize's stopping CAS. */
    atomic_fetch_add_explicit(&kernel_busy, 1, memory_order_seq_cst);
    return atomic_load_explicit(&weft__rt.state, memory_order_seq_cst) == RT_RUNNING;
}

static void kernel_leave(void)
{
    /* release: what we queued is counted (ext_open) when finalize reads it. */
    atomic_fetch_sub_explicit(&kernel_busy, 1, memory_order_release);
}

/* One continuation from the caller's worker w. */
int weft__task_send(struct weft__worker *w, weft_task *t)
{
    /* acq_rel: release publishes what the sender wrote; the last sender's
     * acquire makes every sender's writes visible to fn (through the
     * queue's release/acquire pair when another worker runs it). */
    if (atomic_fetch_sub_explicit(&t->count, 1, memory_order_acq_rel) == 1)
        make_ready(w, t);
    return 0;
}

int weft_task_continue(weft_task *t)
{
    if (WEFT_UNLIKELY(!t))
        return EINVAL;
    struct weft__worker *w = weft__tls_worker;
    if (WEFT_LIKELY(w != NULL))
        return weft__task_send(w, t); /* a worker exists only while the runtime runs */
    if (!plain_kernel(w)) {
        if (atomic_load_explicit(&weft__rt.state, memory_order_acquire) != RT_RUNNING)
            return EAGAIN;
        return weft__task_send(NULL, t);
    }
    int rc = EAGAIN;
    if (kernel_enter())
        rc = weft__task_send(NULL, t);
    kernel_leave();
    return rc;
}

static int create(struct weft__worker *w, weft_task **out, weft_task_fn fn, void *arg,
                  unsigned count)
{
    struct weft_task *t = rec_alloc(w);
    if (WEFT_UNLIKELY(!t))
        return ENOMEM;
    t->fn = fn;
    t->arg = arg;
    /* relaxed: published with the handle (the caller's own synchronisation)
     * or with the queue that readies it. */
    atomic_store_explicit(&t->count, count, memory_order_relaxed);
    if (out)
        *out = t;
    if (count == 0)
        make_ready(w, t);
    return 0;
}

int weft_task_create(weft_task **out, weft_task_fn fn, void *arg, unsigned count)
{
    if (WEFT_UNLIKELY(!fn || (!out && count)))
        return EINVAL;
    struct weft__worker *w = weft__tls_worker;
    if (WEFT_LIKELY(w != NULL))
        return create(w, out, fn, arg, count);
    if (!plain_kernel(w)) {
        if (atomic_load_explicit(&weft__rt.state, memory_order_acquire) != RT_RUNNING)
            return EAGAIN;
        return create(NULL, out, fn, arg, count);
    }
    int rc = EAGAIN;
    if (kernel_enter())
        rc = create(NULL, out, fn, arg, count);
    kernel_leave();
    return rc;
}

/* ---- running ----------------------------------------------------------------------- */

/* Runs t and the successors it readies child-first, on w's scheduler
 * context. Returns how many ran. */
static unsigned run_chain(struct weft__worker *w, struct task_worker *tw, struct weft_task *t)
{
    unsigned n = 0;
    do {
        tw->next = NULL;
        if (WEFT_UNLIKELY(weft__trace_on)) /* WEFT_TRACE: a "task" instant per task */
            weft__trace(w, WEFT__EV_TASK, NULL, 0);
        tw->depth = 1;
        t->fn(t->arg);
        tw->depth = 0;
        rec_free(w, t);
        weft__task_close(w); /* after fn's own opens: finalize reads closes first */
        n++;
        t = tw->next;
        /* A long run of tasks still submits the ring's queued requests and
         * reaps completions now and then (a completion readies its task
         * into the deque: depth is 0 here). relaxed: only w reads IO. */
        if (WEFT_UNLIKELY((++tw->tick % ATTEND_EVERY) == 0) &&
            (atomic_load_explicit(&w->attn, memory_order_relaxed) & WEFT__ATTN_IO))
            weft__rt.io->attend(w);
    } while (t);
    /* a statistic: relaxed */
    atomic_store_explicit(&tw->nrun, atomic_load_explicit(&tw->nrun, memory_order_relaxed) + n,
                          memory_order_relaxed);
    return n;
}

/* The injection list, moved to w's deque (its order kept: the oldest is
 * stolen first). */
static WEFT_NOINLINE void take_injected(struct weft__worker *w, struct task_worker *tw)
{
    weft__lock_acquire(&glock);
    struct weft_task *t = inj_head;
    inj_head = inj_tail = NULL;
    atomic_store_explicit(&ninj, 0, memory_order_relaxed);
    weft__lock_release(&glock);
    while (t) {
        struct weft_task *n = t->next;
        if (!weft__deque_try_push(&tw->dq, t)) {
            t->next = tw->overflow;
            tw->overflow = t;
        }
        t = n;
    }
    weft__maybe_wake();
}

static struct weft_task *pop_local(struct task_worker *tw)
{
    struct weft_task *t = weft__deque_size_hint(&tw->dq) > 0 ? weft__deque_pop_any(&tw->dq) : NULL;
    if (!t && WEFT_UNLIKELY(tw->overflow != NULL)) {
        t = tw->overflow;
        tw->overflow = t->next;
    }
    return t;
}

static struct weft_task *steal_task(struct weft__worker *w, struct task_worker *tw)
{
    int n = ntws;
    if (n < 2)
        return NULL;
    int start = (int)(weft__rand_next(&tw->rng) % (uint64_t)n);
    for (int i = 0; i < n; i++) {
        struct task_worker *v = tws[(start + i) % n];
        if (v == tw)
            continue;
        struct weft_task *t = weft__deque_steal_retry(&v->dq);
        if (t) {
            BUMP(tw->nstolen, memory_order_relaxed); /* a statistic */
            if (weft__deque_size_hint(&v->dq) > 0)
                weft__maybe_wake(); /* more left there: pass the wake on */
            return t;
        }
    }
    (void)w;
    return NULL;
}

/* The scheduler's hook: w's ready tasks, then (steal) one taken from
 * another worker and what it readies. */
static int run_tasks(struct weft__worker *w, int steal)
{
    struct task_worker *tw = tw_of(w);
    /* relaxed: set and cleared on w's own kernel thread only */
    if (atomic_load_explicit(&w->attn, memory_order_relaxed) & WEFT__ATTN_TASK)
        atomic_fetch_and_explicit(&w->attn, ~WEFT__ATTN_TASK, memory_order_relaxed);
    if (WEFT_UNLIKELY(atomic_load_explicit(&ninj, memory_order_relaxed) > 0))
        take_injected(w, tw);
    unsigned n = 0;
    struct weft_task *t;
    while ((t = pop_local(tw)) != NULL)
        n += run_chain(w, tw, t);
    if (!n && steal && (t = steal_task(w, tw)) != NULL) {
        n = run_chain(w, tw, t);
        while ((t = pop_local(tw)) != NULL)
            n += run_chain(w, tw, t);
    }
    if (n)
        flush(tw); /* out of tasks: let emptied chunks be reused */
    return (int)n;
}

static int has_work(void)
{
    if (atomic_load_explicit(&ninj, memory_order_relaxed) > 0)
        return 1;
    for (int i = 0; i < ntws; i++)
        if (weft__deque_size_hint(&tws[i]->dq) > 0 || tws[i]->overflow)
            return 1;
    return 0;
}

int weft__task_local(struct weft__worker *w)
{
    struct task_worker *tw = tw_of(w);
    return atomic_load_explicit(&ninj, memory_order_relaxed) > 0 ||
           weft__deque_size_hint(&tw->dq) > 0 || tw->overflow;
}

const struct weft__sched_task weft__task_sched = {
    .run = run_tasks,
    .has_work = has_work,
};

/* ---- life cycle ---------------------------------------------------------------------- */

int weft__task_init(int nworkers)
{
    tws = calloc((size_t)nworkers, sizeof *tws);
    if (!tws)
        return ENOMEM;
    ntws = nworkers;
    for (int i = 0; i < nworkers; i++) {
        struct task_worker *tw = aligned_alloc(WEFT_CACHELINE, sizeof *tw);
        if (tw)
            memset(tw, 0, sizeof *tw);
        if (!tw || weft__deque_init(&tw->dq, DQ_INIT, NULL) != 0) {
            free(tw);
            weft__task_fini();
            return ENOMEM;
        }
        tw->rng = 0x2545F4914F6CDD1Dull * (uint64_t)(i + 1);
        tws[i] = tw;
    }
    return 0;
}

void weft__task_fini(void)
{
    for (int i = 0; tws && i < ntws; i++)
        if (tws[i]) {
            weft__deque_destroy(&tws[i]->dq);
            free(tws[i]);
        }
    free(tws);
    tws = NULL;
    ntws = 0;
    /* Every record lives in a chunk: the unfired tasks' records go too. */
    while (chunks) {
        struct chunk *c = chunks;
        chunks = c->all;
        free(c);
    }
    spare = NULL;
    memset(&ext_arena, 0, sizeof ext_arena);
    inj_head = inj_tail = NULL;
    atomic_store_explicit(&ninj, 0, memory_order_relaxed);
    atomic_store_explicit(&ext_open, 0, memory_order_relaxed);
    atomic_store_explicit(&ext_calls, 0, memory_order_relaxed);
}
