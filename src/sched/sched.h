/* sched.h: workers, the runtime's global state and the scheduler's hot path
 * (the switch itself: sched/switch.h).
 *
 * Design
 * ------
 * A worker is a set of queues with a scheduler context on a stack slot of its
 * own, run by one kernel thread at a time (worker 0 by the caller of
 * weft_init; it may move to another kernel thread around weft_blocking, see
 * machine.c). User threads switch directly to one another when the
 * worker has local work, and to the scheduler context only when it has none;
 * the scheduler then takes injected threads, steals, spins briefly and
 * sleeps on a futex.
 *
 * Hand-off ("xfer"): a thread that leaves the CPU cannot publish itself
 * before its registers are saved, or a thief could resume a half-saved
 * context. So every switch carries an xfer word (a tagged pointer) to the
 * context being resumed, which acts on the departed thread on its own stack
 * (weft__ctx_resumed: the switch calls it on the resumed side, see
 * arch/context.h):
 *   PUSH  t   t is ready (work-first spawn: the parent's continuation)
 *   YIELD t   t goes behind every other ready thread of this worker
 *   PARK  p   run p->commit (the wait object's publish step); maybe resume
 *   EXIT  t   t has finished: wake its joiner or free it (detached)
 * The same mechanism gives "the child's exit resumes the joiner directly":
 * an exiting thread whose joiner is parked switches straight to it.
 *
 * Pools: where a ready thread waits is the pool's business (push, push_yield,
 * pop, steal). The default pool is a Chase-Lev deque per worker (LIFO for
 * the owner, FIFO for thieves) plus a small locked FIFO per worker for
 * yielded threads, which thieves may also take. Its operations are inlined
 * on the hot path; another pool (the seed's shared FIFO queue) plugs in
 * through struct weft__pool_ops without touching the scheduler.
 *
 * Invariants
 *  - w->current is the user thread running on w, NULL while w runs its
 *    scheduler context. Written only by the kernel thread running w.
 *  - A thread is in at most one pool or wait queue, and is never in one
 *    while its context is live on a CPU (xfer guarantees it).
 *  - The initial thread is pinned to worker 0: it is never in a deque and
 *    thieves never take it from worker 0's yield queue.
 */
#ifndef WEFT_SCHED_SCHED_H
#define WEFT_SCHED_SCHED_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "arch/context.h"
#include "base/base.h"
#include "base/fifo.h"
#include "desc/desc.h"
#include "sched/deque.h"
#include "sched/ids.h"
#include "sched/park.h"
#include "sched/san.h"
#include "stack/stack.h"

struct weft__worker;

/* The section of the user threads' first frames (thread.c): preempt.c
 * tells a thread's own frames from libweft's below them by it. */
#define WEFT_ENTRY __attribute__((section("weft.entry"), noinline))

/* The scheduling-policy plug-in. All operations run on a worker's kernel
 * thread (w is the caller's worker) except push_remote. */
struct weft__pool_ops {
    const char *name;
    void (*init)(void);    /* at weft_init, before any worker runs */
    void (*destroy)(void); /* at weft_finalize, after the workers stopped */
    void (*push)(struct weft__worker *w, struct weft_thread *t);       /* ready */
    void (*push_yield)(struct weft__worker *w, struct weft_thread *t); /* behind all ready ones */
    void (*push_front)(struct weft__worker *w,
                       struct weft_thread *t); /* ahead of all (may be NULL) */
    struct weft_thread *(*pop)(struct weft__worker *w);
    struct weft_thread *(*steal)(struct weft__worker *thief); /* from anywhere else; may be NULL */
    int (*has_work)(struct weft__worker *w);  /* racy hint for idling: work w could take */
    int (*has_ready)(struct weft__worker *w); /* racy hint: w's own pool has a thread ready */
    void (*share)(struct weft__worker *w);    /* the default pool: serves WEFT__ATTN_WANT
                                                 (its yielded threads where thieves find
                                                 them); NULL for the others */
};

/* What a worker needs of the I/O layer, which sits above the scheduler
 * (io/uring.c fills it; weft_init registers it before any worker runs). */
struct weft__sched_io {
    void (*attend)(struct weft__worker *w);   /* WEFT__ATTN_IO is set: submit, reap */
    int (*pending)(struct weft__worker *w);   /* I/O queued or in flight on w (owner) */
    int (*waiting)(struct weft__worker *w);   /* 1: completions to reap or requests to
                                                  submit in w's ring, which only w acts on;
                                                  2: requests in flight only; 0: none (any
                                                  thread, racy: the monitor) */
    int (*idle_wait)(struct weft__worker *w); /* idle with I/O in flight: wait in the ring;
                                                  0 without waiting (then sleep on the futex) */
    void (*wake)(struct weft__worker *v);     /* ends v's idle_wait */
};

/* What a worker needs of the task layer (task/task.c), which sits above the
 * scheduler (weft_init registers it before any worker runs). Tasks run on
 * the scheduler context's stack, between user threads. */
struct weft__sched_task {
    int (*run)(struct weft__worker *w, int steal); /* runs w's ready tasks (steal: then others');
                                                      returns how many ran */
    int (*has_work)(void);                         /* racy hint for idling: a task is ready */
};

struct weft__rt {
    _Atomic int state;                      /* RT_OFF / RT_STARTING / RT_RUNNING / RT_STOPPING */
    int nworkers;                           /* immutable while running */
    int policy;                             /* WEFT_WORK_FIRST / WEFT_HELP_FIRST; immutable */
    size_t stack_size;                      /* default usable stack; immutable */
    struct weft__worker **workers;          /* immutable while running */
    const struct weft__pool_ops *dflt_pool; /* the inlined default pool's ops for the slow
                                               paths (policy/pool_ws.c); set by weft_init */
    const struct weft__pool_ops *pool;      /* NULL = the inlined default pool (pool_ws.c); a
                                          plug-in set at init, or the priority pool once a
                                          priority is used (pool_prio.c): relaxed __atomic
                                          accesses (weft__pool), as it may change while
                                          workers run; every worker's GATE_POOL follows */
    struct weft_thread *main;               /* the initial thread; immutable */
    pthread_t main_pthread;                 /* the kernel thread that called weft_init */

    _Atomic int stopping;               /* set by finalize; workers leave their loop */
    _Atomic int nsleeping WEFT_ALIGNED; /* workers in futex sleep; seq_cst */
    _Atomic int waking;                 /* 1 while a wake_one is in flight */

    weft__lock inj_lock WEFT_ALIGNED; /* injection queue (plain kernel threads) */
    struct weft__tqueue inj[4];       /* under inj_lock; one per class (BACKGROUND first),
                                         taken highest first */
    _Atomic size_t ninj;              /* hint, updated under inj_lock */

    _Atomic uint64_t ext_spawned;    /* spawns from plain kernel threads */
    _Atomic int64_t bound_live;      /* bound threads not yet finished */
    const struct weft__sched_io *io; /* io/'s hooks; set by weft_init, immutable while running */
    const struct weft__sched_task *task; /* task/'s hooks; as io */
    void (*preempt_class)(int c);        /* policy/preempt.c's weft__preempt_for_class, set by
                                     weft_init: a thread of class c was injected while every
                                     worker runs; a plug-in pool's workers may preempt one
                                     of a lower class */
    int (*finalize)(void);               /* runtime/'s weft_finalize, set by weft_init:
                                           weft_exit of the initial thread ends the
                                           runtime through it (thread/ is below runtime/) */
    void (*exited)(struct weft__worker *w,
                   struct weft_thread *t); /* thread/'s weft__finish_exit, set by weft_init:
                                              the context that follows an exiting thread
                                              acts on its XF_EXIT through it (the join
                                              protocol is thread/'s, above sched/) */
};

enum { RT_OFF, RT_STARTING, RT_RUNNING, RT_STOPPING };

extern struct weft__rt weft__rt WEFT_INTERNAL; /* hidden: direct %rip access, no GOT load */
extern __thread struct weft__worker *weft__tls_worker __attribute__((tls_model("initial-exec")));
/* The bound thread this kernel thread runs (thread.c, bound_main); NULL on
 * every other kernel thread. */
extern __thread struct weft_thread *weft__tls_bound __attribute__((tls_model("initial-exec")));
/* The user thread whose weft_blocking call this kernel thread runs while its
 * worker is lent to another kernel thread (machine.c); NULL otherwise. */
extern __thread struct weft_thread *weft__tls_lent __attribute__((tls_model("initial-exec")));
#if WEFT_POSIX
/* The glibc thread block the next thread this kernel thread spawns runs
 * on (thread.c: init_thread; NULL: none); set by src/posix around a spawn. */
extern __thread void *weft__tls_spawn_fs __attribute__((tls_model("initial-exec")));
#endif

/* The home of the machine (kernel thread) that runs this code, NULL on the
 * main kernel thread and plain ones (policy/machine.c sets it). */
extern __thread struct weft__home *weft__tls_home __attribute__((tls_model("initial-exec")));

/* The user thread a kernel thread without a worker acts as: a bound thread,
 * or the caller inside weft_blocking (weft_self() answers it, and locks it
 * takes are its own); NULL for a plain kernel thread. */
static inline struct weft_thread *weft__tls_user(void)
{
    return weft__tls_bound ? weft__tls_bound : weft__tls_lent;
}

#define WEFT__ATTN_MAIL    1u /* the mailbox is not empty */
#define WEFT__ATTN_WANT    2u /* a thief asks for yielded threads */
#define WEFT__ATTN_IO      4u /* this worker has I/O queued or in flight (owner only) */
#define WEFT__ATTN_RECLAIM 8u /* worker 0: the main kernel thread claims it back (machine.c) */
/* A count, not a bit: threads of this worker running rescued, without it
 * (machine.c); each adds WEFT__ATTN_RESCUE_ONE while away. */
#define WEFT__ATTN_RESCUE     0xff00u
#define WEFT__ATTN_RESCUE_ONE 0x0100u
#define WEFT__ATTN_TASK                                                                            \
    16u /* tasks wait for this worker's scheduler context (task/task.c: readied by one
           of its user threads, or by a plain kernel thread): its threads' next yield goes
           through it, which runs them and clears the bit (the owner clears) */

/* gate bits (w->gate): conditions of the whole runtime, copied into every
 * worker so that the hot path needs no second load. */
#define WEFT__GATE_POOL                                                                            \
    1u /* a plug-in pool is in use: never the inlined default pool (set at init) */
#define WEFT__GATE_INJ                                                                             \
    2u /* the injection queue may be non-empty: set on every worker by
                              weft__inject, cleared by the owner when it finds the queue
                              empty (both under inj_lock) */
#define WEFT__GATE_CANARY                                                                          \
    4u /* canary-checked stacks exist: weft__pick_slow checks the
                                departing thread's canary; set by stack.c, never cleared */
#define WEFT__GATE_TRACE                                                                           \
    8u /* WEFT_TRACE: every pick and exit takes the slow paths, which record
                                events (sched/events.h); set by weft_init, never cleared */
#define WEFT__GATE_CXX                                                                             \
    16u /* the C++ runtime is loaded: yields, parks and exits take the slow paths,
                                whose switches carry each thread's exception state (sched/eh.h);
                                set by weft_init, never cleared */
/* weft__rt.policy bit while tracing: spawns take spawn_any (sched/events.h) */
#define WEFT__POLICY_TRACED 0x100
/* weft__rt.policy bit with the C++ runtime loaded: spawns take spawn_cxx
 * (thread.c), which carries the spawner's exception state (sched/eh.h) */
#define WEFT__POLICY_CXX 0x200

/* xfer tags (low bits of a 64-byte aligned descriptor or 8-aligned record).
 * A NULL xfer is no hand-off; EXIT, the most frequent, is the untagged
 * pointer (one test, no tag to strip). */
enum { XF_EXIT = 0, XF_PUSH = 1, XF_YIELD = 2, XF_PARK = 3, XF_FRONT = 5 };
#define XF_MASK ((uintptr_t)7)

struct weft__parkx {
    struct weft_thread *t;
    weft__commit_fn commit;
    void *arg;
} __attribute__((aligned(8)));

/* ---- slow paths (sched.c) ------------------------------------------------ */
void weft__wake_one(void);
void weft__wake_worker(struct weft__worker *v);
void weft__inject(struct weft_thread *t);
struct weft_thread *weft__inject_pop(void);
void weft__take_injected(struct weft__worker *w);
void weft__mail(struct weft__worker *v, struct weft_thread *t);
void weft__attend(struct weft__worker *w);
struct weft_thread *weft__pick_slow(struct weft__worker *w);
/* A worker's scheduler loop: runs w's tasks and threads, steals, idles,
 * until the main kernel thread claims w back (WEFT__LOOP_RECLAIMED: the
 * caller releases w, and may call the loop again once it has it back) or
 * finalize stops the workers (WEFT__LOOP_STOPPED). The machines
 * (policy/machine.c) run it on the scheduler context's stack. */
enum { WEFT__LOOP_STOPPED, WEFT__LOOP_RECLAIMED };
int weft__worker_loop(struct weft__worker *w);
void weft__push_front(struct weft__worker *w, struct weft_thread *t);
/* A worker deque's overflow (weft__deque_init): x waits in the worker's
 * yield FIFO, linked through its descriptor, with no allocation. */
void weft__deque_overflow(struct weft__deque *d, struct weft_thread *x);

/* The pool in use: a plug-in, or the default one's ops. */
static inline const struct weft__pool_ops *weft__pool(void)
{
    /* relaxed: the priority pool keeps the default pool's queues as its
     * NORMAL class, so a caller that still sees the default pool queues a
     * thread where the new pool finds it. */
    const struct weft__pool_ops *p = __atomic_load_n(&weft__rt.pool, __ATOMIC_RELAXED);
    return p ? p : weft__rt.dflt_pool;
}

/* 1 when a plug-in pool (not the inlined default one) is in use. */
static inline int weft__pool_plugged(void)
{
    return __atomic_load_n(&weft__rt.pool, __ATOMIC_RELAXED) != NULL;
}

/* 1 when w has a thread ready to run of its own (its pool, mailbox, or the
 * injection queue): a racy hint, on w's kernel thread. */
int weft__has_ready(struct weft__worker *w);

/* A work-first child's parent became ready through a plug-in pool: the
 * child yields to it at once if the parent's class is higher (the spawn
 * then queues the child, as help-first would). On the child's stack. */
void weft__parent_ready_slow(struct weft__worker *w, struct weft_thread *parent,
                             struct weft_thread *child);

/* The class t is scheduled at (relaxed: a hint, see thread.h). */
static inline int weft__cls(const struct weft_thread *t)
{
    return __atomic_load_n(&t->pcls, __ATOMIC_RELAXED);
}

/* Yields to the head of the run queue: the next ready thread runs, then the
 * caller, ahead of every other ready thread. */
void weft__yield_front(void);

/* Sets t's wait kind (thread->wait, WEFT__WAIT_*); t is the caller about
 * to park, or a parked thread the caller wakes. */
static inline void weft__thread_wait(struct weft_thread *t, uint8_t kind)
{
    __atomic_store_n(&t->wait, kind, __ATOMIC_RELAXED);
}

static inline uint8_t weft__thread_waits(const struct weft_thread *t)
{
    return __atomic_load_n(&t->wait, __ATOMIC_RELAXED);
}

/* ---- the hot path ------------------------------------------------------- */

/* Workers of the running runtime, 0 when it is not running (as
 * weft_num_workers, for the layers below runtime/). */
static inline int weft__nworkers_running(void)
{
    /* acquire: pairs with the release of the running state (weft_init). */
    return atomic_load_explicit(&weft__rt.state, memory_order_acquire) == RT_RUNNING
               ? weft__rt.nworkers
               : 0;
}

static inline struct weft__worker *weft__worker0(void)
{
    return weft__rt.workers[0];
}

/* Wakes an idle worker if any sleeps: called after making work visible. */
WEFT_INLINE void weft__maybe_wake(void)
{
    if (weft__rt.nworkers > 1) {
        /* seq_cst: orders the work we just published before reading
         * nsleeping; pairs with the seq_cst increment in go_to_sleep, which
         * re-checks every queue after it (Dekker: one side sees the other). */
        weft__fence();
        if (WEFT_UNLIKELY(atomic_load_explicit(&weft__rt.nsleeping, memory_order_relaxed) > 0))
            weft__wake_one();
    }
}

/* 1 while the main kernel thread claims worker w back (machine.c): w's
 * current thread must leave through the scheduler context, which releases
 * w, even when it found no other thread to switch to. relaxed: a hint; the
 * bit stays set until the scheduler context acts on it. */
WEFT_INLINE int weft__reclaimed(struct weft__worker *w)
{
    return (atomic_load_explicit(&w->attn, memory_order_relaxed) & WEFT__ATTN_RECLAIM) != 0;
}

/* Owner-only FIFO of yielded (and pinned) threads (w->yq: a circle named
 * by its tail). A queued thread's worker is w: a yield that takes it needs
 * no store for that. */
/* Links t in behind the tail (where the circle's head follows it); w->yq
 * is the caller's to update. */
WEFT_INLINE void weft__yq_link(struct weft__worker *w, struct weft_thread *t,
                               struct weft_thread *tail)
{
    t->worker = w;
    if (tail) {
        t->next = tail->next;
        tail->next = t;
    } else {
        t->next = t;
    }
}

/* Behind every other queued thread: linked in, t becomes the tail. */
WEFT_INLINE void weft__yq_push(struct weft__worker *w, struct weft_thread *t)
{
    weft__yq_link(w, t, w->yq);
    __atomic_store_n(&w->yq, t, __ATOMIC_RELAXED); /* racy hint for thieves */
}

/* Ahead of every other queued thread: linked in, the tail stays. */
WEFT_INLINE void weft__yq_push_head(struct weft__worker *w, struct weft_thread *t)
{
    struct weft_thread *tail = w->yq;
    weft__yq_link(w, t, tail);
    if (!tail)
        __atomic_store_n(&w->yq, t, __ATOMIC_RELAXED);
}

WEFT_INLINE struct weft_thread *weft__yq_pop(struct weft__worker *w)
{
    struct weft_thread *tail = w->yq;
    if (!tail)
        return NULL;
    struct weft_thread *t = tail->next;
    if (t == tail)
        __atomic_store_n(&w->yq, NULL, __ATOMIC_RELAXED);
    else
        tail->next = t->next;
    return t;
}

/* Racy hint (any thread): w has yielded threads. */
WEFT_INLINE int weft__yq_hint(struct weft__worker *w)
{
    return __atomic_load_n(&w->yq, __ATOMIC_RELAXED) != NULL;
}

void weft__make_ready_slow(struct weft__worker *w, struct weft_thread *t);

/* 1 when weft__make_ready may take the inlined default pool. */
WEFT_INLINE int weft__make_ready_inline(struct weft__worker *w, struct weft_thread *t)
{
    /* GATE_POOL mirrors rt.pool (see weft__pool). A relaxed read: outside
     * ThreadSanitizer builds a plain one of the aligned word, which x86
     * makes atomic and the compiler folds into the test (an atomic load
     * costs the spawn path one more instruction). */
#if defined(WEFT_SANITIZE_THREAD) || !defined(__x86_64__)
    uint32_t gate = atomic_load_explicit(&w->gate, memory_order_relaxed);
#else
    uint32_t gate = *(const uint32_t *)&w->gate;
#endif
    return !(gate & WEFT__GATE_POOL) && !(t->pinned && w->id != 0);
}

/* The default pool's make-ready, once weft__make_ready_inline said yes. */
WEFT_INLINE void weft__make_ready_default(struct weft__worker *w, struct weft_thread *t)
{
    if (WEFT_UNLIKELY(t->pinned)) {
        weft__yq_push(w, t);
        return;
    }
    weft__deque_push(&w->dq, t);
    weft__maybe_wake();
}

/* Makes t runnable; the caller runs on worker w and t's context is saved.
 * Inline: the default pool's deque push, and the pinned initial thread on
 * worker 0 (its yield FIFO). Every call is the last thing a branch does, so
 * callers keep no value across it. */
WEFT_INLINE void weft__make_ready(struct weft__worker *w, struct weft_thread *t)
{
    if (WEFT_UNLIKELY(!weft__make_ready_inline(w, t))) {
        weft__make_ready_slow(w, t);
        return;
    }
    weft__make_ready_default(w, t);
}

/* weft__make_ready for the parent of a work-first child (on the child's
 * stack, before its function runs): a plug-in pool may make the child
 * yield to a parent of a higher class (weft__parent_ready_slow). */
WEFT_INLINE void weft__make_ready_parent(struct weft__worker *w, struct weft_thread *parent,
                                         struct weft_thread *child)
{
    if (WEFT_UNLIKELY(!weft__make_ready_inline(w, parent))) {
        weft__parent_ready_slow(w, parent, child);
        /* its calls' return addresses into libweft would stay in words the
         * child's frames never write, and refuse the child's rescues */
        weft__stack_scrub_below();
        return;
    }
    weft__make_ready_default(w, parent);
}

/* Queues t behind every other ready thread of w. t's context must be saved
 * unless the default pool is in use (its FIFO is w's own: a yielding thread
 * may queue itself before it switches). */
WEFT_INLINE void weft__push_yield(struct weft__worker *w, struct weft_thread *t)
{
    if (WEFT_LIKELY(!weft__pool_plugged()))
        weft__yq_push(w, t);
    else
        weft__pool()->push_yield(w, t);
}

/* The default pool's own pick: deque first (LIFO), then the yield FIFO. */
WEFT_INLINE struct weft_thread *weft__pick_default(struct weft__worker *w)
{
    if (weft__deque_size_hint(&w->dq) > 0) {
        struct weft_thread *t = weft__deque_pop(&w->dq);
        if (t)
            return t;
    }
    return weft__yq_pop(w);
}

/* The next thread for w from its own pool, or NULL. One test covers the
 * mailbox and every other attention bit (attn), the injection queue and a
 * plug-in pool (gate): any of them takes weft__pick_slow. */
WEFT_INLINE struct weft_thread *weft__pick_local(struct weft__worker *w)
{
    /* relaxed: a hint; weft__attend re-reads under the mailbox lock, and
     * the injection queue is read under inj_lock. */
    if (WEFT_UNLIKELY(atomic_load_explicit(&w->attn_any, memory_order_relaxed)))
        return weft__pick_slow(w);
    return weft__pick_default(w);
}

/* 1 when the caller runs a zero-wait task (task/task.c): on a worker's
 * scheduler context, where no user thread is current. A call that would
 * wait fails there with EPERM instead (weft.h): a task has no stack of its
 * own to park, and a wait in the kernel would stall the worker. */
WEFT_INLINE int weft__in_task(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w && !w->current;
}

/* The worker the calling code runs on right now. After a switch the thread
 * may run on another kernel thread: a worker kept across a switch is stale
 * (the switch code itself gets it from the resumer: weft__ctx_resumed). */
WEFT_INLINE struct weft__worker *weft__worker_now(void)
{
    return weft__tls_worker;
}

#endif
