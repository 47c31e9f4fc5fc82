/* Tests one million sequential weft_spawn+weft_join pairs (fewer under
 * sanitizers) under both spawn policies, plus a long sequence from a plain
 * kernel thread, checking every result and that nothing grows without bound. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *plus_one(void *arg)
{
    return (void *)((intptr_t)arg + 1);
}

static long spawn_join_loop(long n)
{
    long sum = 0;
    for (long i = 0; i < n; i++) {
        weft_thread *t;
        void *res = NULL;
        int rc = weft_spawn(&t, plus_one, (void *)(intptr_t)i, NULL);
        if (rc != 0) {
            fprintf(stderr, "spawn %ld failed: %d\n", i, rc);
            CHECK_EQ(rc, 0);
        }
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((intptr_t)res, i + 1);
        sum += (long)(intptr_t)res;
    }
    return sum;
}

static void *pthread_loop(void *arg)
{
    long n = (long)(intptr_t)arg;
    CHECK(weft_self() == NULL);
    return (void *)(intptr_t)spawn_join_loop(n);
}

int main(void)
{
    test_clear_env();
    /* TSan makes every thread creation cost ~0.5 ms (a fiber each). */
    const long n_work = TEST_TSAN ? 10000 : TEST_ASAN ? 100000 : 1000000;
    const long n_help = TEST_TSAN ? 2000 : TEST_ASAN ? 20000 : 200000;
    const long n_pthread = TEST_TSAN ? 1000 : TEST_ASAN ? 5000 : 50000;

    for (int policy = 0; policy < 2; policy++) {
        weft_config cfg;
        weft_config_default(&cfg);
        cfg.workers = 2;
        cfg.spawn_policy = policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
        long n = policy ? n_help : n_work;
        CHECK_EQ(weft_init(&cfg), 0);
        double t0 = check_now();
        long long rss0 = test_rss_bytes();
        long sum = spawn_join_loop(n);
        CHECK_EQ(sum, n * (n + 1) / 2);
        double t1 = check_now();
        long long rss1 = test_rss_bytes();
        printf("%s: %ld spawn+join in %.2f s (%.0f ns each), rss +%lld KiB\n",
               policy ? "help-first" : "work-first", n, t1 - t0, (t1 - t0) * 1e9 / (double)n,
               (rss1 - rss0) / 1024);
        /* Sequential spawn+join reuses memory: no growth per thread. */
        if (!TEST_SANITIZED)
            CHECK(rss1 - rss0 < 64LL << 20);

        pthread_t pt;
        void *res;
        t0 = check_now();
        CHECK_EQ(pthread_create(&pt, NULL, pthread_loop, (void *)(intptr_t)n_pthread), 0);
        CHECK_EQ(test_pthread_join(pt, &res), 0);
        CHECK_EQ((long)(intptr_t)res, n_pthread * (n_pthread + 1) / 2);
        printf("  from a plain pthread: %ld in %.2f s\n", n_pthread, check_now() - t0);
        CHECK_EQ(weft_finalize(), 0);
    }
    return 0;
}
