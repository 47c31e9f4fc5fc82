/* runtime.c: weft_init / weft_finalize (configuration and environment: config.c).
 *
 * weft_init turns the caller's flow into the initial user thread, pinned to
 * worker 0, whose kernel thread is the caller itself; workers 1..n-1 start
 * on kernel threads of their own (machines, policy/machine.c). Every
 * worker's scheduler context gets a stack slot of its own; worker 0's is
 * first entered when the initial thread has nothing to switch to.
 * weft_finalize waits (yielding, then napping) until every other user thread
 * has finished, stops the workers and releases everything.
 */
#include "runtime/runtime.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/io.h"
#include "io/poller.h"
#include "observe/observe.h"
#include "os/futex.h"
#include "os/kstack.h"
#include "policy/machine.h"
#include "policy/monitor.h"
#include "policy/preempt.h"
#include "policy/prio.h"
#include "runtime/config.h"
#include "sched/sched.h"
#include "sched/switch.h"
#include "stack/stack.h"
#include "sync/timer.h"
#include "sync/wait.h"
#include "task/task.h"
#include "thread/thread.h"

#define SCHED_STACK ((size_t)256 << 10)
/* Seeds of the workers' victim-selection generators (xorshift64, which
 * must not start at 0): id + 1 times 2^64 divided by the golden ratio, the
 * Fibonacci-hashing constant, spreads them over the whole word. */
#define RNG_SEED_MUL WEFT_GOLDEN64
#define DEQUE_SLOTS  256 /* a worker's deque to start with; it grows */

/* The variables that are not weft_config fields (runtime/config.h): written
 * by weft_init before any worker starts, read-only until the next one. */
static struct weft__env env;

/* ---- workers ------------------------------------------------------------- */

/* Workers 1..n-1 are pinned round-robin to the CPUs of the caller's mask,
 * starting after the CPU the caller runs on; worker 0 is the caller's own
 * kernel thread and keeps its affinity. Without pinning, a new worker may
 * share a CPU with the caller for a whole time slice and steal nothing.
 * The machine that runs a worker pins itself to the worker's CPU (a worker
 * may move between kernel threads: policy/machine.c). WEFT_AFFINITY=0
 * disables it. */
static void assign_cpus(struct weft__rt *rt)
{
    for (int i = 0; i < rt->nworkers; i++)
        rt->workers[i]->cpu = -1;
    if (!env.affinity)
        return;
    cpu_set_t mask;
    if (pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) != 0)
        return;
    int n = CPU_COUNT(&mask);
    if (n < 2)
        return;
    int cpus[CPU_SETSIZE], k = 0, here = sched_getcpu(), start = 0;
    for (int c = 0; c < CPU_SETSIZE && k < n; c++)
        if (CPU_ISSET(c, &mask)) {
            if (c == here)
                start = k;
            cpus[k++] = c;
        }
    for (int i = 1; i < rt->nworkers; i++)
        rt->workers[i]->cpu = cpus[(start + i) % k];
}

/* Every worker's scheduler runs on a stack slot of its own, so that any
 * machine can resume it. */
static int sched_context_new(struct weft__worker *w)
{
    w->sched_slot = weft__stack_alloc(NULL, SCHED_STACK);
    if (!w->sched_slot)
        return -1;
    w->sched_stack_lo = w->sched_slot->stack_lo;
    w->sched_stack_size = w->sched_slot->stack_size;
#if defined(WEFT_SANITIZE_THREAD)
    weft__san_thread_created(w->sched_slot);
    w->sched_fiber = w->sched_slot->san_fiber;
    w->sched_slot->san_fiber = NULL;
#endif
    w->sched_sp = weft__ctx_make(w->sched_slot, weft__sched_entry, w);
    return 0;
}

static struct weft__worker *worker_new(int id)
{
    struct weft__worker *w = aligned_alloc(WEFT_CACHELINE, sizeof *w);
    if (!w)
        return NULL;
    memset(w, 0, sizeof *w);
    w->id = id;
    w->rng = RNG_SEED_MUL * (uint64_t)(id + 1);
    /* rt.pool is set already: a plug-in pool keeps every pick off the
     * inlined default pool (sched.h, weft__pick_local); weft__eh_get too: the
     * C++ runtime's exception state takes the slow paths (sched/eh.h). */
    uint32_t gate = (weft__rt.pool ? WEFT__GATE_POOL : 0) | (weft__eh_get ? WEFT__GATE_CXX : 0);
    if (gate)
        atomic_store_explicit(&w->gate, gate, memory_order_relaxed);
    if (weft__deque_init(&w->dq, DEQUE_SLOTS, weft__deque_overflow) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

static void worker_free(struct weft__worker *w)
{
    if (!w)
        return;
    if (w->sched_slot) {
#if defined(WEFT_SANITIZE_THREAD)
        w->sched_slot->san_fiber = w->sched_fiber;
        weft__san_thread_destroyed(w->sched_slot);
#endif
        weft__stack_free(NULL, w->sched_slot);
    }
    weft__io_worker_fini(w);
    weft__preempt_forget(w);
    weft__deque_destroy(&w->dq);
    free(w);
}

/* Ends every worker's loop (workers 1..nstarted-1 run on machines of their
 * own; worker 0's is the caller's) and wakes the sleeping ones. */
static void stop_workers(struct weft__rt *rt, int nstarted)
{
    atomic_store_explicit(&rt->stopping, 1, memory_order_seq_cst);
    for (int i = 1; i < nstarted; i++) {
        struct weft__worker *v = rt->workers[i];
        atomic_store_explicit(&v->wake, WEFT__WORD_WOKEN, memory_order_seq_cst);
        weft__futex_wake(&v->wake, 1);
    }
}

/* WEFT_STATS: one line per started worker, then the I/O and task
 * counters. */
static void report_stats(struct weft__rt *rt, int nstarted, uint64_t handoffs, uint64_t inplace)
{
    for (int i = 0; i < nstarted; i++) {
        struct weft__worker *v = rt->workers[i];
        weft__notice("stats: worker %d: spawned %llu exited %llu steals %llu sleeps %llu", i,
                     (unsigned long long)atomic_load(&v->nspawned),
                     (unsigned long long)atomic_load(&v->nexited), (unsigned long long)v->nsteals,
                     (unsigned long long)v->nsleeps);
    }
    struct weft__io_counters c;
    weft__io_counters(&c);
    weft__notice("stats: io: calls %llu io_uring_enter %llu completions %llu (%.2f calls per "
                 "crossing)",
                 (unsigned long long)c.calls, (unsigned long long)c.enters,
                 (unsigned long long)c.reaped, c.enters ? (double)c.calls / (double)c.enters : 0.0);
    struct weft__task_counters tc;
    weft__task_counters(&tc);
    weft__notice("stats: tasks: run %llu stolen %llu split-phase calls %llu",
                 (unsigned long long)tc.run, (unsigned long long)tc.stolen,
                 (unsigned long long)tc.calls);
    weft__notice("stats: blocking calls: %llu hand-offs, %llu run in place (no kernel thread)",
                 (unsigned long long)handoffs, (unsigned long long)inplace);
}

/* Frees the workers (their stack caches first), the initial thread's
 * descriptor, the bound threads nobody joined, the tasks' state and the
 * pool's. */
static void free_workers(struct weft__rt *rt, int nstarted)
{
    for (int i = 1; i < nstarted; i++)
        weft__stack_cache_drain(&rt->workers[i]->cache);
    struct weft__worker *w0 = rt->workers ? rt->workers[0] : NULL;
    if (w0) {
        weft__stack_cache_drain(&w0->cache);
        if (w0->altstack)
            weft__altstack_pop(w0->altstack);
    }
    free(rt->main);
    weft__bound_free_all();
    weft__task_fini(); /* the unfired tasks' records too */
    for (int i = 0; rt->workers && i < rt->nworkers; i++)
        worker_free(rt->workers[i]);
    free(rt->workers);
    if (rt->pool && rt->pool->destroy)
        rt->pool->destroy();
}

/* Undoes weft_init from the point where the workers exist (some of them,
 * maybe: a failed init); nstarted: workers whose loops run, worker 0's
 * included. */
static void release_all(int nstarted)
{
    struct weft__rt *rt = &weft__rt;
    stop_workers(rt, nstarted);
    uint64_t handoffs, inplace;
    weft__machines_counters(&handoffs, &inplace); /* the shutdown resets them */
    weft__machines_shutdown(); /* their loops end; every kernel thread weft started ends */
    weft__poller_shutdown();   /* the kernel thread behind weft_* waits without a ring */
    if (env.stats)
        report_stats(rt, nstarted, handoffs, inplace);
    free_workers(rt, nstarted);
    rt->pool = NULL;
    weft__trace_finish(); /* every worker has stopped: the rings are still */
    weft__stack_shutdown();
    weft__overflow_uninstall();
    weft__tls_worker = NULL;
    rt->workers = NULL;
    rt->main = NULL;
    rt->nworkers = 0;
}

/* weft_config.quantum_us in ns: 0 is the default, < 0 never preempts. */
static int64_t quantum_ns(long quantum_us)
{
    if (quantum_us < 0)
        return -1;
    return (int64_t)(quantum_us ? quantum_us : WEFT__QUANTUM_DEFAULT_US) * 1000;
}

int weft_init(const weft_config *cfg)
{
    return weft__init_with_pool(cfg, NULL);
}

/* The stack layer's hook once canary stacks exist: every worker's picks take
 * weft__pick_slow, which checks the canary of the thread switched out (before
 * the workers exist there is nothing to gate: they start with the bit set by
 * the next carve). relaxed: a hint, as the other gate bits. */
static void canary_gates(void)
{
    if (!weft__rt.workers)
        return;
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        if (v && !(atomic_load_explicit(&v->gate, memory_order_relaxed) & WEFT__GATE_CANARY))
            atomic_fetch_or_explicit(&v->gate, WEFT__GATE_CANARY, memory_order_relaxed);
    }
}

/* The configuration weft_init runs with: cfg (NULL: weft_config_default,
 * which reads the environment) checked, and its zeros (a choice left to
 * weft) filled in. */
static int config_resolve(const weft_config *cfg, weft_config *c)
{
    if (cfg)
        *c = *cfg;
    else
        weft_config_default(c);
    if (c->workers < 0 || c->workers > WEFT__MAX_WORKERS)
        return EINVAL;
    if (c->spawn_policy != WEFT_WORK_FIRST && c->spawn_policy != WEFT_HELP_FIRST)
        return EINVAL;
    if (c->stack_size && (c->stack_size < WEFT__STACK_MIN || c->stack_size > WEFT__STACK_MAX))
        return EINVAL;
    if (c->workers == 0)
        c->workers = weft__cpus_in_mask();
    if (c->stack_size == 0)
        c->stack_size = WEFT__STACK_DEFAULT;
    return 0;
}

/* The runtime-wide state of a new run with c and pool (under RT_STARTING,
 * before any worker exists). */
static void rt_reset(struct weft__rt *rt, const weft_config *c, const struct weft__pool_ops *pool)
{
    rt->nworkers = c->workers;
    rt->finalize = weft_finalize;
    rt->exited = weft__finish_exit;
    rt->preempt_class = weft__preempt_for_class;
    rt->dflt_pool = &weft__pool_ws;
    rt->io = &weft__io_sched;
    rt->task = &weft__task_sched;
    weft__eh_get = weft__eh_find(); /* the C++ runtime, if loaded (sched/eh.h) */
    rt->policy = c->spawn_policy | (weft__eh_get ? WEFT__POLICY_CXX : 0);
    rt->stack_size = c->stack_size;
    rt->pool = pool;
    if (pool && pool->init)
        pool->init();
    atomic_store(&rt->stopping, 0);
    atomic_store(&rt->nsleeping, 0);
    atomic_store(&rt->waking, 0);
    atomic_store(&rt->ninj, 0);
    memset(rt->inj, 0, sizeof rt->inj);
    atomic_store(&weft__id_next, 1);
    atomic_store(&rt->ext_spawned, 0);
    atomic_store(&rt->bound_live, 0);
}

/* The initial thread: the caller's flow, on the caller's stack; NULL when
 * out of memory. */
static struct weft_thread *initial_thread_new(struct weft__rt *rt)
{
    struct weft_thread *m = aligned_alloc(WEFT_CACHELINE, sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->pinned = WEFT__PIN_WORKER0 | (rt->nworkers > 1 ? WEFT__PIN_CHOOSE : 0);
    weft__spawn_main_reset();
    m->name = "main";
    atomic_init(&m->join, WEFT__J_RUNNING);
    weft__kstack(&m->stack_lo, &m->stack_size);
    return m;
}

/* The workers, each with its scheduler context, the tasks' per-worker
 * state and the initial thread:
 * 0, or ENOMEM with what was made left in rt for release_all. */
static int workers_create(struct weft__rt *rt)
{
    rt->workers = calloc((size_t)rt->nworkers, sizeof *rt->workers);
    if (!rt->workers)
        return ENOMEM;
    for (int i = 0; i < rt->nworkers; i++)
        if (!(rt->workers[i] = worker_new(i)))
            return ENOMEM;
    if (weft__task_init(rt->nworkers) != 0)
        return ENOMEM;
    if (!(rt->main = initial_thread_new(rt)))
        return ENOMEM;
    rt->main_pthread = pthread_self();
    for (int i = 0; i < rt->nworkers; i++)
        if (sched_context_new(rt->workers[i]) != 0)
            return ENOMEM;
    assign_cpus(rt);
    return 0;
}

/* Worker 0 is this kernel thread (the "main" one), running the initial
 * thread. */
static void enter_worker0(struct weft__rt *rt)
{
    struct weft__worker *w0 = rt->workers[0];
    struct weft_thread *m = rt->main;
    weft__tls_worker = w0;
    weft__preempt_own(w0);
    w0->errno_loc = &errno;
    w0->altstack = weft__altstack_push();
    m->san_fiber = weft__san_current_fiber(); /* the caller's own fiber (TSan) */
    w0->current = m;
    m->worker = w0;
    m->id = atomic_fetch_add(&weft__id_next, 1);
}

/* Starts a machine for each of workers 1..n-1 and returns once each runs
 * its loop: work spawned right away is stolen at once instead of waiting
 * for kernel threads to start. *started counts the workers whose loops run,
 * worker 0's included; EAGAIN when a machine could not start. */
static int machines_start(struct weft__rt *rt, int *started)
{
    weft__machines_init();
    for (int i = 1; i < rt->nworkers; i++) {
        if (weft__machine_start(rt->workers[i]) != 0)
            return EAGAIN;
        ++*started;
    }
    weft__machines_wait_up((uint32_t)(*started - 1));
    return 0;
}

/* The monitor: accounting always; preemption only for the default
 * scheduler (a plug-in pool, mltp's, stays cooperative). Not fatal: a
 * runtime of one worker needs no other kernel thread (RLIMIT_NPROC), and
 * goes on without accounting or preemption. */
static void monitor_start(const weft_config *c, const struct weft__pool_ops *pool)
{
    int rc = weft__monitor_start(pool ? -1 : quantum_ns(c->quantum_us));
    if (rc != 0) {
        int saved = errno;
        weft__notice("no kernel thread for the monitor (%s): no CPU accounting, no preemption",
                     strerror(rc));
        errno = saved;
    }
}

/* The overflow report's thread (stack/: weft__overflow_install): the user
 * thread on this worker, or the one this kernel thread acts as (a bound
 * thread, or a user thread inside weft_blocking). Async-signal-safe: two
 * thread-local reads. */
static struct weft_thread *overflow_thread(void)
{
    struct weft_thread *t = weft__self();
    return t ? t : weft__tls_user();
}

int weft__init_with_pool(const weft_config *cfg, const struct weft__pool_ops *pool)
{
    struct weft__rt *rt = &weft__rt;
    int started = 1; /* workers whose loops run: worker 0's is the caller's */
    weft_config c;
    int rc = config_resolve(cfg, &c);
    if (rc != 0)
        return rc;

    int expect = RT_OFF;
    if (!atomic_compare_exchange_strong(&rt->state, &expect, RT_STARTING))
        return EBUSY;
    rc = EBUSY;
    if (weft__tls_worker || weft__tls_user())
        goto undo_starting;

    weft__env_read(&env);
    weft__wait_set_policy(env.wait);
    weft__io_set_mode(env.io);
    rc = weft__stack_init(c.stack_size, env.stack_guard, canary_gates);
    if (rc != 0)
        goto undo_stack;
    weft__overflow_install(overflow_thread, weft_thread_id);
    rt_reset(rt, &c, pool);
    rc = workers_create(rt);
    if (rc != 0)
        goto undo_workers;
    enter_worker0(rt);
    if (weft__trace_start(env.trace) != 0)
        weft__notice("WEFT_TRACE: no memory for the event rings; not tracing");
    rc = machines_start(rt, &started);
    if (rc != 0)
        goto undo_workers;
    monitor_start(&c, pool);
    atomic_store_explicit(&rt->state, RT_RUNNING, memory_order_release);
    weft__initial_guard(1);
    if (weft__dump_signal_start(env.dump_signal) != 0)
        weft__notice("WEFT_DUMP_SIGNAL: cannot serve signal %d; no dump signal", env.dump_signal);
    return 0;

undo_workers: /* and the machines started, and the stack layer */
    release_all(started);
    goto undo_starting;
undo_stack:
    weft__stack_shutdown(); /* a failed stack init leaves its default class, maybe a slab */
undo_starting:
    atomic_store(&rt->state, RT_OFF);
    return rc;
}

/* Threads not yet finished, plus tasks ready or running and split-phase
 * calls in flight (task/task.h). Every exit and close is read before any
 * spawn or open: each of the former can only lag, each of the latter only
 * lead, and what a finished thread or task started before it finished is
 * seen started, so a zero is a true zero. */
static int64_t live_threads(void)
{
    struct weft__rt *rt = &weft__rt;
    uint64_t exited = 0, spawned = 0;
    for (int i = 0; i < rt->nworkers; i++)
        exited += atomic_load_explicit(&rt->workers[i]->nexited, memory_order_acquire);
    exited += weft__task_closed();
    spawned += weft__task_opened();
    for (int i = 0; i < rt->nworkers; i++)
        spawned += atomic_load_explicit(&rt->workers[i]->nspawned, memory_order_acquire);
    spawned += atomic_load_explicit(&rt->ext_spawned, memory_order_acquire);
    return (int64_t)(spawned - exited) +
           atomic_load_explicit(&rt->bound_live, memory_order_acquire);
}

/* weft_finalize's naps while the other threads run elsewhere: from 1 us,
 * doubling up to 1 ms. */
#define NAP_MIN_NS 1000L
#define NAP_MAX_NS 1000000L

/* Runs the other user threads from the initial thread (on w, worker 0)
 * until none is left: yields to local ones, takes injected ones, naps while
 * the rest run on other workers. Plain kernel threads still in weft_join
 * may read and free descriptors, so they count too (read after
 * live_threads(): such a joiner counts itself before the thread it waits
 * for can exit, thread/thread.c). Returns the worker, which is w again. */
static struct weft__worker *run_others(struct weft__worker *w)
{
    struct weft__rt *rt = &weft__rt;
    long nap_ns = NAP_MIN_NS;
    weft__prio_drain(1); /* a HIGH initial thread lets lower ones run here */
    while (live_threads() > 0 || weft__kernel_joins() > 0) {
        struct weft_thread *inj = weft__inject_pop();
        if (inj)
            weft__make_ready(w, inj);
        struct weft_thread *next = weft__pick_local(w);
        /* NULL with a reclaim pending: worker 0 goes back to the main
         * kernel thread through the scheduler (policy/machine.c); with
         * tasks ready here, to let its scheduler context run them */
        if (next || weft__reclaimed(w) || weft__task_local(w)) {
            weft__switch(w, rt->main, next, (uintptr_t)rt->main | XF_YIELD);
            w = rt->main->worker;
            nap_ns = NAP_MIN_NS;
            continue;
        }
        struct timespec ts = { 0, nap_ns };
        nanosleep(&ts, NULL);
        if (nap_ns < NAP_MAX_NS)
            nap_ns *= 2;
    }
    weft__prio_drain(0);
    return w;
}

/* Moves the runtime from RUNNING to STOPPING once no plain kernel thread
 * is inside weft_spawn (or a task's split-phase call). Returns 1 when nothing is left to run, 0 when
 * such a spawn queued a thread meanwhile (the runtime is RUNNING again,
 * and the thread runs first), -1 when the runtime was not RUNNING. */
static int try_stop(struct weft__rt *rt)
{
    int expect = RT_RUNNING;
    /* seq_cst: a plain kernel thread's weft_spawn either sees STOPPING
     * (EAGAIN) or is counted below (pairs with spawn_slow). */
    if (!atomic_compare_exchange_strong(&rt->state, &expect, RT_STOPPING))
        return -1;
    while (weft__kernel_spawns() > 0 || weft__task_kernel_calls() > 0)
        sched_yield();
    if (live_threads() == 0 && weft__kernel_joins() == 0)
        return 1;
    atomic_store(&rt->state, RT_RUNNING);
    return 0;
}

int weft_finalize(void)
{
    struct weft__rt *rt = &weft__rt;
    if (atomic_load_explicit(&rt->state, memory_order_acquire) != RT_RUNNING)
        return EINVAL;
    if (!weft__tls_worker)
        weft__rescue_settle(); /* the initial thread ran rescued (policy/machine.c): rejoin */
    struct weft__worker *w = weft__tls_worker;
    if (!w || w->current != rt->main)
        return EPERM;
    int stopped;
    do {
        w = run_others(w);
        /* every blocking call has returned: worker 0 is on this kernel thread */
        WEFT_ASSERT(weft__tls_worker == w && !weft__tls_home);
        stopped = try_stop(rt);
        if (stopped < 0)
            return EINVAL;
    } while (!stopped);
    weft__dump_signal_stop(); /* a dump under way ends first */
    weft__timer_shutdown();   /* its kernel thread: every timed wait has ended */
    weft__monitor_stop();     /* before any descriptor is released */
    release_all(rt->nworkers);
    atomic_store_explicit(&rt->state, RT_OFF, memory_order_release);
    weft__initial_guard(0);
    return 0;
}

int weft_num_workers(void)
{
    return weft__nworkers_running();
}

int weft_worker_id(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w ? w->id : -1;
}

int weft_stats_get(weft_stats *out)
{
    if (!out)
        return EINVAL;
    struct weft__rt *rt = &weft__rt;
    if (atomic_load_explicit(&rt->state, memory_order_acquire) != RT_RUNNING)
        return EAGAIN;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < rt->nworkers; i++) {
        struct weft__worker *w = rt->workers[i];
        out->threads_spawned += atomic_load_explicit(&w->nspawned, memory_order_relaxed);
        out->threads_exited += atomic_load_explicit(&w->nexited, memory_order_relaxed);
        /* racy reads of owner-only counters: a benchmark's snapshot */
        out->steals += __atomic_load_n(&w->nsteals, __ATOMIC_RELAXED);
        out->worker_sleeps += __atomic_load_n(&w->nsleeps, __ATOMIC_RELAXED);
        out->preempt_quantum += __atomic_load_n(&w->npreempt[0], __ATOMIC_RELAXED);
        out->preempt_priority += __atomic_load_n(&w->npreempt[1], __ATOMIC_RELAXED);
    }
    out->threads_spawned += atomic_load_explicit(&rt->ext_spawned, memory_order_relaxed);
    struct weft__io_counters c;
    weft__io_counters(&c);
    out->io_calls = c.calls;
    out->io_enters = c.enters;
    out->io_completions = c.reaped;
    weft__machines_counters(&out->io_handoffs, &out->io_offloaded);
    struct weft__task_counters tc;
    weft__task_counters(&tc);
    out->tasks_run = tc.run;
    out->tasks_stolen = tc.stolen;
    out->task_calls = tc.calls;
    return 0;
}
