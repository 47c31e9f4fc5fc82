/* Tests that 200,000 user threads can be alive and parked at once (a chain in
 * which every thread spawns the next and joins it) in spite of the kernel's
 * mapping limit (vm.max_map_count, 65,530 on stock Debian), at no more than
 * 16 KiB of resident memory per thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static long n_threads;
static long long rss_at_leaf;
static long maps_at_leaf;
static atomic_long alive;

static long count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    long n = 0;
    int c;
    CHECK(f != NULL);
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void *link_fn(void *arg)
{
    long i = (long)(intptr_t)arg;
    atomic_fetch_add_explicit(&alive, 1, memory_order_relaxed);
    if (i == n_threads) {
        /* The last link: every other thread is parked in weft_join (a few
         * may still be on their way there on other workers). */
        double until = check_now() + 0.05;
        while (check_now() < until)
            weft_yield();
        CHECK_EQ(atomic_load(&alive), n_threads);
        rss_at_leaf = test_rss_bytes();
        maps_at_leaf = count_maps();
        return (void *)0;
    }
    weft_thread *t;
    void *res = NULL;
    int rc = weft_spawn(&t, link_fn, (void *)(intptr_t)(i + 1), NULL);
    if (rc != 0) {
        fprintf(stderr, "spawn of thread %ld failed: %d (%s)\n", i + 1, rc, strerror(rc));
        CHECK_EQ(rc, 0);
    }
    CHECK_EQ(weft_join(t, &res), 0);
    return (void *)((intptr_t)res + 1);
}

static void *warm(void *arg)
{
    return arg;
}

int main(void)
{
    test_clear_env();
    n_threads = TEST_TSAN ? 2000 : TEST_ASAN ? 20000 : 200000;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long max_maps = -1;
    if (f) {
        if (fscanf(f, "%ld", &max_maps) != 1)
            max_maps = -1;
        fclose(f);
    }

    for (int policy = 0; policy < 2; policy++) {
        test_init(2, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
        for (int i = 0; i < 1000; i++) {
            weft_thread *t;
            CHECK_EQ(weft_spawn(&t, warm, NULL, NULL), 0);
            CHECK_EQ(weft_join(t, NULL), 0);
        }
        atomic_store(&alive, 0);
        long long rss0 = test_rss_bytes();
        double t0 = check_now();
        weft_thread *t;
        void *res = NULL;
        CHECK_EQ(weft_spawn(&t, link_fn, (void *)(intptr_t)1, NULL), 0);
        CHECK_EQ(weft_join(t, &res), 0);
        double dt = check_now() - t0;
        CHECK_EQ((long)(intptr_t)res, n_threads - 1);
        CHECK_EQ(atomic_load(&alive), n_threads);
        long long per = (rss_at_leaf - rss0) / n_threads;
        printf("%s: %ld threads alive at once in %.2f s, rss +%lld MiB (%lld bytes/thread), "
               "%ld mappings (max_map_count %ld)\n",
               policy ? "help-first" : "work-first", n_threads, dt, (rss_at_leaf - rss0) >> 20, per,
               maps_at_leaf, max_maps);
        if (!TEST_SANITIZED)
            CHECK(per <= 16 * 1024);
        CHECK_EQ(weft_finalize(), 0);
    }
    return 0;
}
