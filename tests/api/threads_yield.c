/* Tests weft_yield and the spawn policies on one worker: a yield lets every
 * other ready thread run before the caller again (round-robin among yielding
 * threads), a work-first spawn runs the child before the parent continues, a
 * help-first spawn queues it, and weft_yield from a plain kernel thread
 * returns. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { NT = 3, ROUNDS = 2000, NQ = 10 };

/* Only touched on the single worker, but atomics keep the test honest if
 * the library ran threads elsewhere. */
static atomic_int log_len;
static int log_who[NT * ROUNDS];

static void *round_robin(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        int pos = atomic_fetch_add(&log_len, 1);
        log_who[pos] = me;
        weft_yield();
    }
    return NULL;
}

/* With every thread yielding in a loop and started before any ran, between
 * two turns of a thread each other unfinished thread runs exactly once, so at
 * every point of the log the turn counts differ by at most one. */
static void check_round_robin(void)
{
    int count[NT] = { 0 };
    CHECK_EQ(atomic_load(&log_len), NT * ROUNDS);
    for (int i = 0; i < NT * ROUNDS; i++) {
        int w = log_who[i];
        CHECK(w >= 0 && w < NT);
        count[w]++;
        for (int j = 0; j < NT; j++)
            if (count[w] - count[j] > 1 || count[j] - count[w] > 1) {
                fprintf(stderr, "at log entry %d: thread %d has %d turns, thread %d has %d\n", i, w,
                        count[w], j, count[j]);
                CHECK(!"yield is not round-robin");
            }
    }
}

/* After all threads have started (under work-first they start one by one),
 * a thread never gets two turns in a row while the others have turns left. */
static atomic_int started;

static void *no_double_turn(void *arg)
{
    int me = (int)(intptr_t)arg;
    atomic_fetch_add(&started, 1);
    while (atomic_load(&started) < NT)
        weft_yield();
    for (int r = 0; r < ROUNDS; r++) {
        int pos = atomic_fetch_add(&log_len, 1);
        log_who[pos] = me;
        weft_yield();
    }
    return NULL;
}

static atomic_int ran[NQ];

static void *mark(void *arg)
{
    atomic_store(&ran[(intptr_t)arg], 1);
    return NULL;
}

static void *pthread_yield_fn(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        weft_yield();
    return (void *)0x99;
}

static void init1(int policy)
{
    test_init(1, policy);
}

int main(void)
{
    test_clear_env();
    weft_thread *t[NQ];

    /* Help-first, one worker: round-robin. */
    init1(WEFT_HELP_FIRST);
    atomic_store(&log_len, 0);
    for (int i = 0; i < NT; i++)
        CHECK_EQ(weft_spawn(&t[i], round_robin, (void *)(intptr_t)i, NULL), 0);
    CHECK_EQ(atomic_load(&log_len), 0); /* help-first: none has run yet */
    for (int i = 0; i < NT; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    check_round_robin();

    /* Help-first: spawned children wait; one yield of the parent lets all of
     * them run (they are ready, they finish without switching). */
    for (int i = 0; i < NQ; i++)
        atomic_store(&ran[i], 0);
    for (int i = 0; i < NQ; i++) {
        CHECK_EQ(weft_spawn(&t[i], mark, (void *)(intptr_t)i, NULL), 0);
        CHECK_EQ(atomic_load(&ran[i]), 0);
    }
    for (int i = 0; i < NQ; i++)
        CHECK_EQ(atomic_load(&ran[i]), 0);
    weft_yield();
    for (int i = 0; i < NQ; i++)
        CHECK_EQ(atomic_load(&ran[i]), 1);
    for (int i = 0; i < NQ; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    /* A yield with nothing else ready returns. */
    weft_yield();
    CHECK_EQ(weft_finalize(), 0);

    /* Work-first, one worker: the child runs to its end before weft_spawn
     * returns to the parent. */
    init1(WEFT_WORK_FIRST);
    for (int i = 0; i < NQ; i++)
        atomic_store(&ran[i], 0);
    for (int i = 0; i < NQ; i++) {
        CHECK_EQ(weft_spawn(&t[i], mark, (void *)(intptr_t)i, NULL), 0);
        CHECK_EQ(atomic_load(&ran[i]), 1);
        if (i + 1 < NQ)
            CHECK_EQ(atomic_load(&ran[i + 1]), 0);
    }
    for (int i = 0; i < NQ; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    /* Work-first: no thread gets two turns in a row once all are running. */
    atomic_store(&log_len, 0);
    atomic_store(&started, 0);
    for (int i = 0; i < NT; i++)
        CHECK_EQ(weft_spawn(&t[i], no_double_turn, (void *)(intptr_t)i, NULL), 0);
    for (int i = 0; i < NT; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&log_len), NT * ROUNDS);
    {
        int left[NT];
        for (int i = 0; i < NT; i++)
            left[i] = ROUNDS;
        for (int i = 0; i < NT * ROUNDS; i++) {
            int w = log_who[i];
            left[w]--;
            if (i > 0 && log_who[i - 1] == w) {
                int others = 0;
                for (int j = 0; j < NT; j++)
                    others += j != w && left[j] > 0;
                if (others) {
                    fprintf(stderr, "log entry %d: thread %d ran twice in a row\n", i, w);
                    CHECK(!"yield did not let others run");
                }
            }
        }
    }

    /* weft_yield from a plain kernel thread is sched_yield: it returns. */
    pthread_t pt;
    void *res;
    CHECK_EQ(pthread_create(&pt, NULL, pthread_yield_fn, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK(res == (void *)0x99);
    CHECK_EQ(weft_finalize(), 0);

    /* ... and also when the runtime is not running. */
    weft_yield();
    return 0;
}
