/* Stress test: weft_blocking hand-offs mixed with everything else. User
 * threads on 1 to 3 workers make short calls (usually cancelled before a
 * machine takes the worker), sleeping calls (the worker is taken, the caller
 * comes back through the injection queue), calls that wait on a pipe fed by
 * another user thread, yields, a weft mutex around a shared counter, and
 * spawn+join of children that block too; the initial thread blocks now and
 * then (worker 0 claimed back). Bounded by a deadline; every counter must
 * add up, and the initial thread must end on its own kernel thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define SECONDS_PER_ROUND (TEST_SANITIZED ? 1.5 : 2.0)
#define NTHREADS          48

static weft_mutex lock = WEFT_MUTEX_INIT;
static long counter;         /* under lock */
static atomic_long expected; /* increments made */
static atomic_long calls;    /* weft_blocking calls returned */
static double deadline;
static int feed[NTHREADS][2];

static void noop(void *arg)
{
    atomic_fetch_add((atomic_long *)arg, 1);
}

static void nap(void *arg)
{
    struct timespec ts = { 0, (long)(uintptr_t)arg };
    nanosleep(&ts, NULL);
}

static void read_byte(void *arg)
{
    char c;
    CHECK_EQ(read(*(int *)arg, &c, 1), 1);
}

static void record_tid(void *arg)
{
    *(pid_t *)arg = (pid_t)syscall(SYS_gettid);
}

static void *child(void *arg)
{
    CHECK_EQ(weft_blocking(nap, (void *)(uintptr_t)20000), 0);
    atomic_fetch_add(&calls, 1);
    return arg;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1);
    long local = 0;
    while (check_now() < deadline) {
        pid_t before = (pid_t)syscall(SYS_gettid);
        switch (test_splitmix(&rng) % 7) {
        case 0: {
            atomic_long hits = 0;
            CHECK_EQ(weft_blocking(noop, &hits), 0);
            CHECK_EQ(atomic_load(&hits), 1);
            atomic_fetch_add(&calls, 1);
            break;
        }
        case 1:
            CHECK_EQ(weft_blocking(nap, (void *)(uintptr_t)(test_splitmix(&rng) % 200000)), 0);
            atomic_fetch_add(&calls, 1);
            break;
        case 2: {
            /* wait for the next thread to feed our pipe; feed the previous */
            int prev = (me + NTHREADS - 1) % NTHREADS;
            CHECK_EQ(weft_write(feed[prev][1], "x", 1), 1);
            CHECK_EQ(weft_blocking(read_byte, &feed[me][0]), 0);
            atomic_fetch_add(&calls, 1);
            break;
        }
        case 3: weft_yield(); break;
        case 4:
            CHECK_EQ(weft_mutex_lock(&lock), 0);
            counter++;
            CHECK_EQ(weft_mutex_unlock(&lock), 0);
            local++;
            break;
        case 5: {
            weft_thread *c;
            CHECK_EQ(weft_spawn(&c, child, NULL, NULL), 0);
            CHECK_EQ(weft_join(c, NULL), 0);
            break;
        }
        default: {
            /* the call runs on our own kernel thread */
            pid_t inside = 0;
            CHECK_EQ(weft_blocking(record_tid, &inside), 0);
            CHECK_EQ(inside, before);
            atomic_fetch_add(&calls, 1);
            break;
        }
        }
    }
    atomic_fetch_add(&expected, local);
    return NULL;
}

static void round_(int workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    CHECK_EQ(weft_init(&cfg), 0);
    pid_t main_tid = (pid_t)syscall(SYS_gettid);
    counter = 0;
    atomic_store(&expected, 0);
    atomic_store(&calls, 0);
    for (int i = 0; i < NTHREADS; i++) {
        CHECK_EQ(pipe(feed[i]), 0);
        /* every pipe starts with enough bytes (a quarter of its capacity)
         * that a reader never waits for a writer that has already stopped,
         * nor a writer for a reader */
        static char pre[16384];
        CHECK_EQ(write(feed[i][1], pre, sizeof pre), (long)sizeof pre);
    }
    deadline = check_now() + SECONDS_PER_ROUND;
    weft_thread *t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK_EQ(weft_spawn(&t[i], worker, (void *)(intptr_t)i, NULL), 0);
    long mine = 0;
    /* at least once: with work-first spawns the children run before we
     * do, and on a slow machine (TSan) the deadline may pass meanwhile */
    do {
        CHECK_EQ(weft_blocking(nap, (void *)(uintptr_t)50000), 0);
        mine++;
        weft_yield();
    } while (check_now() < deadline);
    for (int i = 0; i < NTHREADS; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(counter, atomic_load(&expected));
    CHECK(mine > 0);
    CHECK_EQ((pid_t)syscall(SYS_gettid), main_tid);
    for (int i = 0; i < NTHREADS; i++) {
        close(feed[i][0]);
        close(feed[i][1]);
    }
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ((pid_t)syscall(SYS_gettid), main_tid);
    printf("workers=%d: %ld calls, %ld increments, initial thread blocked %ld times\n", workers,
           atomic_load(&calls), counter, mine);
}

int main(void)
{
    for (int w = 1; w <= 3; w++)
        round_(w);
    return 0;
}
