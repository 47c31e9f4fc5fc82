/* Tests that task records are reused: rounds of 100,000 tasks (created by
 * one thread, run on 1 and 2 workers, some waiting long for their last
 * continuation) leave the resident memory where the first round put it,
 * and a task that stays unfired for all rounds pins no more than its own
 * chunk. Skipped under sanitizers (their allocators keep freed memory). */
#define _GNU_SOURCE
#include <stdatomic.h>

#include "testutil.h"

#define TASKS  100000
#define ROUNDS 20

static weft_sem done;
static atomic_int left;

static void fn(void *arg)
{
    (void)arg;
    if (atomic_fetch_sub(&left, 1) == 1)
        weft_sem_post(&done);
}

static void round_(void)
{
    atomic_store(&left, TASKS);
    for (int i = 0; i < TASKS; i++)
        CHECK_EQ(weft_task_create(NULL, fn, NULL, 0), 0);
    CHECK_EQ(weft_sem_wait(&done), 0);
}

int main(void)
{
    if (TEST_SANITIZED)
        SKIP("sanitizer allocators keep freed memory");
    test_clear_env();
    alarm(60);
    for (int workers = 1; workers <= 2; workers++) {
        test_init(workers, TEST_POLICY_ENV);
        CHECK_EQ(weft_sem_init(&done, 0), 0);
        weft_task *never;
        CHECK_EQ(weft_task_create(&never, fn, NULL, 1), 0); /* unfired to the end */
        round_();
        long long base = test_rss_bytes();
        for (int r = 1; r < ROUNDS; r++)
            round_();
        long long grown = test_rss_bytes() - base;
        /* 20 rounds of 6.4 MB of records each without reuse: 120 MB */
        CHECK(grown < 16ll << 20);
        CHECK_EQ(weft_sem_destroy(&done), 0);
        CHECK_EQ(weft_finalize(), 0); /* releases `never` */
    }
    return 0;
}
