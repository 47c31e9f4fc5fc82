/* monitor.c: the monitor thread: CPU accounting of user threads and the
 * watch on time quanta.
 *
 * Design
 * ------
 * One kernel thread of the runtime's own (Go's sysmon) looks at every worker
 * once a period (1 ms, or the quantum if it is shorter) while some worker is
 * awake. For each worker it reads, racily, the thread it runs (w->current)
 * and its tick, a count of switches out of user threads that the worker
 * bumps with one add (the only cost on the hot path: no clock is read
 * per switch). Same thread and same tick as at the last look: the thread
 * kept the worker for the whole period, which is charged to it; the time it
 * has kept the worker is what the quantum is checked against. Anything
 * else: switches happened, and the period goes to the thread found running
 * now (sampling; see account.h for the precision).
 *
 * Idling: when every worker sleeps (futex or ring: w->sleeping), the monitor
 * sleeps too, on weft__monitor_idle, and an idle runtime costs no CPU.
 * Dekker pair: the monitor stores idle = 1 (seq_cst) and then reads every
 * worker's sleeping flag; a worker leaving its sleep clears its flag
 * (seq_cst) and then reads idle (weft__monitor_kick). One of the two sees
 * the other, so a woken worker never runs unwatched.
 * Quiet: when some worker sleeps and no thread is ready anywhere (nor a
 * request pending, nor a thread rescued, nor I/O in an awake worker's
 * ring, whose completion only that worker reaps), while others hold their workers
 * (a thread blocked in a raw system call), there is nothing to preempt and
 * nothing to rescue for: the monitor sleeps on weft__monitor_idle too, for
 * a period that doubles up to QUIET_MAX_NS. A thread made ready then wakes
 * a sleeping worker, whose kick ends the sleep (the same Dekker pair); what
 * wakes no worker (a thread mailed to a busy worker 0) waits for the
 * period's end at worst. Each look costs a kernel wake-up (about 20-30 us
 * on a loaded 2-CPU host): at the 16 ms back-off, a runtime whose initial
 * thread sat in nanosleep used 0.17-0.42% of a core (bench_idle -i raw).
 *
 * Watch (issue 24, item 5): a priority request (preempt.c) is one signal
 * to one worker, and under a flood the worker asked was, in every wake
 * that took over 0.5 ms, a kernel thread off the CPU: its run delay
 * (schedstat) grew by about as much as the sample, while the other worker
 * ran. Its request waited for the monitor's next look, up to a period
 * (1 ms, more once backed off), to be re-aimed at the other worker. Now
 * each priority request bumps weft__monitor_asks (sched/bell.c: the
 * preemption reaches the monitor through its bells) and rings it unless it is
 * watching already; while watching (2 ms after the last request) it looks
 * every WATCH_NS (0.1 ms), and a priority request it finds pending at two
 * looks in a row is signalled again and another worker of a lower class
 * is asked. The first look only notes it: its worker may not have had
 * time to answer. Dekker pair: the requester bumps the count and then
 * reads watching; the monitor reads its poke word, stores watching = 0
 * and then reads the count (seq_cst); a ring it misses comes after its
 * read of the poke word, so its sleep ends at once. The monitor's timer
 * slack is 1 us (PR_SET_TIMERSLACK), so that a 0.1 ms sleep is not 0.15.
 * Rejected: asking every worker of the lowest class at once (each
 * extra one is a preemption for nothing, on every wake-up, loaded or
 * not); a timer of the requester's (a system call on every wake-up).
 *
 * The descriptors it reads may be finished and reused meanwhile: they stay
 * mapped while the runtime runs (stack slabs), so a stale read charges a
 * period to the wrong record at worst, and a record whose id no longer
 * matches (a reused slot) starts afresh. The monitor stops before
 * weft_finalize releases any descriptor. Its reads of owner-only fields
 * are racy by design and hidden from ThreadSanitizer.
 *
 * Rejected: a clock read at every switch (tens of instructions on the
 * yield path, which has about one to spare), and per-worker interval
 * timers (every worker would wake every period, idle or not).
 */
#include "policy/monitor.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "os/futex.h"
#include "os/kthread.h"
#include "os/kwait.h"
#include "policy/preempt.h"
#include "policy/prio.h"
#include "sched/account.h"
#include "sched/sched.h"

#define PERIOD_NS       ((uint64_t)1000000)  /* the base period: 1 ms */
#define PERIOD_MIN_NS   ((uint64_t)100000)   /* the shortest: a quantum below it is watched at it */
#define PERIOD_MAX_NS   ((uint64_t)10000000) /* backed off to while nothing changes (Go: 10 ms) */
#define RETRY_NS        ((uint64_t)200000)   /* while a preemption waits for a safe point */
#define RESCUE_AFTER_NS ((uint64_t)2000000)  /* past the quantum: a blocked thread is rescued */
#define QUIET_MAX_NS    ((uint64_t)WEFT_NS_PER_S) /* the longest quiet sleep (see Quiet) */
#define WATCH_NS        ((uint64_t)100000)        /* after a priority request: the next look */
#define WATCH_HOLD_NS   ((uint64_t)2000000)       /* watching lasts this long after the last one */

#if defined(WEFT_SANITIZE_THREAD)
#define RACY __attribute__((no_sanitize("thread")))
/* ThreadSanitizer's dynamic annotations: the reads of the pools' owner-only
 * fields that quiet() makes through their has_ready (instrumented code) are
 * hints too. */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define IGNORE_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define IGNORE_READS_END()   AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define RACY
#define IGNORE_READS_BEGIN() ((void)0)
#define IGNORE_READS_END()   ((void)0)
#endif

enum { MON_RUN = 0, MON_STOP = 1 };

/* What the monitor saw of one worker at its last look; monitor only. */
struct look {
    struct weft_thread *cur; /* the thread running then, NULL: none; atomic: cleared by
                                weft__monitor_forget */
    uint64_t tick;           /* the worker's tick then */
    uint64_t since;          /* when cur was first seen keeping the worker */
    int stuck;               /* its preemption has waited past the quantum and a grace */
    uint64_t rescue_at;      /* a rescue of cur asleep in the kernel is signalled from then */
    uint64_t rescue_gap;     /* the wait before the next (0: none signalled yet) */
    uint64_t prio_req;       /* the priority request pending at the last look, 0: none */
};

_Atomic uint64_t weft__monitor_looks;

static struct {
    pthread_t pt;
    int started;           /* under the caller of start/stop (weft_init/finalize) */
    _Atomic uint32_t stop; /* MON_RUN / MON_STOP; futex word of the period sleep */
    uint64_t period_ns;    /* immutable while running */
    int64_t quantum_ns;    /* <= 0: no preemption; immutable while running */
    struct look *looks;    /* one per worker; monitor only, but for forget's clears */
    _Atomic uint64_t pass; /* odd while the monitor reads descriptors (a look) */
    int pending;           /* a preemption asked during this look; monitor only */
    uint64_t last;         /* monitor clock of the last look; monitor only */
    uint32_t asks;         /* weft__monitor_asks at the last look; monitor only */
    uint64_t watch_until;  /* watching until then (see Watch); monitor only */
    uint32_t watching;     /* what weft__monitor_watching was set to; monitor only */
} mon;

/* ---- the look at one worker ------------------------------------------------ */

/* 1 when a thread of class c or higher is ready anywhere (hints). */
RACY static int ready_at_least(int c)
{
    /* The injection queue by class: under a flood it always holds NORMAL
     * threads (the quantum's losers), which must not pass for a higher
     * class (a priority request at every look, that the handler drops). */
    if (atomic_load_explicit(&weft__rt.ninj, memory_order_relaxed) > 0)
        for (int k = c < WEFT_PRIO_BACKGROUND ? WEFT_PRIO_BACKGROUND : c; k <= WEFT_PRIO_URGENT;
             k++)
            if (__atomic_load_n(&weft__rt.inj[k - WEFT_PRIO_BACKGROUND].head, __ATOMIC_RELAXED))
                return 1;
    for (int i = 0; i < weft__rt.nworkers; i++)
        if (weft__prio_top(weft__rt.workers[i]) >= c)
            return 1;
    return 0;
}

/* 1 when w's ring holds completions or requests that only w acts on, 2
 * when it has requests in flight only, else 0 (io/'s hook): the threads of
 * those completions wait for w as ready threads would, and a thread that
 * computes on w without a scheduling point keeps them waiting. */
RACY static int io_waits(struct weft__worker *w)
{
    return weft__rt.io ? weft__rt.io->waiting(w) : 0;
}

/* weft__preempt_retry, with the rescues of a thread asleep in the kernel
 * spaced out: RETRY_NS, then doubling until past PERIOD_MAX_NS (12.8 ms).
 * The first finds the thread blocked where the kernel restarts the call
 * and rescues it; one refused (its stack holds return addresses into
 * libweft, or the call fails with EINTR, which it does not restart) would
 * be refused as often as asked until the call returns, and each would
 * break the call off. */
static int retry(struct weft__worker *w, struct look *l, uint64_t tick, uint64_t now)
{
    int r = weft__preempt_retry(w, tick, now >= l->rescue_at);
    if (r == 2) {
        if (l->rescue_gap < PERIOD_MAX_NS)
            l->rescue_gap = l->rescue_gap ? 2 * l->rescue_gap : RETRY_NS;
        l->rescue_at = now + l->rescue_gap;
    }
    return r != 0;
}

/* Returns 1 when the worker switched since the last look. */
RACY static int look_at(struct weft__worker *w, struct look *l, uint64_t now, uint64_t dt)
{
    struct weft_thread *cur = __atomic_load_n(&w->current, __ATOMIC_RELAXED);
    uint64_t tick = __atomic_load_n(&w->tick, __ATOMIC_RELAXED);
    /* seq_cst: after the pass began (weft__monitor_forget) */
    struct weft_thread *prev = __atomic_load_n(&l->cur, __ATOMIC_SEQ_CST);
    int moved = cur != prev || tick != l->tick;
    l->stuck = 0;
    if (moved) {
        if (prev && prev != cur)
            weft__acct_stamp_at(prev, now); /* it left the worker (parked, readied or done) */
        if (cur && cur != prev)
            weft__acct_stamp_at(cur, now);
        l->since = now;
        l->rescue_at = l->rescue_gap = 0;
    }
    if (cur)
        weft__acct_charge(cur, dt, now);
    __atomic_store_n(&l->cur, cur, __ATOMIC_RELAXED);
    l->tick = tick;
    uint64_t req = atomic_load_explicit(&w->preempt_req, memory_order_relaxed);
    int first_prio = (req & 3) == WEFT__PREEMPT_PRIO && (req >> 2) == tick && req != l->prio_req;
    l->prio_req = (req & 3) == WEFT__PREEMPT_PRIO ? req : 0;
    if (cur && mon.quantum_ns > 0) {
        /* A request the handler could not act on yet (the thread was in
         * code it must not interrupt): signal again. A priority request
         * seen for the first time may be a few microseconds old (the
         * readier rang us, see Watch): its worker gets one watch period
         * to honour it before it is signalled again and another worker is
         * asked. */
        if (first_prio) {
            mon.pending = 1;
        } else if (retry(w, l, tick, now)) {
            mon.pending = 1;
            /* A priority request still pending a look later: w's kernel
             * thread is off its CPU (a loaded host) or keeps refusing; ask
             * another worker that runs a lower class too, once (issue 24,
             * item 5: the readied thread waits where either may take it). */
            if ((atomic_load_explicit(&w->preempt_req, memory_order_relaxed) & 3) ==
                    WEFT__PREEMPT_PRIO &&
                weft__rt.nworkers > 1)
                weft__preempt_for_class(weft__cls(cur) + 1);
            /* Still not at a safe point long past the quantum: blocked in
             * the kernel, most likely, holding the worker (see stuck). */
            l->stuck = !moved && now - l->since >= (uint64_t)mon.quantum_ns + RESCUE_AFTER_NS;
        } else if (!moved && now - l->since >= (uint64_t)mon.quantum_ns &&
                   (ready_at_least(weft__cls(cur)) || io_waits(w) == 1 ||
                    /* mail: a thread only w may run (the initial thread on
                     * worker 0); reclaim: the main kernel thread claims
                     * the worker back */
                    (atomic_load_explicit(&w->attn, memory_order_relaxed) &
                     (WEFT__ATTN_MAIL | WEFT__ATTN_RECLAIM)))) {
            /* Kept past the quantum while its class or higher waits. */
            weft__preempt_request(w, tick, WEFT__PREEMPT_QUANTUM);
            mon.pending = 1;
        } else if (weft__pool_plugged() && ready_at_least(weft__cls(cur) + 1)) {
            /* A higher class waits while this worker runs a lower one: the
             * readier's request was lost (its thread switched meanwhile,
             * and the next one is lower too). */
            weft__preempt_request(w, tick, WEFT__PREEMPT_PRIO);
            mon.pending = 1;
        }
    }
    return moved;
}

/* ---- the tail trace (preempt.h) ----------------------------------------------------- */

#ifdef WEFT_TAIL_TRACE
/* Each look, and every 0.5 ms each worker's run delay: the time its kernel
 * thread was ready but off the CPU (/proc/self/task/TID/schedstat), which
 * tells a host that did not run the worker from a request the runtime kept
 * waiting. */
static void tt_look(uint64_t now, uint64_t dt)
{
    static uint64_t sampled;
    weft__tt(8, -1, (long)dt);
    if (now - sampled < 500000)
        return;
    sampled = now;
    for (int i = 0; i < weft__rt.nworkers; i++) {
        char path[64];
        unsigned long long run = 0, delay = 0;
        snprintf(path, sizeof path, "/proc/self/task/%d/schedstat",
                 atomic_load_explicit(&weft__rt.workers[i]->ktid, memory_order_relaxed));
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%llu %llu", &run, &delay) != 2)
                delay = 0;
            fclose(f);
        }
        weft__tt(10, i, (long)delay);
    }
}
#else
static void tt_look(uint64_t now, uint64_t dt)
{
    (void)now;
    (void)dt;
}
#endif

/* ---- the watch after a priority request (see Watch) ----------------------------- */

/* 1 while the next look must come within WATCH_NS: a priority request was
 * made since the look WATCH_HOLD_NS ago. */
static int watch_on(uint64_t now)
{
    uint32_t asks = atomic_load_explicit(&weft__monitor_asks, memory_order_seq_cst);
    if (asks != mon.asks) {
        mon.asks = asks;
        mon.watch_until = now + WATCH_HOLD_NS;
    }
    if (now < mon.watch_until) {
        if (!mon.watching)
            atomic_store_explicit(&weft__monitor_watching, mon.watching = 1, memory_order_relaxed);
        return 1;
    }
    /* Off already: a request since sees 0 and rings (a ring seen by the
     * acquire load of the poke word brings the count above with it). */
    if (!mon.watching)
        return 0;
    /* seq_cst: pairs with weft__monitor_watch (bell.c). A request after the
     * store sees 0 and rings; one before it is seen here. */
    atomic_store_explicit(&weft__monitor_watching, mon.watching = 0, memory_order_seq_cst);
    if (atomic_load_explicit(&weft__monitor_asks, memory_order_seq_cst) != mon.asks) {
        mon.asks = atomic_load_explicit(&weft__monitor_asks, memory_order_relaxed);
        mon.watch_until = now + WATCH_HOLD_NS;
        atomic_store_explicit(&weft__monitor_watching, mon.watching = 1, memory_order_relaxed);
        return 1;
    }
    return 0;
}

/* ---- the thread ---------------------------------------------------------------- */

/* 1 while a worker has kept one thread past the quantum: the watch must
 * stay at its base period (see the quantum checks). */
static int busy_watch(void)
{
    return mon.pending;
}

/* A worker whose thread has held it, not at a safe point, long past the
 * quantum (blocked in the kernel, most likely) is rescued (machine.c) when
 * it holds ready threads that no other worker will run (its yield FIFO and
 * mailbox are its own; what waits in its deque or the injection queue is
 * counted too, being cheaper to over-rescue than to miss), or when every
 * worker is stuck so: none can run the thread that would release them (a
 * holder of the kernel lock they block on, preempted, waiting behind one
 * of them). Rescues only then, as each costs a kernel-thread hand-off;
 * one per look. */
RACY static void rescue_stuck(void)
{
    int n = weft__rt.nworkers, all = 1;
    for (int i = 0; i < n; i++)
        all &= mon.looks[i].stuck;
    for (int i = 0; i < n; i++) {
        struct weft__worker *w = weft__rt.workers[i];
        if (!mon.looks[i].stuck || !(all || weft__has_ready(w) || io_waits(w) == 1))
            continue;
        if (weft__preempt_escalate(w, mon.looks[i].tick)) {
            retry(w, &mon.looks[i], mon.looks[i].tick, weft__now_ns());
            return;
        }
    }
}

/* 1 when every worker sleeps: the monitor may sleep too (seq_cst loads:
 * see the Dekker pair above). */
static int all_asleep(void)
{
    for (int i = 0; i < weft__rt.nworkers; i++)
        if (!atomic_load_explicit(&weft__rt.workers[i]->sleeping, memory_order_seq_cst))
            return 0;
    return 1;
}

static void idle_sleep(void)
{
    /* seq_cst: pairs with weft__monitor_kick (see the design block). */
    atomic_store_explicit(&weft__monitor_idle, 1, memory_order_seq_cst);
    if (all_asleep() && atomic_load_explicit(&mon.stop, memory_order_acquire) == MON_RUN)
        while (atomic_load_explicit(&weft__monitor_idle, memory_order_acquire))
            weft__futex_wait(&weft__monitor_idle, 1, NULL);
    atomic_store_explicit(&weft__monitor_idle, 0, memory_order_relaxed);
    /* The time asleep is nobody's: start the next period afresh. */
    mon.last = weft__now_ns();
    for (int i = 0; i < weft__rt.nworkers; i++)
        __atomic_store_n(&mon.looks[i].cur, NULL, __ATOMIC_RELAXED);
}

/* 1 when some worker sleeps and nothing waits for the monitor (see Quiet):
 * no thread ready anywhere, no request pending, no thread rescued, no I/O
 * in the ring of a worker that is awake (only it reaps it). Racy
 * hints, re-read after idle is stored (seq_cst: the Dekker pair). */
RACY static int quiet(void)
{
    if (mon.pending || weft__preempt_rescues_out() ||
        atomic_load_explicit(&weft__rt.ninj, memory_order_relaxed) > 0)
        return 0;
    int asleep = 0, ready = 0;
    IGNORE_READS_BEGIN();
    for (int i = 0; i < weft__rt.nworkers && !ready; i++) {
        struct weft__worker *w = weft__rt.workers[i];
        if (atomic_load_explicit(&w->sleeping, memory_order_seq_cst))
            asleep = 1;
        else /* or a completion may come to its ring while it computes */
            ready = weft__has_ready(w) || io_waits(w);
    }
    IGNORE_READS_END();
    return asleep && !ready;
}

/* Sleeps up to ns while quiet(); a worker leaving its sleep ends it
 * (weft__monitor_kick). The looks stay: a thread holding its worker is
 * charged the time on the next look. */
static void quiet_sleep(uint64_t ns)
{
    /* seq_cst: pairs with weft__monitor_kick (see the design block). */
    atomic_store_explicit(&weft__monitor_idle, 1, memory_order_seq_cst);
    if (quiet() && atomic_load_explicit(&mon.stop, memory_order_acquire) == MON_RUN) {
        struct timespec ts = { (time_t)(ns / WEFT_NS_PER_S), (long)(ns % WEFT_NS_PER_S) };
        weft__futex_wait(&weft__monitor_idle, 1, &ts);
    }
    atomic_store_explicit(&weft__monitor_idle, 0, memory_order_relaxed);
}

static void *monitor_main(void *arg)
{
    (void)arg;
    /* The watch's 100 us sleeps, not 150: the default timer slack (50 us)
     * would be added to each. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    mon.last = weft__now_ns();
    /* Backs off (doubling up to PERIOD_MAX_NS) while no worker switches:
     * workers stuck in one computation each, or blocked in the kernel,
     * need few looks (the charges stay exact: a kept worker is charged the
     * whole time). Any switch brings the base period back. */
    uint64_t period = mon.period_ns;
    while (atomic_load_explicit(&mon.stop, memory_order_acquire) == MON_RUN) {
        /* Read before watch_on: a ring after its store of watching = 0
         * comes after this read and ends the wait at once. acquire: pairs
         * with the release in weft__monitor_poke_now. */
        uint32_t poke = atomic_load_explicit(&weft__monitor_poke, memory_order_acquire);
        if (mon.pending)
            period = RETRY_NS; /* a request waits for a safe point: look soon */
        uint64_t nap = period;
        if (watch_on(mon.last) && nap > WATCH_NS)
            nap = WATCH_NS;
        struct timespec ts = { (time_t)(nap / WEFT_NS_PER_S), (long)(nap % WEFT_NS_PER_S) };
        weft__futex_wait(&weft__monitor_poke, poke, &ts);
        /* relaxed: a statistic (tests/unit/monitor_quiet) */
        atomic_fetch_add_explicit(&weft__monitor_looks, 1, memory_order_relaxed);
        uint64_t now = weft__now_ns();
        tt_look(now, now - mon.last);
        uint64_t dt = now - mon.last;
        mon.last = now;
        int moved = 0;
        mon.pending = 0;
        atomic_fetch_add(&mon.pass, 1); /* seq_cst: see weft__monitor_forget */
        for (int i = 0; i < weft__rt.nworkers; i++)
            moved |= look_at(weft__rt.workers[i], &mon.looks[i], now, dt);
        if (mon.quantum_ns > 0) {
            rescue_stuck();
            weft__preempt_poke_rescued(); /* back in their own code, they rejoin */
        }
        atomic_fetch_add(&mon.pass, 1);
        if (moved || busy_watch() || mon.pending)
            period = mon.period_ns;
        else if (period < PERIOD_MAX_NS)
            period *= 2;
        if (all_asleep()) {
            idle_sleep();
            period = mon.period_ns;
        } else if (!moved && quiet()) {
            /* the period has backed off already: sleep on, longer each time */
            quiet_sleep(period);
            if (period < QUIET_MAX_NS)
                period *= 2;
        }
    }
    return NULL;
}

int weft__monitor_start(int64_t quantum_ns)
{
    if (quantum_ns > 0 && weft__preempt_setup() != 0)
        quantum_ns = -1; /* cannot preempt safely here: cooperative */
    mon.quantum_ns = quantum_ns;
    mon.period_ns = PERIOD_NS;
    if (quantum_ns > 0 && (uint64_t)quantum_ns < mon.period_ns)
        mon.period_ns = (uint64_t)quantum_ns < PERIOD_MIN_NS ? PERIOD_MIN_NS : (uint64_t)quantum_ns;
    mon.looks = calloc((size_t)weft__rt.nworkers, sizeof *mon.looks);
    if (!mon.looks)
        return ENOMEM;
    atomic_store_explicit(&mon.stop, MON_RUN, memory_order_relaxed);
    atomic_store_explicit(&weft__monitor_idle, 0, memory_order_relaxed);
    int rc = weft__kthread_start(&mon.pt, NULL, monitor_main, NULL, "weft-monitor");
    if (rc != 0) {
        free(mon.looks);
        mon.looks = NULL;
        weft__preempt_teardown();
        return rc;
    }
    mon.started = 1;
    atomic_store_explicit(&weft__acct_period_ns, mon.period_ns, memory_order_relaxed);
    return 0;
}

/* Clears every look that names t, then waits for a pass that may have
 * read it first, and clears again: that pass may also have stored t (it
 * read w->current before t ended). A pass that begins after a clear with
 * pass even (its increment comes after our read, both seq_cst) reads NULL
 * and cannot store t, which runs nowhere now. A look's cur is read on later
 * passes, which a descriptor in weft's stack slabs survives; one in memory
 * the program gets back does not. */
void weft__monitor_forget(struct weft_thread *t)
{
    if (!mon.looks) /* not started: weft_init's own failure paths */
        return;
    for (;;) {
        for (int i = 0; i < weft__rt.nworkers; i++) {
            struct weft_thread *x = t;
            __atomic_compare_exchange_n(&mon.looks[i].cur, &x, NULL, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED);
        }
        uint64_t p = atomic_load(&mon.pass);
        if (!(p & 1))
            return;
        for (unsigned spins = 1; atomic_load(&mon.pass) == p; spins++) {
            if (spins % 64 == 0)
                sched_yield(); /* the monitor may be off its CPU mid-pass */
            weft__cpu_relax();
        }
    }
}

void weft__monitor_stop(void)
{
    if (!mon.started)
        return;
    /* release: pairs with the monitor's acquire loads of stop. */
    atomic_store_explicit(&mon.stop, MON_STOP, memory_order_release);
    weft__monitor_poke_now();
    atomic_store_explicit(&weft__monitor_idle, 0, memory_order_release);
    weft__futex_wake(&weft__monitor_idle, 1);
    pthread_join(mon.pt, NULL);
    weft__preempt_teardown();
    mon.started = 0;
    atomic_store_explicit(&weft__acct_period_ns, 0, memory_order_relaxed);
    free(mon.looks);
    mon.looks = NULL;
}
