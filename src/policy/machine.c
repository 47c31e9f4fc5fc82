/* machine.c: the kernel threads that run workers ("machines"), and the
 * hand-off of a worker to another machine around a blocking call.
 *
 * Design
 * ------
 * A worker (deque, yield FIFO, mailbox, ring, stack cache, and a scheduler
 * context on a stack slot of its own) is run by one kernel thread at a time,
 * but not always the same one. Every kernel thread weft starts is a machine:
 * it keeps a "home" context on its own stack and from there enters the
 * scheduler context of the worker it is given. Workers 1..n-1 start on
 * machines of their own; worker 0 is run by the kernel thread that called
 * weft_init (the "main" kernel thread), which has no home: the initial user
 * thread lives on its stack.
 *
 * weft_blocking(fn, arg) on a user thread T of worker w, machine K (scheduler
 * activations, Anderson et al.; Go's hand-off at system-call entry):
 *  1. K lends w to an idle machine S (or a new one) and wakes it; w's lend
 *     word says gen|PENDING. K drops its worker (T acts as a thread of its
 *     own meanwhile) and runs fn(arg) on T's stack: T keeps its kernel
 *     thread, its thread-local state and its stack for the call.
 *  2. S takes w (CAS gen|PENDING -> gen|TAKEN) and resumes w's scheduler
 *     context: the other user threads of w run on S.
 *  3. fn returns. If S has not taken w yet, K cancels the lend (CAS) and
 *     goes on with w as if nothing happened: a short call costs one wake-up.
 *     Otherwise K has no worker: it saves T's context, switches to its home
 *     and injects T, which any worker resumes; K becomes an idle machine.
 *     The main kernel thread cannot leave the initial thread's stack, so it
 *     claims worker 0 back instead: it raises WEFT__ATTN_RECLAIM, and the
 *     machine running worker 0 releases it at its next scheduling point.
 * The initial thread stays on worker 0 (it is never stolen), so it runs on
 * the main kernel thread except while that kernel thread is inside another
 * user thread's blocking call: then it goes on running on the machine that
 * holds worker 0 (holding it back would deadlock a program whose initial
 * thread feeds the blocked call). weft_finalize therefore always returns on
 * the main kernel thread: by then every blocking call has returned and the
 * main kernel thread has claimed worker 0 back.
 *
 * Idle machines wait on a futex word of their own. The pool has no hard
 * bound: every blocked call holds a kernel thread, and a call that had to
 * wait for one of them to come back could wait for ever (the blocked calls
 * may be waiting for it). A soft cap (MACHINES_SOFT) bounds the machines kept
 * idle: a spare machine that finishes a call while there are more spares
 * than that ends instead of going idle. Where no kernel thread can be
 * started at all (RLIMIT_NPROC, out of memory), the call runs in place, on
 * the worker, which it stalls meanwhile: a one-line notice says so, once.
 * Rejected: queueing the call for the next machine that comes back (it hangs
 * for good when none is left to come back, or when those blocked wait for
 * the queued call).
 */
#include "policy/machine.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "os/futex.h"
#include "os/kstack.h"
#include "os/kwait.h"
#include "policy/preempt.h"
#include "sched/events.h"
#include "sched/sched.h"
#include "sched/switch.h"

#define MACHINES_SOFT 1024               /* spare machines kept once idle */
static int machines_max = MACHINES_SOFT; /* weft__machines_set_max (tests); under mp.lock */
#define MACHINE_STACK ((size_t)64 << 10) /* home stacks: only scheduler glue runs there */

/* A worker's lend word: the lend's generation above LEND_SHIFT bits of
 * state (LEND_*), so that a stale CAS of an earlier lend fails. */
enum { LEND_PENDING = 1, LEND_TAKEN = 2, LEND_CANCELLED = 3 };
#define LEND_SHIFT            2
#define LEND_WORD(gen, state) (((uint64_t)(gen) << LEND_SHIFT) | (state))
/* go word: an idle machine spins (GO_SPIN) for MACHINE_SPIN_NS, then
 * sleeps (GO_IDLE, futex); whoever hands it a job swaps in GO_JOB and makes
 * the futex call only if it found GO_IDLE. */
enum { GO_IDLE = 0, GO_JOB = 1, GO_STOP = 2, GO_SPIN = 3 };
#define MACHINE_SPIN_NS 20000
#define SHORT_CALLS_NS  1000000 /* idle machines spin this long after a cancelled lend */
enum { CLAIM_NONE = 0, CLAIM_WAITING = 1, CLAIM_GRANTED = 2 };

/* Why a machine came back from a worker's scheduler (home->reason), besides
 * WEFT__HOME_LOOP_ENDED (machine.h). */
#define HOME_RELEASED ((uintptr_t)2) /* worker 0 released to the main kernel thread */
#define HOME_INJECT   ((uintptr_t)1) /* tag: the thread left behind must be injected */

struct machine {
    pthread_t pt;
    _Atomic uint32_t go;      /* GO_*: futex word while idle */
    struct weft__worker *job; /* worker to take: written before go = GO_JOB */
    uint64_t job_lend;        /* the lend word value to take it with; 0: no lend (start-up) */
    struct machine *next;     /* idle or free list; under mp.lock */
    int idle;                 /* 1 while on the idle list; under mp.lock */
    int spare;                /* 0: started for a worker at weft_init; immutable */
    int cpu;                  /* CPU this kernel thread is pinned to, -1: none */
};

static struct {
    pthread_mutex_t lock;
    struct machine *idle;       /* under lock */
    struct machine *free;       /* records of machines that ended (retire); under lock */
    struct machine **all;       /* every machine running; under lock */
    int nall, cap_all;          /* under lock */
    int nspares;                /* machines beyond the workers' own; under lock */
    int stopping;               /* under lock */
    int nspinning;              /* idle machines spinning; under lock */
    uint64_t last_cancel;       /* when a lend was last cancelled (ns); under lock */
    uint64_t handoffs, inplace; /* hand-offs; calls run in place (no machine); under lock */
    _Atomic uint32_t up;        /* machines that reached their first job (start-up) */
    sigset_t mask;              /* every machine's signal mask (weft__machines_init) */
} mp = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- entering and leaving a worker ---------------------------------------- */

/* A machine takes on the placement of the worker it runs: pinned to the
 * worker's CPU, or (cpu < 0: worker 0, or pinning disabled) free to run
 * wherever the kernel thread that called weft_init may. */
static void pin_to(struct machine *m, int cpu)
{
    if (cpu == m->cpu)
        return;
    cpu_set_t set;
    if (cpu >= 0) {
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
    } else if (pthread_getaffinity_np(weft__rt.main_pthread, sizeof set, &set) != 0) {
        return;
    }
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0)
        m->cpu = cpu;
}

/* From home: runs w's scheduler context until it comes back; returns why. */
static uintptr_t run_worker(struct machine *m, struct weft__home *h, struct weft__worker *w)
{
    pin_to(m, w->cpu);
    weft__tls_worker = w;
    weft__preempt_own(w);
    w->errno_loc = &errno;
    weft__switch_to_worker(h, w); /* we come back with h->reason */
    weft__tls_worker = NULL;
    return h->reason;
}

/* Switches from the current context (whose stack pointer goes to *save)
 * to this machine's home, which learns why from reason. */
static void go_home(struct weft__home *h, void **save, void **fake_save, uintptr_t reason)
{
    h->reason = reason;
    weft__switch_home(h, save, fake_save);
}

/* go_home for a user thread that any worker resumes later: its C++
 * exception state leaves with it and comes back where it resumes, as at a
 * switch (sched/eh.h). */
static void go_home_thread(struct weft__home *h, struct weft_thread *self)
{
    int eh = weft__eh_get != NULL;
    if (eh)
        weft__eh_leave(self);
    go_home(h, &self->sp, &self->san_fake_stack, (uintptr_t)self | HOME_INJECT);
    if (eh)
        weft__eh_arrive(self);
}

void weft__sched_go_home(struct weft__worker *w, uintptr_t reason)
{
    struct weft__home *h = weft__tls_home;
    if (!h)
        weft__panic("sched: worker %d has no home to return to on the main kernel thread", w->id);
    /* resumed later (by whichever kernel thread runs w then) like any
     * switch to the scheduler context: weft__ctx_resumed serves the xfer */
    go_home(h, &w->sched_sp, &w->sched_fake_stack, reason);
}

void weft__sched_release(struct weft__worker *w)
{
    atomic_fetch_and_explicit(&w->attn, ~WEFT__ATTN_RECLAIM, memory_order_relaxed);
    weft__sched_go_home(w, HOME_RELEASED);
}

/* ---- machines --------------------------------------------------------------- */

/* A spare machine about to go idle while there are more spares than the
 * soft cap ends instead (under mp.lock). Its record goes to the free list,
 * not back to malloc: a lender may still look at it (retract), and only
 * ever finds job != its worker there. */
static void retire_locked(struct machine *m)
{
    for (int i = 0; i < mp.nall; i++)
        if (mp.all[i] == m) {
            mp.all[i] = mp.all[--mp.nall];
            break;
        }
    mp.nspares--;
    m->next = mp.free;
    mp.free = m;
}

/* The first job of a machine started for a worker at weft_init: its setup
 * is done, which weft__machines_wait_up waits for. */
static void report_up(void)
{
    /* release: our setup is done; pairs with the acquire in
     * weft__machines_wait_up. */
    atomic_fetch_add_explicit(&mp.up, 1, memory_order_release);
    weft__futex_wake(&mp.up, 1);
}

/* Runs job w (lent with lend word `want`; 0: no lend, a start-up) from home
 * until its scheduler comes back, then does what it came back for. */
static void run_job(struct machine *m, struct weft__home *home, struct weft__worker *w,
                    uint64_t want)
{
    /* acq_rel: acquire the lender's last writes to w; a failed CAS means
     * the lender took w back already (a short call). */
    if (want &&
        !atomic_compare_exchange_strong_explicit(&w->lend, &want,
                                                 LEND_WORD(want >> LEND_SHIFT, LEND_TAKEN),
                                                 memory_order_acq_rel, memory_order_relaxed))
        return;
    uintptr_t x = run_worker(m, home, w);
    if (x == HOME_RELEASED) {
        /* release: w's state is the main kernel thread's again. */
        atomic_store_explicit(&w->claim, CLAIM_GRANTED, memory_order_release);
        weft__futex_wake(&w->claim, 1);
    } else if (x & HOME_INJECT) {
        /* weft__ready, not weft__inject: the initial thread is pinned and
         * goes to worker 0's mailbox (any worker may pop the injection
         * queue). */
        weft__ready((struct weft_thread *)(x & ~HOME_INJECT));
    }
}

/* An idle machine waits for its next job (under mp.lock, which it drops
 * while it waits and holds again on return). */
static void wait_for_job_locked(struct machine *m)
{
    if (!m->idle) {
        m->next = mp.idle;
        mp.idle = m;
        m->idle = 1;
    }
    /* Spin a little first: back-to-back blocking calls find us awake (no
     * futex wake, no wake-up latency), as Go's spinning Ms; and as there,
     * only a few spin at once (half the workers, at least one), or idle
     * machines would take the CPUs from the workers. Only while calls are
     * short, though (a lend was cancelled lately): calls that do block
     * leave time enough to wake a sleeping machine, and spinning would
     * only take CPU from the machines coming back. */
    uint64_t now = weft__now_ns();
    int spin_ok =
        mp.nspinning < (weft__rt.nworkers + 1) / 2 && now - mp.last_cancel < SHORT_CALLS_NS;
    mp.nspinning += spin_ok;
    atomic_store_explicit(&m->go, GO_SPIN, memory_order_relaxed);
    pthread_mutex_unlock(&mp.lock);
    while (spin_ok && atomic_load_explicit(&m->go, memory_order_relaxed) == GO_SPIN &&
           weft__now_ns() - now < MACHINE_SPIN_NS)
        weft__cpu_relax();
    if (spin_ok) {
        pthread_mutex_lock(&mp.lock);
        mp.nspinning--;
        pthread_mutex_unlock(&mp.lock);
    }
    uint32_t spin = GO_SPIN;
    /* acquire (both): pairs with the release exchange in wake_machine. */
    if (atomic_compare_exchange_strong_explicit(&m->go, &spin, GO_IDLE, memory_order_acquire,
                                                memory_order_acquire))
        while (atomic_load_explicit(&m->go, memory_order_acquire) == GO_IDLE)
            weft__futex_wait(&m->go, GO_IDLE, NULL);
    pthread_mutex_lock(&mp.lock);
}

static void *machine_main(void *arg)
{
    struct machine *m = arg;
    /* for top, gdb and /proc: not the name of whoever made us (the
     * monitor reserves machines too) */
    pthread_setname_np(pthread_self(), "weft-worker");
    struct weft__home home;
    memset(&home, 0, sizeof home);
    weft__kstack(&home.lo, &home.size);
    home.fiber = weft__san_current_fiber();
    weft__tls_home = &home;
    void *altstack = weft__altstack_push();

    int startup = !m->spare; /* immutable: set before we were created */
    int retired = 0;
    pthread_mutex_lock(&mp.lock);
    for (;;) {
        /* A job (a worker to take) is handed over under mp.lock. */
        struct weft__worker *w = m->job;
        uint64_t want = m->job_lend;
        m->job = NULL;
        if (w) {
            pthread_mutex_unlock(&mp.lock);
            if (startup) {
                startup = 0;
                report_up();
            }
            run_job(m, &home, w, want);
            pthread_mutex_lock(&mp.lock);
            continue;
        }
        if (mp.stopping)
            break;
        if (!m->idle && m->spare && mp.nspares > machines_max) {
            retire_locked(m);
            retired = 1;
            break;
        }
        wait_for_job_locked(m);
    }
    pthread_mutex_unlock(&mp.lock);
    weft__altstack_pop(altstack);
    weft__tls_home = NULL;
    if (retired)
        pthread_detach(pthread_self()); /* nobody joins it: it left mp.all */
    return NULL;
}

/* Hands an idle machine its job (or the stop): a futex wake only if it
 * went to sleep already. */
static void wake_machine(struct machine *m, uint32_t go)
{
    /* release: the job is visible before the machine runs it. */
    if (atomic_exchange_explicit(&m->go, go, memory_order_release) == GO_IDLE)
        weft__futex_wake(&m->go, 1);
}

/* A new machine (under mp.lock) given job w; NULL on failure, with the
 * reason in *err (an errno value). */
static struct machine *machine_new_locked(struct weft__worker *w, uint64_t lend, int spare,
                                          int *err)
{
    if (mp.nall == mp.cap_all) {
        int cap = mp.cap_all ? 2 * mp.cap_all : 16;
        struct machine **all = realloc(mp.all, (size_t)cap * sizeof *all);
        if (!all) {
            *err = ENOMEM;
            return NULL;
        }
        mp.all = all;
        mp.cap_all = cap;
    }
    struct machine *m = mp.free;
    if (m) {
        mp.free = m->next;
        memset(m, 0, sizeof *m);
    } else if (!(m = calloc(1, sizeof *m))) {
        *err = ENOMEM;
        return NULL;
    }
    m->cpu = -1;
    m->spare = spare;
    m->job = w;
    m->job_lend = lend;
    atomic_init(&m->go, GO_JOB);
    pthread_attr_t a;
    int rc = pthread_attr_init(&a);
    if (rc == 0) {
        if (spare)
            pthread_attr_setstacksize(&a, MACHINE_STACK);
        /* Not the creator's mask: the monitor, which keeps machines in
         * reserve, blocks every signal, and a machine made there could
         * then never be preempted or rescued. */
        rc = pthread_attr_setsigmask_np(&a, &mp.mask);
        if (rc == 0)
            rc = pthread_create(&m->pt, &a, machine_main, m);
        pthread_attr_destroy(&a);
    }
    if (rc != 0) {
        m->next = mp.free;
        mp.free = m;
        *err = rc;
        return NULL;
    }
    mp.all[mp.nall++] = m;
    if (spare)
        mp.nspares++;
    return m;
}

/* Gives job w (with lend word value `lend`) to an idle or new machine and
 * returns it; NULL when none can be had, with the reason in *err. */
static struct machine *dispatch(struct weft__worker *w, uint64_t lend, int *err)
{
    pthread_mutex_lock(&mp.lock);
    struct machine *m = mp.idle;
    int idle = m != NULL;
    if (idle) {
        mp.idle = m->next;
        m->idle = 0;
        m->job = w;
        m->job_lend = lend;
    } else {
        m = machine_new_locked(w, lend, 1, err);
    }
    if (m)
        mp.handoffs++;
    else
        mp.inplace++;
    pthread_mutex_unlock(&mp.lock);
    if (idle)
        wake_machine(m, GO_JOB);
    return m;
}

/* The lend of w to m was cancelled: if m has not picked the job up yet,
 * take it back and put m on the idle list at once (it wakes, finds nothing
 * and sleeps again), so that back-to-back short calls reuse one machine
 * instead of starting new ones while the first is still waking up. */
static void retract(struct machine *m, struct weft__worker *w)
{
    pthread_mutex_lock(&mp.lock);
    mp.last_cancel = weft__now_ns();
    if (m->job == w && !m->idle) {
        m->job = NULL;
        m->next = mp.idle;
        mp.idle = m;
        m->idle = 1;
    }
    pthread_mutex_unlock(&mp.lock);
}

void weft__machines_init(void)
{
    pthread_mutex_lock(&mp.lock);
    pthread_sigmask(SIG_BLOCK, NULL, &mp.mask);
    sigdelset(&mp.mask, WEFT__PREEMPT_SIGNAL);
    pthread_mutex_unlock(&mp.lock);
}

int weft__machine_start(struct weft__worker *w)
{
    int err;
    pthread_mutex_lock(&mp.lock);
    struct machine *m = machine_new_locked(w, 0, 0, &err);
    pthread_mutex_unlock(&mp.lock);
    return m ? 0 : -1;
}

void weft__machines_wait_up(uint32_t n)
{
    for (uint32_t up; (up = atomic_load_explicit(&mp.up, memory_order_acquire)) < n;)
        weft__futex_wait(&mp.up, up, NULL);
}

void weft__machines_shutdown(void)
{
    pthread_mutex_lock(&mp.lock);
    mp.stopping = 1;
    for (struct machine *m = mp.idle; m; m = m->next) {
        wake_machine(m, GO_STOP);
    }
    mp.idle = NULL;
    int n = mp.nall;
    pthread_mutex_unlock(&mp.lock);
    /* Machines still running a worker's loop come home (finalize stopped
     * the workers), see mp.stopping and end. */
    for (int i = 0; i < n; i++)
        pthread_join(mp.all[i]->pt, NULL);
    pthread_mutex_lock(&mp.lock);
    for (int i = 0; i < n; i++)
        free(mp.all[i]);
    free(mp.all);
    mp.all = NULL;
    while (mp.free) {
        struct machine *m = mp.free;
        mp.free = m->next;
        free(m);
    }
    mp.nall = mp.cap_all = mp.nspares = 0;
    mp.stopping = 0;
    mp.handoffs = mp.inplace = 0;
    atomic_store(&mp.up, 0);
    pthread_mutex_unlock(&mp.lock);
}

void weft__machines_set_max(int n)
{
    pthread_mutex_lock(&mp.lock);
    machines_max = n > 0 ? n : MACHINES_SOFT;
    pthread_mutex_unlock(&mp.lock);
}

void weft__machines_counters(uint64_t *handoffs, uint64_t *inplace)
{
    pthread_mutex_lock(&mp.lock);
    *handoffs = mp.handoffs;
    *inplace = mp.inplace;
    pthread_mutex_unlock(&mp.lock);
}

int weft__machines_spares(void)
{
    pthread_mutex_lock(&mp.lock);
    int n = mp.nspares;
    pthread_mutex_unlock(&mp.lock);
    return n;
}

/* ---- the call ---------------------------------------------------------------- */

/* The calling kernel thread owns w again and runs self on it. */
static void take_back(struct weft__worker *w, struct weft_thread *self)
{
    weft__tls_worker = w;
    weft__preempt_own(w);
    w->errno_loc = &errno;
    w->current = self;
}

/* The main kernel thread wants worker 0 back: its current machine releases
 * it at its next scheduling point. */
static void claim(struct weft__worker *w)
{
    atomic_store_explicit(&w->claim, CLAIM_WAITING, memory_order_relaxed);
    atomic_fetch_or_explicit(&w->attn, WEFT__ATTN_RECLAIM, memory_order_seq_cst);
    weft__wake_worker(w);
    /* acquire: pairs with the release store of CLAIM_GRANTED. */
    while (atomic_load_explicit(&w->claim, memory_order_acquire) != CLAIM_GRANTED)
        weft__futex_wait(&w->claim, CLAIM_WAITING, NULL);
    atomic_store_explicit(&w->claim, CLAIM_NONE, memory_order_relaxed);
}

int weft__handoff_call(void (*fn)(void *), void *arg)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w->current;
    struct weft__home *home = weft__tls_home;

    uint64_t gen = ++w->lend_gen;
    uint64_t lend = LEND_WORD(gen, LEND_PENDING);
    atomic_store_explicit(&w->lend, lend, memory_order_relaxed);
    weft__thread_wait(self, WEFT__WAIT_BLOCKING);
    if (WEFT_UNLIKELY(weft__trace_on))
        weft__trace(w, WEFT__EV_HANDOFF, self, 0);
    w->current = NULL;
    weft__tls_worker = NULL;
    weft__tls_lent = self; /* weft_self() still answers; calls act as from a thread of its own */
    /* dispatch publishes w (release store of the machine's go word) */
    int why = 0;
    struct machine *m = dispatch(w, lend, &why);
    if (!m) {
        /* No kernel thread to be had: keep the worker and run the call in
         * place. It stalls the worker's other threads until it returns, but
         * it returns; waiting for a machine might never end. relaxed: no
         * machine was given this lend to take. */
        atomic_store_explicit(&w->lend, LEND_WORD(gen, LEND_CANCELLED), memory_order_relaxed);
        weft__tls_lent = NULL;
        weft__thread_wait(self, WEFT__WAIT_NONE);
        take_back(w, self);
        static atomic_flag told = ATOMIC_FLAG_INIT;
        if (!atomic_flag_test_and_set_explicit(&told, memory_order_relaxed)) {
            int saved = errno;
            weft__notice("no kernel thread for a blocking call (%s): such calls run in place, "
                         "stalling their worker",
                         strerror(why));
            errno = saved;
        }
        fn(arg);
        return 0;
    }

    fn(arg);
    int err = errno;
    weft__tls_lent = NULL;
    weft__thread_wait(self, WEFT__WAIT_NONE);

    uint64_t expect = lend;
    /* acq_rel: on success we own w again (the machine never took it). */
    int cancelled =
        atomic_compare_exchange_strong_explicit(&w->lend, &expect, LEND_WORD(gen, LEND_CANCELLED),
                                                memory_order_acq_rel, memory_order_relaxed);
    if (cancelled || !home) {
        if (cancelled)
            retract(m, w);
        else
            claim(w);
        take_back(w, self);
        errno = err;
        return 0;
    }
    /* Leave self to be resumed by any worker (which installs its errno);
     * this machine goes idle. */
    self->err = err;
    go_home_thread(home, self);
    return 0;
}

/* ---- rescue: a worker whose thread blocks in the kernel ---------------------
 *
 * A user thread that blocks in a raw system call (a pthread mutex, say,
 * that a thread preempted on the same worker holds) holds its worker with
 * it: every other thread of that worker waits, the holder included, which
 * is a deadlock on one worker. The monitor then asks the blocked thread's
 * kernel thread to let go (preempt.c, from the preemption signal's
 * handler): that is the first half of weft__handoff_call, begun by the
 * signal instead of the thread. The thread goes on (its system call is
 * restarted) as a thread of its own, as inside weft_blocking, on its
 * kernel thread; the worker goes to an idle machine. The second half runs
 * when the thread is back in its own code (the monitor signals again) or
 * reaches its end (weft__rescue_settle): it rejoins the scheduler exactly
 * as a blocking call that returned. Only idle machines are taken (the
 * handler must not allocate); the monitor keeps one ready
 * (weft__machines_reserve). */

struct rescue {
    struct weft__worker *w;   /* the worker let go; NULL: none */
    struct weft_thread *self; /* the thread, now on its own */
    struct machine *m;        /* the machine the worker was lent to */
    uint64_t lend;            /* the lend word value */
    int kept;                 /* weft__rescue_keep's: no attn count, not weft__rescued() */
};
static __thread struct rescue rescue_rec __attribute__((tls_model("initial-exec")));

void weft__machines_reserve(void)
{
    pthread_mutex_lock(&mp.lock);
    if (!mp.idle && !mp.stopping) {
        int err;
        machine_new_locked(NULL, 0, 1, &err); /* it goes idle at once */
    }
    pthread_mutex_unlock(&mp.lock);
}

int weft__rescue_lend(struct weft__worker *w)
{
    struct weft_thread *self = w->current;
    pthread_mutex_lock(&mp.lock);
    struct machine *m = mp.idle;
    if (!m) {
        pthread_mutex_unlock(&mp.lock);
        return -1;
    }
    uint64_t gen = ++w->lend_gen;
    uint64_t lend = (gen << 2) | LEND_PENDING;
    atomic_store_explicit(&w->lend, lend, memory_order_relaxed);
    mp.idle = m->next;
    m->idle = 0;
    m->job = w;
    m->job_lend = lend;
    mp.handoffs++;
    pthread_mutex_unlock(&mp.lock);
    /* Every exit of self takes exit_other while it is away (thread_exit
     * tests attn: the count stays non-zero while any thread of w is away),
     * which settles the rescue first. */
    atomic_fetch_add_explicit(&w->attn, WEFT__ATTN_RESCUE_ONE, memory_order_relaxed);
    w->current = NULL;
    weft__tls_worker = NULL;
    weft__tls_lent = self;
    rescue_rec = (struct rescue){ w, self, m, lend, 0 };
    wake_machine(m, GO_JOB); /* publishes w (release) */
    return 0;
}

/* The drop-in's threads bound by their name (src/posix/bound.c) take the
 * first half of a rescue themselves, from their own code, and keep it:
 * the worker goes to an idle or new machine (dispatch, as a hand-off),
 * the thread goes on without one on this kernel thread until
 * weft__rescue_settle at its end. Unlike a rescue it adds no count to the
 * worker's attn (its fast paths stay fast however long the thread is
 * away, and any number may be away: the caller settles before its exit),
 * and weft__rescued() does not report it (the preemption handler, which
 * settles a rescued thread back in its own code, leaves it alone). */
int weft__rescue_keep(void)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w->current;
    uint64_t gen = ++w->lend_gen;
    uint64_t lend = LEND_WORD(gen, LEND_PENDING);
    atomic_store_explicit(&w->lend, lend, memory_order_relaxed);
    w->current = NULL;
    weft__tls_worker = NULL;
    weft__tls_lent = self;
    int err = EAGAIN;
    struct machine *m = dispatch(w, lend, &err); /* publishes w (release) */
    if (!m) {
        /* relaxed: no machine was given this lend to take */
        atomic_store_explicit(&w->lend, LEND_WORD(gen, LEND_CANCELLED), memory_order_relaxed);
        weft__tls_lent = NULL;
        take_back(w, self);
        return err;
    }
    rescue_rec = (struct rescue){ w, self, m, lend, 1 };
    return 0;
}

int weft__rescued(void)
{
    return rescue_rec.w != NULL && !rescue_rec.kept;
}

int weft__rescue_settle(void)
{
    struct rescue r = rescue_rec;
    if (!r.w)
        return 0;
    rescue_rec.w = NULL;
    int err = errno;
    weft__preempt_rescue_done();
    weft__tls_lent = NULL;
    struct weft__worker *w = r.w;
    if (!r.kept)
        atomic_fetch_sub_explicit(&w->attn, WEFT__ATTN_RESCUE_ONE, memory_order_relaxed);
    uint64_t expect = r.lend;
    /* acq_rel: on success we own w again (the machine never took it). */
    int cancelled =
        atomic_compare_exchange_strong_explicit(&w->lend, &expect,
                                                (r.lend & ~(uint64_t)3) | LEND_CANCELLED,
                                                memory_order_acq_rel, memory_order_relaxed);
    struct weft__home *home = weft__tls_home;
    if (cancelled || !home) {
        if (cancelled)
            retract(r.m, w);
        else
            claim(w);
        take_back(w, r.self);
        errno = err;
        return 1;
    }
    /* Leave self to be resumed by any worker, as a blocking call that
     * returned; this machine goes idle. */
    r.self->err = err;
    go_home_thread(home, r.self);
    return 2;
}

/* Entry of a worker's scheduler context (on its own stack slot), first
 * resumed by the machine that starts the worker or, for worker 0, when the
 * initial thread has nothing else to switch to. When finalize stops the
 * workers the loop ends and the context returns to its machine's home;
 * worker 0's is simply dropped (finalize runs on the initial thread). */
void weft__sched_entry(void *data)
{
    struct weft__worker *w = data; /* weft__ctx_resumed served the first resume */
    while (weft__worker_loop(w) == WEFT__LOOP_RECLAIMED)
        weft__sched_release(w);
    weft__sched_go_home(w, WEFT__HOME_LOOP_ENDED);
    weft__panic("sched: worker %d resumed after its loop ended", w->id);
}
