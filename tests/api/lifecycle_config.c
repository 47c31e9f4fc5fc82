/* Tests weft_init with an explicit configuration: the worker count is the one
 * asked for (0 = CPUs of the affinity mask), invalid fields give EINVAL and
 * leave the runtime stopped, the configured default stack size is usable, and
 * the initial user thread stays on worker 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static atomic_int seen_worker[64];

static void *note_worker(void *arg)
{
    (void)arg;
    int w = weft_worker_id();
    CHECK(w >= 0 && w < weft_num_workers());
    CHECK(weft_self() != NULL);
    atomic_fetch_add(&seen_worker[w], 1);
    return NULL;
}

int main(void)
{
    test_clear_env();
    weft_config cfg;

    /* NULL config to weft_config_default does nothing (and does not crash). */
    weft_config_default(NULL);

    /* Invalid fields: EINVAL, runtime still stopped. */
    weft_config_default(&cfg);
    cfg.workers = -1;
    CHECK_EQ(weft_init(&cfg), EINVAL);
    CHECK_EQ(weft_num_workers(), 0);
    weft_config_default(&cfg);
    cfg.spawn_policy = 7;
    CHECK_EQ(weft_init(&cfg), EINVAL);
    cfg.spawn_policy = -1;
    CHECK_EQ(weft_init(&cfg), EINVAL);
    CHECK_EQ(weft_num_workers(), 0);
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_finalize(), EINVAL);

    /* Explicit worker counts, both policies. */
    for (int workers = 1; workers <= 4; workers++) {
        for (int policy = 0; policy < 2; policy++) {
            weft_config_default(&cfg);
            cfg.workers = workers;
            cfg.spawn_policy = policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
            CHECK_EQ(weft_init(&cfg), 0);
            CHECK_EQ(weft_num_workers(), workers);
            CHECK_EQ(weft_worker_id(), 0);
            for (int i = 0; i < 64; i++)
                atomic_store(&seen_worker[i], 0);
            /* Threads spawned and joined by the first user thread: after every
             * switch it is still on worker 0 (it is pinned there). */
            enum { N = 64 };
            weft_thread *t[N];
            for (int i = 0; i < N; i++) {
                CHECK_EQ(weft_spawn(&t[i], note_worker, NULL, NULL), 0);
                CHECK_EQ(weft_worker_id(), 0);
            }
            for (int i = 0; i < N; i++) {
                CHECK_EQ(weft_join(t[i], NULL), 0);
                CHECK_EQ(weft_worker_id(), 0);
            }
            int total = 0;
            for (int i = 0; i < 64; i++)
                total += atomic_load(&seen_worker[i]);
            CHECK_EQ(total, N);
            weft_yield();
            CHECK_EQ(weft_worker_id(), 0);
            CHECK_EQ(weft_finalize(), 0);
            CHECK_EQ(weft_num_workers(), 0);
            CHECK_EQ(weft_worker_id(), -1);
        }
    }

    /* workers = 0: the CPUs in the caller's affinity mask. */
    cpu_set_t all, one;
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
    weft_config_default(&cfg);
    cfg.workers = 0;
    CHECK_EQ(weft_init(&cfg), 0);
    CHECK_EQ(weft_num_workers(), CPU_COUNT(&all));
    CHECK_EQ(weft_finalize(), 0);
    if (CPU_COUNT(&all) >= 2) {
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &one);
                break;
            }
        CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
        CHECK_EQ(weft_init(&cfg), 0);
        CHECK_EQ(weft_num_workers(), 1);
        CHECK_EQ(weft_finalize(), 0);
        CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
    }

    /* The configured stack size becomes the default of every thread: 1 MiB
     * lets a thread use ~700 KiB of stack. */
    weft_config_default(&cfg);
    cfg.workers = 2;
    cfg.stack_size = 1 << 20;
    CHECK_EQ(weft_init(&cfg), 0);
    for (int i = 0; i < 4; i++) {
        weft_thread *t;
        void *res = (void *)0x1;
        CHECK_EQ(weft_spawn(&t, test_deep, (void *)(uintptr_t)(700u << 10), NULL), 0);
        CHECK_EQ(weft_join(t, &res), 0);
    }
    CHECK_EQ(weft_finalize(), 0);

    /* The library default (stack_size 0) is at least 64 KiB: 40 KiB of use
     * in a thread works. */
    weft_config_default(&cfg);
    cfg.stack_size = 0;
    CHECK_EQ(weft_init(&cfg), 0);
    {
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, test_deep, (void *)(uintptr_t)(40u << 10), NULL), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    }
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
