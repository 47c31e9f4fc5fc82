/* kwait.h: the wait word and how a kernel thread waits on it: spin, then UMWAIT, then futex (the policy); the monotonic clock.
 *
 * Below the scheduler: idle workers, spare kernel threads and every
 * waiter that is no user thread wait here. sync/wait.h builds the waiter
 * records of user threads and kernel threads on the same word; the design
 * is the block at the top of sync/wait.c.
 */
#ifndef WEFT_OS_KWAIT_H
#define WEFT_OS_KWAIT_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/base.h"

/* ---- the wait word ---------------------------------------------------------
 * Values below WEFT__WORD_DONE (bit 0 aside) keep the waiter waiting; any
 * value from WEFT__WORD_DONE up ends the wait and says why. The waiter alone
 * sets SLEEPER; wakers alone move the phase to WAKING or a final value;
 * the waiter (kernel thread) or the timer service (user thread) alone
 * moves WAITING to TIMEDOUT. */
enum {
    WEFT__WORD_SLEEPER = 1u,  /* bit: parked or asleep in the kernel; the waker must wake it */
    WEFT__WORD_WAITING = 0u,  /* phase: waiting; may time out */
    WEFT__WORD_WAKING = 2u,   /* phase: claimed by a waker, which still reads the record;
                                 the waiter can no longer time out and must not return */
    WEFT__WORD_DONE = 4u,     /* first final value */
    WEFT__WORD_WOKEN = 4u,    /* final: woken by a waker */
    WEFT__WORD_TIMEDOUT = 6u, /* final: the deadline passed first */
};

/* ---- the policy ------------------------------------------------------------- */

enum weft__wait_policy {
    WEFT__WAIT_AUTO,  /* spin, then UMWAIT where the CPU has WAITPKG, then futex */
    WEFT__WAIT_SPIN,  /* never sleep in the kernel (sched_yield now and then) */
    WEFT__WAIT_FUTEX, /* sleep at once */
};

/* The policy from WEFT_WAIT (spin | futex | auto). Any thread. */
enum weft__wait_policy weft__wait_policy(void);

/* Sets the policy: weft_init, with WEFT_WAIT as runtime/config.c parsed it
 * (a malformed value gives auto), before any worker runs. Until the first
 * weft_init, kernel threads wait as auto. */
void weft__wait_set_policy(enum weft__wait_policy policy);

/* 1 when the CPU has UMONITOR/UMWAIT (CPUID.7.0:ECX[5]). Any thread. */
int weft__wait_have_waitpkg(void);

/* A spin budget for kernel-thread waits of unknown length (idle workers):
 * about the cost of a cross-core futex wake-up on a virtual machine. */
#define WEFT__KTHREAD_SPIN_NS 20000u
/* How long a kernel thread then waits in UMWAIT (auto, WAITPKG only). */
#define WEFT__KTHREAD_UMWAIT_NS 200000u

/* 1 once the absolute deadline has passed on CLOCK_REALTIME (realtime) or
 * CLOCK_MONOTONIC. */
int weft__deadline_passed(const struct timespec *deadline, int realtime);

/* Waits on a wait word, on the calling kernel thread, until it holds a
 * final value, which it returns (acquire: pairs with the release of the
 * waker's weft__wake_word or weft__waiter_wake). Blocks the kernel thread:
 * never call it from a user thread (that would stall its worker), use
 * weft__waiter_block. Phases follow the policy: spin with pause for spin_ns
 * (auto; forever under spin, none under futex), UMWAIT (auto and WAITPKG),
 * futex; the SLEEPER bit is set before the futex.
 * deadline: absolute on CLOCK_REALTIME (realtime != 0) or CLOCK_MONOTONIC,
 * NULL = none; when it passes while the phase is still WAITING the word is
 * CAS'd to WEFT__WORD_TIMEDOUT and that is returned. Idle workers may use
 * the same word protocol: reset the word to WAITING, publish that you are
 * idle, check for work, then call this; a producer calls weft__wake_word. */
uint32_t weft__wait_word(_Atomic uint32_t *word, uint64_t spin_ns, const struct timespec *deadline,
                         int realtime);

/* Ends a wait: moves a non-final word to the final value v (>= DONE) and
 * wakes a kernel sleeper on the futex if SLEEPER was set. Returns the value
 * before (already final: the word is left unchanged). Any thread. Only for
 * words a kernel thread waits on through weft__wait_word. */
uint32_t weft__wake_word(_Atomic uint32_t *word, uint32_t v);

/* How a wait's spin phase ended, for adaptive budgets (weft__spin_learn). */
enum {
    WEFT__SPIN_NONE, /* no verdict: no spin phase, or cut short (other threads were ready) */
    WEFT__SPIN_HIT,  /* the wait ended while spinning */
    WEFT__SPIN_MISS, /* the budget ran out: parked or slept */
};

/* weft__wait_word that also says how its spin phase ended (*verdict:
 * WEFT__SPIN_HIT when it ended the wait, MISS when it ran out, NONE
 * without one), for adaptive budgets. */
uint32_t weft__wait_word_verdict(_Atomic uint32_t *word, uint64_t spin_ns,
                                 const struct timespec *deadline, int realtime, uint16_t *verdict);

/* The phase of a word value (SLEEPER aside), and whether it ends the wait. */
static inline uint32_t weft__word_phase(uint32_t v)
{
    return v & ~(uint32_t)WEFT__WORD_SLEEPER;
}

static inline int weft__word_final(uint32_t v)
{
    return weft__word_phase(v) >= WEFT__WORD_DONE;
}

/* Loads a spinning waiter makes between two looks at its budget (and
 * whatever else may end its spin): a clock read per load would cost more
 * than the pause. */
#define WEFT__SPIN_ROUND 8u

/* One round of a spin on word: up to WEFT__SPIN_ROUND loads with a pause
 * after each. Returns the final value as soon as the word holds one, else
 * 0. acquire: pairs with the release of the waker's final exchange. */
static inline uint32_t weft__spin_round(_Atomic uint32_t *word)
{
    for (unsigned i = 0; i < WEFT__SPIN_ROUND; i++) {
        uint32_t v = atomic_load_explicit(word, memory_order_acquire);
        if (weft__word_final(v))
            return v;
        weft__cpu_relax();
    }
    return 0;
}

#endif
