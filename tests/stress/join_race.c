/* Stress test: races between a thread's exit and its weft_join/weft_detach
 * from other threads: producers (user threads and plain pthreads) spawn
 * short-lived threads and hand them to consumers (user threads and a plain
 * pthread) that join or detach them at random moments, under 2 to 4 workers
 * and both policies, bounded by a deadline; every result must arrive intact
 * and every thread must run exactly once. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define TOTAL_SECONDS (TEST_SANITIZED ? 8.0 : 10.0)
#define QCAP          1024
#define UPRODUCERS    3
#define UCONSUMERS    3

typedef struct item {
    weft_thread *t;
    long value;
} item;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static item queue[QCAP];
static int qhead, qlen;

static atomic_long produced_sum, produced_n, ran_sum, ran_n, joined_n, detached_n;
static atomic_long next_value;
static atomic_int producers_left;
static double deadline;

static int q_push(item it)
{
    int ok = 0;
    pthread_mutex_lock(&qlock);
    if (qlen < QCAP) {
        queue[(qhead + qlen) % QCAP] = it;
        qlen++;
        ok = 1;
    }
    pthread_mutex_unlock(&qlock);
    return ok;
}

static int q_pop(item *it)
{
    int ok = 0;
    pthread_mutex_lock(&qlock);
    if (qlen > 0) {
        *it = queue[qhead];
        qhead = (qhead + 1) % QCAP;
        qlen--;
        ok = 1;
    }
    pthread_mutex_unlock(&qlock);
    return ok;
}

/* The short-lived thread: a few yields (maybe none), then its value. */
static void *short_lived(void *arg)
{
    long v = (long)(intptr_t)arg;
    for (long i = 0; i < (v % 5 == 0 ? 0 : v % 4); i++)
        weft_yield();
    atomic_fetch_add_explicit(&ran_sum, v, memory_order_relaxed);
    atomic_fetch_add_explicit(&ran_n, 1, memory_order_relaxed);
    if (v % 7 == 0)
        weft_exit((void *)(intptr_t)v);
    return (void *)(intptr_t)v;
}

static void finish(item it, int join)
{
    if (join) {
        void *res = NULL;
        CHECK_EQ(weft_join(it.t, &res), 0);
        if ((long)(intptr_t)res != it.value) {
            fprintf(stderr, "join returned %ld, expected %ld\n", (long)(intptr_t)res, it.value);
            CHECK(!"wrong result");
        }
        atomic_fetch_add(&joined_n, 1);
    } else {
        CHECK_EQ(weft_detach(it.t), 0);
        atomic_fetch_add(&detached_n, 1);
    }
}

static void produce(uint64_t seed)
{
    uint64_t rng = seed;
    while (check_now() < deadline) {
        for (int k = 0; k < 32; k++) {
            long v = atomic_fetch_add(&next_value, 1) + 1;
            item it = { NULL, v };
            weft_attr a = WEFT_ATTR_INIT;
            uint64_t r = test_splitmix(&rng) % 16;
            a.detached = r == 0;
            CHECK_EQ(weft_spawn(a.detached ? NULL : &it.t, short_lived, (void *)(intptr_t)v, &a),
                     0);
            atomic_fetch_add(&produced_sum, v);
            atomic_fetch_add(&produced_n, 1);
            if (a.detached) {
                atomic_fetch_add(&detached_n, 1);
                continue;
            }
            if (r == 1) {
                finish(it, 1); /* joined by its creator */
                continue;
            }
            if (!q_push(it))
                finish(it, (int)(test_splitmix(&rng) & 1));
        }
        if (weft_self())
            weft_yield();
    }
    atomic_fetch_sub(&producers_left, 1);
}

static void consume(uint64_t seed)
{
    uint64_t rng = seed;
    for (;;) {
        item it;
        if (q_pop(&it)) {
            uint64_t r = test_splitmix(&rng) % 8;
            /* Sometimes wait a little so the thread has surely exited. */
            if (r == 0)
                for (int i = 0; i < 3; i++)
                    weft_yield();
            finish(it, r != 7);
        } else if (atomic_load(&producers_left) == 0) {
            /* Producers done and queue seen empty after that: finished. */
            if (!q_pop(&it))
                return;
            finish(it, 1);
        } else {
            weft_yield();
        }
    }
}

static void *uproducer(void *arg)
{
    produce((uint64_t)(uintptr_t)arg);
    return NULL;
}

static void *uconsumer(void *arg)
{
    consume((uint64_t)(uintptr_t)arg);
    return NULL;
}

static atomic_int pthreads_done;

static void *pproducer(void *arg)
{
    produce((uint64_t)(uintptr_t)arg);
    atomic_fetch_add(&pthreads_done, 1);
    return NULL;
}

static void *pconsumer(void *arg)
{
    consume((uint64_t)(uintptr_t)arg);
    atomic_fetch_add(&pthreads_done, 1);
    return NULL;
}

static void run_config(int workers, int policy, double seconds, uint64_t seed)
{
    test_init(workers, policy);
    atomic_store(&produced_sum, 0);
    atomic_store(&produced_n, 0);
    atomic_store(&ran_sum, 0);
    atomic_store(&ran_n, 0);
    atomic_store(&joined_n, 0);
    atomic_store(&detached_n, 0);
    atomic_store(&next_value, 0);
    atomic_store(&pthreads_done, 0);
    atomic_store(&producers_left, UPRODUCERS + 1);
    deadline = check_now() + seconds;

    pthread_t pp, pc;
    CHECK_EQ(pthread_create(&pp, NULL, pproducer, (void *)(uintptr_t)(seed + 100)), 0);
    CHECK_EQ(pthread_create(&pc, NULL, pconsumer, (void *)(uintptr_t)(seed + 200)), 0);
    weft_thread *up[UPRODUCERS], *uc[UCONSUMERS];
    for (int i = 0; i < UPRODUCERS; i++)
        CHECK_EQ(weft_spawn(&up[i], uproducer, (void *)(uintptr_t)(seed + (uint64_t)i), NULL), 0);
    for (int i = 0; i < UCONSUMERS; i++)
        CHECK_EQ(weft_spawn(&uc[i], uconsumer, (void *)(uintptr_t)(seed + 50 + (uint64_t)i), NULL),
                 0);
    for (int i = 0; i < UPRODUCERS; i++)
        CHECK_EQ(weft_join(up[i], NULL), 0);
    for (int i = 0; i < UCONSUMERS; i++)
        CHECK_EQ(weft_join(uc[i], NULL), 0);
    double hang = check_now() + 60;
    while (atomic_load(&pthreads_done) != 2) {
        CHECK(check_now() < hang);
        weft_yield();
    }
    CHECK_EQ(test_pthread_join(pp, NULL), 0);
    CHECK_EQ(test_pthread_join(pc, NULL), 0);
    CHECK_EQ(qlen, 0);
    CHECK_EQ(weft_finalize(), 0);

    CHECK_EQ(atomic_load(&ran_n), atomic_load(&produced_n));
    CHECK_EQ(atomic_load(&ran_sum), atomic_load(&produced_sum));
    CHECK_EQ(atomic_load(&joined_n) + atomic_load(&detached_n), atomic_load(&produced_n));
    long n = atomic_load(&next_value);
    CHECK_EQ(atomic_load(&produced_n), n);
    CHECK_EQ(atomic_load(&produced_sum), n * (n + 1) / 2);
    printf("workers=%d %s: %ld threads, %ld joined, %ld detached\n", workers,
           policy ? "help-first" : "work-first", n, atomic_load(&joined_n),
           atomic_load(&detached_n));
}

int main(int argc, char **argv)
{
    test_clear_env();
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu\n", (unsigned long long)seed);
    fflush(stdout);
    const double slice = TOTAL_SECONDS / 6;
    for (int workers = 2; workers <= 4; workers++)
        for (int policy = 0; policy < 2; policy++)
            run_config(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST, slice,
                       seed * 13 + (uint64_t)(workers * 2 + policy));
    return 0;
}
