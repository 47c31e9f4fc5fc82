/* A spin lock's holder is never preempted inside its critical section
 * (issue 24, item 6): a waiter on the same worker spins in libweft, where
 * preemption is refused, and a preempted holder would wait behind it for
 * ever. The watchdog turns that hang into a failure.
 *  - 1 worker, 1 ms quantum: three threads hold a weft_spin for about
 *    50 us at a time in their own code, never calling weft, so the quantum
 *    expires while one holds it; the request waits for the unlock, which
 *    honours it (the stats count quantum preemptions);
 *  - the same with mltp's spin kind (MLTP_LOCK_SPIN) under weft_init;
 *  - the reported case: 8 threads on 2 workers take a weft_spin 50,000
 *    times each and weft_yield every 64 rounds, never while they hold it. */
#define _GNU_SOURCE
#include <mltp.h>

#include "sync_test.h"
#include "testutil.h"

#define NHOLD      3
#define HOLD_ITERS 40000 /* about 50 us of a volatile loop in the holder's own code */
#define NBIG       8
#define BIG_ROUNDS 50000

static weft_spin spin = WEFT_SPIN_INIT;
static mltp_lock_t mlock;
static long counter;
static atomic_long inside; /* holders inside the critical section: at most 1 */

static void hold_long(void)
{
    CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
    counter++;
    volatile unsigned x = 0;
    for (unsigned k = 0; k < HOLD_ITERS; k++)
        x++;
    CHECK_EQ(atomic_fetch_sub(&inside, 1), 1);
}

static long rounds_for(void)
{
    return TEST_SANITIZED ? 300 : 2000;
}

static void *holder_spin(void *arg)
{
    (void)arg;
    for (long r = 0; r < rounds_for(); r++) {
        CHECK_EQ(weft_spin_lock(&spin), 0);
        hold_long();
        CHECK_EQ(weft_spin_unlock(&spin), 0);
    }
    return NULL;
}

static void *holder_mltp(void *arg)
{
    (void)arg;
    for (long r = 0; r < rounds_for(); r++) {
        mltp_lock(&mlock);
        hold_long();
        mltp_unlock(&mlock);
    }
    return NULL;
}

static void *bump(void *arg)
{
    (void)arg;
    for (int i = 1; i <= BIG_ROUNDS; i++) {
        CHECK_EQ(weft_spin_lock(&spin), 0);
        counter++;
        CHECK_EQ(weft_spin_unlock(&spin), 0);
        if (i % 64 == 0)
            weft_yield();
    }
    return NULL;
}

static uint64_t quantum_preemptions(void)
{
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    return st.preempt_quantum;
}

static void run(int n, void *(*fn)(void *), long expect)
{
    counter = 0;
    weft_thread *t[NBIG];
    for (int i = 0; i < n; i++)
        CHECK_EQ(weft_spawn(&t[i], fn, NULL, NULL), 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(counter, expect);
}

int main(void)
{
    st_watchdog(60);

    test_clear_env();
    test_init_quantum(1, 1000);
    run(NHOLD, holder_spin, NHOLD * rounds_for());
    uint64_t after_spin = quantum_preemptions();
    if (test_preemption_possible())
        CHECK(after_spin > 0); /* the holders were preempted, between their sections */
    CHECK_EQ(mltp_lock_init(&mlock, MLTP_LOCK_SPIN), 0);
    run(NHOLD, holder_mltp, NHOLD * rounds_for());
    if (test_preemption_possible())
        CHECK(quantum_preemptions() > after_spin);
    CHECK_EQ(weft_finalize(), 0);

    test_init_quantum(2, 1000);
    run(NBIG, bump, (long)NBIG * BIG_ROUNDS);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
