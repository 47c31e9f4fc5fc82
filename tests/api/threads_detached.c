/* Tests detached threads: spawned detached (out NULL) or detached later,
 * from user threads and plain kernel threads, they all run, and their
 * resources are freed at exit (memory stays flat over hundreds of thousands
 * of them). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static atomic_long done;

static void *count(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&done, 1, memory_order_relaxed);
    return NULL;
}

static void *count_after_yield(void *arg)
{
    weft_yield();
    return count(arg);
}

static void wait_done(long target)
{
    double deadline = check_now() + 60;
    while (atomic_load(&done) < target) {
        CHECK(check_now() < deadline);
        weft_yield();
    }
    CHECK_EQ(atomic_load(&done), target);
}

/* Spawns n detached threads, alternating the two ways of detaching. */
static void spawn_detached(long n)
{
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    for (long i = 0; i < n; i++) {
        if (i % 2 == 0) {
            CHECK_EQ(weft_spawn(NULL, i % 4 ? count : count_after_yield, NULL, &a), 0);
        } else {
            weft_thread *t;
            CHECK_EQ(weft_spawn(&t, i % 3 ? count : count_after_yield, NULL, NULL), 0);
            CHECK_EQ(weft_detach(t), 0);
        }
    }
}

/* for a user thread and a plain pthread alike */
static void *spawner(void *arg)
{
    spawn_detached((long)(intptr_t)arg);
    return NULL;
}

int main(void)
{
    test_clear_env();
    const long batch = TEST_TSAN ? 300 : TEST_ASAN ? 2000 : 20000;
    const int batches = 10;
    for (int policy = 0; policy < 2; policy++) {
        test_init(2, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
        atomic_store(&done, 0);
        long expect = 0;

        /* From the initial thread; warm up once before measuring. */
        spawn_detached(batch);
        expect += batch;
        wait_done(expect);
        long long rss0 = test_rss_bytes();
        for (int b = 0; b < batches; b++) {
            spawn_detached(batch);
            expect += batch;
            wait_done(expect);
        }
        long long rss1 = test_rss_bytes();
        printf("%s: %ld detached threads, rss %+lld KiB\n", policy ? "help-first" : "work-first",
               batch * batches, (rss1 - rss0) / 1024);
        /* Freed at exit: far less than a stack page per thread retained. */
        if (!TEST_SANITIZED)
            CHECK(rss1 - rss0 < (long long)batch * batches * 1024);

        /* From user threads and plain kernel threads at the same time. */
        weft_thread *u[2];
        pthread_t p[2];
        for (int i = 0; i < 2; i++) {
            CHECK_EQ(weft_spawn(&u[i], spawner, (void *)(intptr_t)batch, NULL), 0);
            CHECK_EQ(pthread_create(&p[i], NULL, spawner, (void *)(intptr_t)batch), 0);
        }
        for (int i = 0; i < 2; i++) {
            CHECK_EQ(weft_join(u[i], NULL), 0);
            CHECK_EQ(test_pthread_join(p[i], NULL), 0);
        }
        expect += 4 * batch;
        wait_done(expect);

        /* Detached threads still running at weft_finalize are waited for. */
        spawn_detached(batch);
        expect += batch;
        CHECK_EQ(weft_finalize(), 0);
        CHECK_EQ(atomic_load(&done), expect);
    }
    return 0;
}
