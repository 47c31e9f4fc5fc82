/* prio_probe.h: what the priority-request tests (prio_*.c) share: a clock,
 * the start on 2 workers with a quantum, a NORMAL spinner and the blocking
 * of the preemption signal on a kernel thread. */
#ifndef WEFT_TEST_PRIO_PROBE_H
#define WEFT_TEST_PRIO_PROBE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "weft.h"

/* Set by the test to end every spinner. */
static atomic_int prio_stop;

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t prio_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* weft_init on 2 workers with a quantum of quantum_us, or exit 77 (after
 * weft_finalize) where the runtime cannot preempt. */
static inline void prio_init(long quantum_us)
{
    test_init_quantum(2, quantum_us);
    if (!test_preemption_possible()) {
        CHECK_EQ(weft_finalize(), 0);
        exit(77);
    }
}

/* A thread body that spins with no scheduling point until prio_stop. */
static inline void *prio_spin(void *arg)
{
    (void)arg;
    volatile uint64_t x = 0;
    while (!atomic_load_explicit(&prio_stop, memory_order_relaxed))
        x++;
    return NULL;
}

/* Blocks the preemption signal (SIGURG) on the calling kernel thread, so
 * that it answers no request, like a kernel thread the host does not run;
 * the mask before goes to *old. */
static inline void prio_block_signal(sigset_t *old)
{
    sigset_t urg;
    sigemptyset(&urg);
    sigaddset(&urg, SIGURG);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &urg, old), 0);
}

#endif
