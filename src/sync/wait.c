/* wait.c: how every thread waits: the per-waiter wait word, parking user threads on it, and (in os/kwait.c) the spin → UMWAIT → futex policy for kernel threads.
 *
 * Design
 * ------
 * Concepts. A sync object (mutex, cond, rwlock, barrier, sem) is a state
 * word plus a FIFO of waiter records (struct weft__waiter), guarded by an
 * internal lock that is held for a few instructions and never across a
 * switch. A waiter record lives on the waiting thread's own stack, so
 * waiting allocates nothing and cannot fail. It carries one 32-bit wait
 * word: a phase (WAITING, WAKING, WOKEN, TIMEDOUT) and a SLEEPER bit.
 *
 * The same record serves both kinds of waiter:
 *  - a user thread spins on the word for a short budget (only with more than
 *    one worker), then weft__park()s with a commit that CASes SLEEPER into
 *    the word after its context is saved. A waker that swaps the word to
 *    WOKEN and finds SLEEPER calls weft__ready(); one that finds no SLEEPER
 *    does nothing, and the commit's CAS then fails and the thread resumes
 *    at once. Exactly one of "commit sets SLEEPER" and "waker swaps" comes
 *    first in the word's modification order, so no wake-up is lost and
 *    none is doubled.
 *  - a plain kernel thread (weft__self() == NULL: a pthread, a bound thread,
 *    the timer) waits through weft__wait_word: it spins, then (auto policy,
 *    WAITPKG CPUs) sits in UMWAIT on the word's cache line, then sets
 *    SLEEPER and sleeps in FUTEX_WAIT on the word. A waker pays a futex
 *    wake only when SLEEPER was set, so a waiter caught while spinning
 *    costs the waker one atomic exchange.
 *
 * Invariants.
 *  - Only the waiter sets SLEEPER; only wakers move the phase to WAKING or
 *    WOKEN; only the waiter itself (kernel thread, at its deadline) or the
 *    timer service (user thread) moves WAITING to TIMEDOUT. Every
 *    transition is a CAS or an exchange on the one word.
 *  - A record is unlinked from its object's queue only under the object's
 *    lock; after that only the waker that unlinked it touches it, and only
 *    until the final store. A waker reads w->thread and w->next before.
 *  - WAKING pins the record: the waiter can neither time out nor return
 *    before the waker's final store. Wakers that must decide under the
 *    object's lock whether a timed waiter is still theirs (cond signal) or
 *    that walk a chain after dropping the lock (broadcast, barrier) claim
 *    under the lock and finish outside it, so no system call or weft__ready
 *    runs under an object's lock.
 *  - After the final exchange a kernel waiter may return at once and its
 *    stack be reused; the waker's futex wake on that address then is at
 *    most a spurious wake-up for whatever futex lives there, which every
 *    futex wait in weft tolerates (all loop on their condition).
 *
 * Timeouts. A kernel thread's deadline is the futex's (absolute, on the
 * caller's clock). A user thread has no kernel sleep to time out: the
 * object arms a timer (timer.c) whose callback CASes WAITING → TIMEDOUT and
 * readies the thread if SLEEPER was set. Timer and waker race on the same
 * word, so exactly one wins.
 *
 * Policy (WEFT_WAIT). auto: spin with pause for the caller's budget (each
 * object picks one: a mutex waiter a few microseconds, a barrier waiter
 * tens; WEFT__KTHREAD_SPIN_NS for waits of unknown length), then on
 * CPUs with WAITPKG (CPUID.7.0:ECX[5]) UMONITOR/UMWAIT in C0.1 for up to
 * WEFT__KTHREAD_UMWAIT_NS, then futex. spin: never enter the kernel to
 * sleep (a sched_yield every ~1024 pauses keeps an oversubscribed machine
 * alive). futex: sleep at once, and user threads park without spinning.
 * The spin budget is bounded by time (CLOCK_MONOTONIC read every 8 pauses),
 * not by a count, because pause costs from ~10 to ~140 cycles across CPUs.
 *
 * Rejected.
 *  - Releasing the object's lock inside the park commit (the object lock
 *    held across the context switch): it forbids the spin-before-park
 *    phase, makes wakers spin for the duration of a switch, and does not
 *    work for kernel waiters; the per-record CAS closes the same window.
 *  - One futex word per object (glibc's condvar/barrier style): a waiter
 *    could not spin on a line of its own, broadcast would be a thundering
 *    herd, and user and kernel waiters would need two mechanisms.
 *  - MONITOR/MWAIT proper: ring 0 only; user code needs a kernel module
 *    for it. UMWAIT is its user-mode heir. AMD's MONITORX/MWAITX
 *    (CPUID.80000001:ECX[29]) would be the AMD counterpart; left out
 *    because the machines weft is tested on do not expose it, so it would
 *    be a path no test runs.
 *  - Heap-allocated waiter records: allocation on every wait, and an error
 *    path pthread-style calls have no code for.
 */
#include "sync/wait.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "os/futex.h"
#include "sched/park.h"
#include "sched/sched.h"
#include "weft.h"

/* ---- user threads' spin phase ---------------------------------------------- */

/* 1 when the calling user thread's worker has another thread ready (its
 * deque, yield FIFO or mailbox, or the injection queue): a spinning thread
 * would delay it, so it parks instead. A racy hint read on the worker's own
 * kernel thread (owner-only fields included). */
static int worker_has_ready(void)
{
    struct weft__worker *w = weft__tls_worker;
    /* relaxed: a hint. I/O in flight may ready a thread any time. */
    return w && (weft__has_ready(w) ||
                 (atomic_load_explicit(&w->attn, memory_order_relaxed) & WEFT__ATTN_IO));
}

/* Spin phase of a user thread on its record: at most budget_ns, and it
 * stops as soon as another thread is ready on this worker (*cut = 1).
 * Returns the final value, or 0. */
static uint32_t spin_user(_Atomic uint32_t *word, uint64_t budget_ns, int *cut)
{
    uint64_t end = weft__now_ns() + budget_ns;
    *cut = 0;
    for (;;) {
        uint32_t v = weft__spin_round(word);
        if (v)
            return v;
        if (worker_has_ready()) {
            *cut = 1;
            return 0;
        }
        if (weft__now_ns() >= end)
            return 0;
    }
}

unsigned weft__spin_while(_Atomic uint64_t *word, uint64_t mask, uint64_t value, uint64_t budget_ns)
{
    int user = weft__self() != NULL;
    if (budget_ns == 0 || weft__wait_policy() == WEFT__WAIT_FUTEX ||
        (user && weft__nworkers_running() < 2))
        return WEFT__SPIN_NONE;
    uint64_t end = weft__now_ns() + budget_ns;
    for (unsigned i = 1;; i++) {
        /* acquire: pairs with the release of whoever changed the word. */
        if ((atomic_load_explicit(word, memory_order_acquire) & mask) != value)
            return WEFT__SPIN_HIT;
        weft__cpu_relax();
        if ((i & 7) != 0)
            continue;
        if (user && worker_has_ready())
            return WEFT__SPIN_NONE;
        if (weft__now_ns() >= end)
            return WEFT__SPIN_MISS;
    }
}

/* ---- waiter records ----------------------------------------------------------- */

void weft__waiter_init(struct weft__waiter *w, uint8_t kind)
{
    w->kind = kind;
    w->next = w->prev = NULL;
    w->thread = weft__self();
    atomic_init(&w->word, WEFT__WORD_WAITING);
    w->spin = WEFT__SPIN_NONE;
    w->data = 0;
}

/* Park commit: runs after the thread's context is saved. Setting SLEEPER
 * hands the thread to whoever ends the wait; a final word means that
 * already happened, so resume at once. */
static int commit_sleep(void *arg, struct weft_thread *self)
{
    struct weft__waiter *w = arg;
    (void)self;
    uint32_t v = atomic_load_explicit(&w->word, memory_order_relaxed);
    do {
        if (weft__word_final(v))
            return 0;
        /* release: publishes the saved context to the waker that finds
         * SLEEPER; pairs with the acquire of its exchange (wake, finish,
         * expire), which then calls weft__ready. */
    } while (!atomic_compare_exchange_weak_explicit(&w->word, &v, v | WEFT__WORD_SLEEPER,
                                                    memory_order_release, memory_order_relaxed));
    return 1;
}

uint32_t weft__waiter_block(struct weft__waiter *w, uint64_t spin_ns,
                            const struct timespec *deadline, int realtime)
{
    if (w->thread == NULL)
        return weft__wait_word_verdict(&w->word, spin_ns, deadline, realtime, &w->spin);
    w->spin = WEFT__SPIN_NONE;
    if (spin_ns && weft__nworkers_running() > 1 && weft__wait_policy() != WEFT__WAIT_FUTEX) {
        int cut;
        uint32_t v = spin_user(&w->word, spin_ns, &cut);
        if (v) {
            w->spin = WEFT__SPIN_HIT;
            return v;
        }
        w->spin = cut ? WEFT__SPIN_NONE : WEFT__SPIN_MISS;
    }
    for (;;) {
        /* acquire: pairs with the release of the final exchange. */
        uint32_t v = atomic_load_explicit(&w->word, memory_order_acquire);
        if (weft__word_final(v))
            return v;
        weft__thread_wait(w->thread, w->kind);
        weft__park(commit_sleep, w);
    }
}

/* Final exchange shared by wake and finish. */
static void finish_to(struct weft__waiter *w, uint32_t final)
{
    struct weft_thread *t = w->thread;
    /* release: publishes the waker's hand-off (lock ownership, a semaphore
     * unit, data) to the waiter; pairs with the acquire in block/wait.
     * acquire: reads the SLEEPER bit set with release by commit_sleep. */
    uint32_t old = atomic_exchange_explicit(&w->word, final, memory_order_acq_rel);
    WEFT_ASSERT(!weft__word_final(old));
    if (old & WEFT__WORD_SLEEPER) {
        if (t)
            weft__ready(t);
        else
            weft__futex_wake(&w->word, 1);
    }
}

void weft__waiter_wake(struct weft__waiter *w)
{
    finish_to(w, WEFT__WORD_WOKEN);
}

int weft__waiter_claim(struct weft__waiter *w)
{
    uint32_t v = atomic_load_explicit(&w->word, memory_order_relaxed);
    for (;;) {
        if (weft__word_phase(v) != WEFT__WORD_WAITING) {
            WEFT_ASSERT(weft__word_phase(v) == WEFT__WORD_TIMEDOUT);
            return 0;
        }
        /* relaxed: the claim only pins the record; the final exchange in
         * finish publishes the hand-off. */
        if (atomic_compare_exchange_weak_explicit(&w->word, &v,
                                                  WEFT__WORD_WAKING | (v & WEFT__WORD_SLEEPER),
                                                  memory_order_relaxed, memory_order_relaxed))
            return 1;
    }
}

int weft__waiter_expire(struct weft__waiter *w)
{
    struct weft_thread *t = w->thread;
    uint32_t v = atomic_load_explicit(&w->word, memory_order_relaxed);
    while (weft__word_phase(v) == WEFT__WORD_WAITING) {
        /* acq_rel: acquire reads the SLEEPER published by commit_sleep
         * (release) before weft__ready; release orders nothing the thread
         * needs but keeps the pairing uniform with finish_to. */
        if (atomic_compare_exchange_weak_explicit(&w->word, &v, WEFT__WORD_TIMEDOUT,
                                                  memory_order_acq_rel, memory_order_relaxed)) {
            if ((v & WEFT__WORD_SLEEPER) && t)
                weft__ready(t);
            else if (v & WEFT__WORD_SLEEPER)
                weft__futex_wake(&w->word, 1);
            return 1;
        }
    }
    return 0;
}

/* ---- helpers ------------------------------------------------------------------ */

void weft__sync_backoff(unsigned *spins)
{
    weft__cpu_relax();
    if ((++*spins & 63) == 0)
        sched_yield();
}

/* initial-exec: one %fs-relative load, no __tls_get_addr call on the lock fast path. */
static _Thread_local _Alignas(8) char kthread_token __attribute__((tls_model("initial-exec")));

/* A user thread's token is its id (never reused, unlike its descriptor's
 * slot), shifted clear of the lock words' flag bits, with the top bit set:
 * no kernel thread's token (a user-space address) has it. */
#define OWNER_THREAD ((uintptr_t)1 << 63)
#define OWNER_SHIFT  3

uintptr_t weft__sync_owner(void)
{
    /* weft_self(): inside weft_blocking (and in a bound thread) the user
     * thread is weft__tls_user(), and locks it takes are its own. */
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *t = w ? w->current : weft__tls_user();
    if (!t)
        return (uintptr_t)&kthread_token;
    /* relaxed: the id is set once (weft_thread_id's CAS) and read alone */
    uint64_t id = __atomic_load_n(&t->id, __ATOMIC_RELAXED);
    if (WEFT_UNLIKELY(!id))
        id = weft_thread_id(t);
    return OWNER_THREAD | (uintptr_t)id << OWNER_SHIFT;
}

uint64_t weft__sync_owner_id(uintptr_t owner)
{
    return owner & OWNER_THREAD ? (owner & ~OWNER_THREAD) >> OWNER_SHIFT : 0;
}
