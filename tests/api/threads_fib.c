/* Tests nested parallelism: recursive Fibonacci by weft_spawn/weft_join
 * (every call a user thread) under both spawn policies and 1 to 4 workers,
 * checking the value and the number of threads run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static atomic_long calls;
static atomic_long per_worker[8];

static void *fib(void *arg)
{
    intptr_t n = (intptr_t)arg;
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    int w = weft_worker_id();
    CHECK(w >= 0 && w < weft_num_workers());
    atomic_fetch_add_explicit(&per_worker[w], 1, memory_order_relaxed);
    if (n < 2)
        return (void *)n;
    weft_thread *a, *b;
    void *ra, *rb;
    CHECK_EQ(weft_spawn(&a, fib, (void *)(n - 1), NULL), 0);
    CHECK_EQ(weft_spawn(&b, fib, (void *)(n - 2), NULL), 0);
    CHECK_EQ(weft_join(b, &rb), 0);
    CHECK_EQ(weft_join(a, &ra), 0);
    return (void *)((intptr_t)ra + (intptr_t)rb);
}

static long fib_seq(long n)
{
    long a = 0, b = 1;
    for (long i = 0; i < n; i++) {
        long c = a + b;
        a = b;
        b = c;
    }
    return a;
}

int main(void)
{
    test_clear_env();
    const int n = TEST_TSAN ? 11 : TEST_ASAN ? 15 : 20;
    const long expect_calls = 2 * fib_seq(n + 1) - 1;
    for (int policy = 0; policy < 2; policy++) {
        for (int workers = 1; workers <= 4; workers++) {
            test_init(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
            atomic_store(&calls, 0);
            for (int i = 0; i < 8; i++)
                atomic_store(&per_worker[i], 0);
            double t0 = check_now();
            weft_thread *t;
            void *res = NULL;
            CHECK_EQ(weft_spawn(&t, fib, (void *)(intptr_t)n, NULL), 0);
            CHECK_EQ(weft_join(t, &res), 0);
            double dt = check_now() - t0;
            CHECK_EQ((long)(intptr_t)res, fib_seq(n));
            CHECK_EQ(atomic_load(&calls), expect_calls);
            /* Also from the initial thread directly. */
            CHECK_EQ((long)(intptr_t)fib((void *)(intptr_t)(n - 3)), fib_seq(n - 3));
            int used = 0;
            for (int i = 0; i < workers; i++)
                used += atomic_load(&per_worker[i]) > 0;
            printf("%s workers=%d fib(%d) %.3f s, workers used %d\n",
                   policy ? "help-first" : "work-first", workers, n, dt, used);
            CHECK_EQ(weft_finalize(), 0);
        }
    }
    return 0;
}
