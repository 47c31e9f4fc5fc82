/* kwait.c: a kernel thread's wait on a wait word: spin, UMWAIT, futex, as the policy says; the monotonic clock (design in sync/wait.c). */
#include "os/kwait.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "base/base.h"
#include "os/futex.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <x86intrin.h>
#endif

/* ---- policy -------------------------------------------------------------- */

/* enum weft__wait_policy; relaxed: written by weft_init before its workers
 * start, which publishes it to them; a plain kernel thread already waiting
 * may see either value, and both are correct, only slower or faster. */
/* A kernel thread that spins for ever lets the kernel run others every
 * SPIN_YIELD_EVERY loads of its word (a power of two, a multiple of
 * WEFT__SPIN_ROUND). */
#define SPIN_YIELD_EVERY 1024u
/* UMWAIT's state argument: C0.1, the faster wake-up of its two states. */
#define UMWAIT_C01 1u
/* One UMWAIT's deadline in TSC ticks (about 20 us at 3 GHz): short, since
 * the loop re-checks the budget and the deadline between two. */
#define UMWAIT_TSC (1u << 16)

static _Atomic int policy_value = WEFT__WAIT_AUTO;
static int waitpkg_value; /* written once under waitpkg_once */
static pthread_once_t waitpkg_once = PTHREAD_ONCE_INIT;

void weft__wait_set_policy(enum weft__wait_policy policy)
{
    atomic_store_explicit(&policy_value, (int)policy, memory_order_relaxed);
}

static void waitpkg_probe(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        waitpkg_value = (c >> 5) & 1;
#endif
}

enum weft__wait_policy weft__wait_policy(void)
{
    return (enum weft__wait_policy)atomic_load_explicit(&policy_value, memory_order_relaxed);
}

int weft__wait_have_waitpkg(void)
{
    pthread_once(&waitpkg_once, waitpkg_probe);
    return waitpkg_value;
}

/* ---- time ---------------------------------------------------------------- */

int weft__deadline_passed(const struct timespec *deadline, int realtime)
{
    struct timespec now;
    clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* ---- the word -------------------------------------------------------------- */

/* The waiter's own timeout: WAITING → TIMEDOUT. Returns the final value, or
 * 0 if a waker claimed the record first (then wait on, without deadline). */
static uint32_t time_out(_Atomic uint32_t *word)
{
    /* relaxed: only the waiter reads the result, and a waker that lost the
     * race never touches the record; the object's lock, which the waiter
     * takes next, orders everything else. */
    uint32_t v = atomic_load_explicit(word, memory_order_relaxed);
    while (weft__word_phase(v) == WEFT__WORD_WAITING) {
        if (atomic_compare_exchange_weak_explicit(word, &v, WEFT__WORD_TIMEDOUT,
                                                  memory_order_relaxed, memory_order_relaxed))
            return WEFT__WORD_TIMEDOUT;
    }
    /* acquire: a waker's final exchange; pairs with its release. */
    v = atomic_load_explicit(word, memory_order_acquire);
    return weft__word_final(v) ? v : 0;
}

/* Spin phase of a kernel waiter. forever: the spin policy. Returns the final
 * value, or 0 when the budget ran out. */
static uint32_t spin_phase(_Atomic uint32_t *word, uint64_t budget_ns, int forever,
                           const struct timespec **deadline, int realtime)
{
    uint64_t end = weft__now_ns() + budget_ns;
    for (unsigned round = 1;; round++) {
        uint32_t v = weft__spin_round(word);
        if (v)
            return v;
        if (*deadline && weft__deadline_passed(*deadline, realtime)) {
            uint32_t t = time_out(word);
            if (t)
                return t;
            *deadline = NULL; /* claimed: the final store is imminent */
        }
        if (forever) {
            if ((round * WEFT__SPIN_ROUND & (SPIN_YIELD_EVERY - 1)) == 0)
                sched_yield();
        } else if (weft__now_ns() >= end) {
            return 0;
        }
    }
}

#if defined(__x86_64__)
/* UMWAIT phase (WAITPKG CPUs only). C0.1: the faster wake-up of the two
 * light states; the kernel caps each UMWAIT (umwait_control/max_time), so
 * the loop re-arms until the budget is spent. */
__attribute__((target("waitpkg"))) static uint32_t umwait_phase(_Atomic uint32_t *word,
                                                                uint64_t budget_ns,
                                                                const struct timespec **deadline,
                                                                int realtime)
{
    uint64_t end = weft__now_ns() + budget_ns;
    for (;;) {
        /* acquire: pairs with the release of the waker's final exchange. */
        uint32_t v = atomic_load_explicit(word, memory_order_acquire);
        if (weft__word_final(v))
            return v;
        if (*deadline && weft__deadline_passed(*deadline, realtime)) {
            uint32_t t = time_out(word);
            if (t)
                return t;
            *deadline = NULL;
        }
        if (weft__now_ns() >= end)
            return 0;
        _umonitor((void *)word);
        /* relaxed: a re-check after arming the monitor; a store after it
         * ends the UMWAIT, so no wake-up falls between the two. */
        if (atomic_load_explicit(word, memory_order_relaxed) == v)
            _umwait(UMWAIT_C01, __rdtsc() + UMWAIT_TSC);
    }
}
#endif

static uint32_t futex_phase(_Atomic uint32_t *word, const struct timespec *deadline, int realtime)
{
    for (;;) {
        /* acquire: pairs with the release of the waker's final exchange. */
        uint32_t v = atomic_load_explicit(word, memory_order_acquire);
        if (weft__word_final(v))
            return v;
        if (!(v & WEFT__WORD_SLEEPER)) {
            /* relaxed: the waker's exchange is an RMW and reads this value
             * or a later one; the futex compares the word in the kernel. */
            if (!atomic_compare_exchange_weak_explicit(word, &v, v | WEFT__WORD_SLEEPER,
                                                       memory_order_relaxed, memory_order_relaxed))
                continue;
            v |= WEFT__WORD_SLEEPER;
        }
        if (deadline && weft__word_phase(v) == WEFT__WORD_WAITING) {
            int r = weft__futex_wait_abs(word, v, deadline, realtime);
            if (r == ETIMEDOUT || (r == 0 && weft__deadline_passed(deadline, realtime))) {
                uint32_t t = time_out(word);
                if (t)
                    return t;
                deadline = NULL;
            }
        } else {
            weft__futex_wait(word, v, NULL);
        }
    }
}

uint32_t weft__wait_word_verdict(_Atomic uint32_t *word, uint64_t spin_ns,
                                 const struct timespec *deadline, int realtime, uint16_t *verdict)
{
    enum weft__wait_policy p = weft__wait_policy();
    uint32_t v;
    *verdict = WEFT__SPIN_NONE;
    if (p != WEFT__WAIT_FUTEX) {
        v = spin_phase(word, spin_ns, p == WEFT__WAIT_SPIN, &deadline, realtime);
        if (v) {
            *verdict = spin_ns ? WEFT__SPIN_HIT : WEFT__SPIN_NONE;
            return v;
        }
        *verdict = spin_ns ? WEFT__SPIN_MISS : WEFT__SPIN_NONE;
#if defined(__x86_64__)
        if (weft__wait_have_waitpkg()) {
            v = umwait_phase(word, WEFT__KTHREAD_UMWAIT_NS, &deadline, realtime);
            if (v)
                return v;
        }
#endif
    }
    return futex_phase(word, deadline, realtime);
}

uint32_t weft__wait_word(_Atomic uint32_t *word, uint64_t spin_ns, const struct timespec *deadline,
                         int realtime)
{
    uint16_t verdict;
    return weft__wait_word_verdict(word, spin_ns, deadline, realtime, &verdict);
}

uint32_t weft__wake_word(_Atomic uint32_t *word, uint32_t v)
{
    uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
    do {
        if (weft__word_final(old))
            return old;
        /* release: publishes what the waiter will read after its wait;
         * pairs with the acquire loads in the wait phases. acquire: reads
         * the SLEEPER the waiter CASed in. */
    } while (!atomic_compare_exchange_weak_explicit(word, &old, v, memory_order_acq_rel,
                                                    memory_order_relaxed));
    if (old & WEFT__WORD_SLEEPER)
        weft__futex_wake(word, 1);
    return old;
}
