/* weft_mutex fairness under preemption (issue 24, item 4; SPEC "Fairness",
 * Go's starvation mode): four NORMAL threads on one worker with a 1 ms
 * quantum each loop: lock, ~20 us of work, unlock, weft_sem_post then
 * weft_sem_wait on their own semaphore (a scheduling point that never
 * blocks). A holder preempted inside its critical section parks the
 * others; without hand-off it relocks the moment it unlocks and keeps the
 * mutex for seconds. With it, a waiter queued longer than the quantum gets
 * the mutex at the next unlock: each thread must complete its rounds
 * while the others still run, and no thread may get far ahead. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { NT = 4 };

static weft_mutex mu;
static atomic_int stop;
static atomic_long rounds[NT];
static long max_gap_rounds; /* under mu: the longest run of one thread's turns */
static int last_owner = -1;
static long run_len;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void work_us(unsigned us)
{
    uint64_t end = now_ns() + us * 1000u;
    while (now_ns() < end)
        ;
}

static void *looper(void *arg)
{
    int me = (int)(intptr_t)arg;
    weft_sem s;
    CHECK_EQ(weft_sem_init(&s, 0), 0);
    while (!atomic_load(&stop)) {
        CHECK_EQ(weft_mutex_lock(&mu), 0);
        if (last_owner == me) {
            if (++run_len > max_gap_rounds)
                max_gap_rounds = run_len;
        } else {
            last_owner = me;
            run_len = 1;
        }
        work_us(20);
        CHECK_EQ(weft_mutex_unlock(&mu), 0);
        atomic_fetch_add(&rounds[me], 1);
        CHECK_EQ(weft_sem_post(&s), 0);
        CHECK_EQ(weft_sem_wait(&s), 0);
    }
    CHECK_EQ(weft_sem_destroy(&s), 0);
    return NULL;
}

int main(void)
{
    test_clear_env();
    alarm(60);
    if (!test_preemption_possible())
        return 77;
    test_init_quantum(1, 1000);
    CHECK_EQ(weft_mutex_init(&mu), 0);
    weft_thread *t[NT];
    for (int i = 0; i < NT; i++)
        CHECK_EQ(weft_spawn(&t[i], looper, (void *)(intptr_t)i, NULL), 0);
    /* 400 ms of the loop: each thread, fairly served, gets thousands of
     * turns; a starved one, none or a handful. */
    CHECK_EQ(weft_sleep_ns(400u * 1000000u), 0);
    atomic_store(&stop, 1);
    for (int i = 0; i < NT; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    long min = -1, max = 0, total = 0;
    for (int i = 0; i < NT; i++) {
        long r = atomic_load(&rounds[i]);
        if (min < 0 || r < min)
            min = r;
        if (r > max)
            max = r;
        total += r;
    }
    fprintf(stderr, "rounds min %ld max %ld, longest run of one thread %ld\n", min, max,
            max_gap_rounds);
    /* Generous: under a sanitizer or a loaded machine a turn takes longer,
     * but every thread must have had a real share, and no thread may keep
     * the mutex for a large part of the run (a run's length also depends
     * on how soon the holder is preempted once a woken waiter is ready). */
    CHECK(min >= 20);
    CHECK(max <= 20 * min);
    CHECK(max_gap_rounds <= total / 2);
    CHECK_EQ(weft_mutex_destroy(&mu), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
