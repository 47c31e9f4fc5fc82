/* Stress test: rapid weft_init/weft_finalize cycles with random worker
 * counts and policies, finalizing while detached threads (and their detached
 * descendants, some spawned from plain pthreads) are still running, bounded by
 * a deadline; after each finalize every thread must have run to its end. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define TOTAL_SECONDS (TEST_SANITIZED ? 6.0 : 8.0)

static atomic_long started, finished;

typedef struct job {
    uint64_t seed;
    int depth;
} job;

static void *detached_job(void *argp);

static void spawn_job(uint64_t seed, int depth)
{
    job *j = malloc(sizeof *j);
    CHECK(j != NULL);
    j->seed = seed;
    j->depth = depth;
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    atomic_fetch_add(&started, 1);
    CHECK_EQ(weft_spawn(NULL, detached_job, j, &a), 0);
}

static void *detached_job(void *argp)
{
    job j = *(job *)argp;
    free(argp);
    uint64_t rng = j.seed;
    int yields = (int)(test_splitmix(&rng) % 50);
    for (int i = 0; i < yields; i++)
        weft_yield();
    if (j.depth > 0) {
        int kids = (int)(test_splitmix(&rng) % 3);
        for (int i = 0; i < kids; i++)
            spawn_job(test_splitmix(&rng), j.depth - 1);
    }
    /* A joinable grandchild joined here, now and then. */
    if (test_splitmix(&rng) % 4 == 0) {
        weft_thread *t;
        atomic_fetch_add(&started, 1);
        job *k = malloc(sizeof *k);
        CHECK(k != NULL);
        k->seed = test_splitmix(&rng);
        k->depth = 0;
        CHECK_EQ(weft_spawn(&t, detached_job, k, NULL), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    }
    atomic_fetch_add(&finished, 1);
    return NULL;
}

static void *pthread_spawner(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg;
    for (int i = 0; i < 20; i++)
        spawn_job(test_splitmix(&rng), 2);
    return NULL;
}

int main(int argc, char **argv)
{
    test_clear_env();
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu\n", (unsigned long long)seed);
    fflush(stdout);
    uint64_t rng = seed;
    double until = check_now() + TOTAL_SECONDS;
    long cycles = 0, threads = 0;
    while (check_now() < until) {
        weft_config cfg;
        weft_config_default(&cfg);
        cfg.workers = 1 + (int)(test_splitmix(&rng) % 4);
        cfg.spawn_policy = test_splitmix(&rng) % 2 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
        atomic_store(&started, 0);
        atomic_store(&finished, 0);
        CHECK_EQ(weft_init(&cfg), 0);
        CHECK_EQ(weft_num_workers(), cfg.workers);
        int roots = (int)(test_splitmix(&rng) % 40);
        for (int i = 0; i < roots; i++)
            spawn_job(test_splitmix(&rng), 3);
        if (test_splitmix(&rng) % 3 == 0) {
            pthread_t pt;
            CHECK_EQ(pthread_create(&pt, NULL, pthread_spawner,
                                    (void *)(uintptr_t)test_splitmix(&rng)),
                     0);
            /* Its spawns must be done before weft_finalize starts. */
            CHECK_EQ(test_pthread_join(pt, NULL), 0);
        }
        CHECK_EQ(weft_finalize(), 0);
        long s = atomic_load(&started), f = atomic_load(&finished);
        if (s != f) {
            fprintf(stderr, "cycle %ld: %ld threads started, %ld finished at finalize\n", cycles, s,
                    f);
            CHECK_EQ(s, f);
        }
        CHECK_EQ(weft_num_workers(), 0);
        threads += s;
        cycles++;
    }
    printf("%ld init/finalize cycles, %ld threads\n", cycles, threads);
    CHECK(cycles > 0);
    return 0;
}
