/* Tests repeated weft_init/weft_finalize cycles with joinable and detached
 * threads each time, and that weft_finalize waits for every detached thread
 * (including ones still sleeping, ones spawned by detached threads and ones
 * spawned from a plain kernel thread) before it returns. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { CYCLES = 20, JOINABLE = 50, DETACHED = 50, SLEEPERS = 8 };

static atomic_int joined_ran, detached_ran, nested_ran, sleepers_done, pthread_spawned_ran;
static atomic_int flags[SLEEPERS];

static void *add_one(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
    return arg;
}

/* Keeps its worker busy for a while, yielding, then sets its flag. */
static void *sleeper(void *arg)
{
    int i = (int)(intptr_t)arg;
    double until = check_now() + 0.02 + 0.01 * i;
    while (check_now() < until)
        weft_yield();
    /* A real kernel sleep too: it blocks only this worker. */
    struct timespec ts = { 0, 2 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    atomic_store(&flags[i], 1);
    atomic_fetch_add(&sleepers_done, 1);
    return NULL;
}

/* A detached thread that spawns detached threads of its own and exits before
 * they have necessarily run. */
static void *spawner(void *arg)
{
    int depth = (int)(intptr_t)arg;
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    atomic_fetch_add(&nested_ran, 1);
    if (depth > 0)
        for (int i = 0; i < 2; i++)
            CHECK_EQ(weft_spawn(NULL, spawner, (void *)(intptr_t)(depth - 1), &a), 0);
    return NULL;
}

static void *pthread_spawns_detached(void *arg)
{
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    (void)arg;
    for (int i = 0; i < 10; i++)
        CHECK_EQ(weft_spawn(NULL, add_one, &pthread_spawned_ran, &a), 0);
    return NULL;
}

int main(void)
{
    test_clear_env();
    uint64_t seed = 42;
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        weft_config cfg;
        weft_config_default(&cfg);
        cfg.workers = 1 + cycle % 4;
        cfg.spawn_policy = (cycle / 4) % 2 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
        atomic_store(&joined_ran, 0);
        atomic_store(&detached_ran, 0);
        atomic_store(&nested_ran, 0);
        atomic_store(&sleepers_done, 0);
        atomic_store(&pthread_spawned_ran, 0);
        for (int i = 0; i < SLEEPERS; i++)
            atomic_store(&flags[i], 0);

        CHECK_EQ(weft_init(&cfg), 0);
        CHECK_EQ(weft_num_workers(), cfg.workers);
        CHECK(weft_self() != NULL);
        CHECK_EQ(weft_worker_id(), 0);

        weft_thread *t[JOINABLE];
        for (int i = 0; i < JOINABLE; i++)
            CHECK_EQ(weft_spawn(&t[i], add_one, &joined_ran, NULL), 0);
        weft_attr a = WEFT_ATTR_INIT;
        a.detached = 1;
        for (int i = 0; i < DETACHED; i++)
            CHECK_EQ(weft_spawn(NULL, add_one, &detached_ran, &a), 0);
        for (int i = 0; i < SLEEPERS; i++)
            CHECK_EQ(weft_spawn(NULL, sleeper, (void *)(intptr_t)i, &a), 0);
        CHECK_EQ(weft_spawn(NULL, spawner, (void *)(intptr_t)4, &a), 0);
        pthread_t pt;
        CHECK_EQ(pthread_create(&pt, NULL, pthread_spawns_detached, NULL), 0);
        CHECK_EQ(test_pthread_join(pt, NULL), 0);
        /* Some joinable threads are detached after the fact instead. */
        int detach_late = (int)(test_splitmix(&seed) % JOINABLE);
        for (int i = 0; i < JOINABLE; i++) {
            if (i < detach_late) {
                CHECK_EQ(weft_detach(t[i]), 0);
            } else {
                void *res = NULL;
                CHECK_EQ(weft_join(t[i], &res), 0);
                CHECK(res == &joined_ran);
            }
        }

        CHECK_EQ(weft_finalize(), 0);
        /* Everything has finished: nobody can touch these any more. */
        CHECK_EQ(atomic_load(&joined_ran), JOINABLE);
        CHECK_EQ(atomic_load(&detached_ran), DETACHED);
        CHECK_EQ(atomic_load(&sleepers_done), SLEEPERS);
        for (int i = 0; i < SLEEPERS; i++)
            CHECK_EQ(atomic_load(&flags[i]), 1);
        CHECK_EQ(atomic_load(&nested_ran), 31); /* 1 + 2 + 4 + 8 + 16 */
        CHECK_EQ(atomic_load(&pthread_spawned_ran), 10);
        CHECK_EQ(weft_num_workers(), 0);
        CHECK(weft_self() == NULL);
        weft_thread *dummy;
        CHECK_EQ(weft_spawn(&dummy, add_one, &joined_ran, NULL), EAGAIN);
    }
    return 0;
}
