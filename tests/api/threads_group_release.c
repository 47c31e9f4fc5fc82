/* Tests that a group member's resources are released when it finishes, not
 * when the group is waited for: a long-lived group that many short members
 * pass through (a server's connections, a tree search waited for once at
 * the end) keeps its memory flat until the wait, under either policy, on
 * one and on two workers. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "sync_test.h"
#include "testutil.h"

enum { MEMBERS = 6000 };
#define TOUCH_BYTES ((size_t)32 << 10) /* stack each member writes */
/* Growth allowed before the wait: a few hundred members' stacks, far below
 * the MEMBERS * TOUCH_BYTES (about 190 MiB) that kept members would hold. */
#define GROWTH_MAX ((long long)48 << 20)

static atomic_long ran;

static void *touch(void *arg)
{
    (void)arg;
    volatile char buf[TOUCH_BYTES];
    memset((char *)buf, 1, sizeof buf);
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
    return NULL;
}

static void *root(void *arg)
{
    (void)arg;
    weft_group g = WEFT_GROUP_INIT;
    CHECK_EQ(weft_group_spawn(&g, touch, NULL, 0, NULL), 0); /* warm the cache */
    CHECK_EQ(weft_group_wait(&g), 0);
    long long before = test_rss_bytes();
    for (long i = 0; i < MEMBERS; i++) {
        CHECK_EQ(weft_group_spawn(&g, touch, NULL, 0, NULL), 0);
        if (i % 64 == 0)
            weft_yield(); /* help-first: let the queued members run */
    }
    while (atomic_load(&ran) < MEMBERS + 1)
        weft_yield();
    long long growth = test_rss_bytes() - before;
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(weft_group_destroy(&g), 0);
    printf("rss growth before the wait: %lld KiB\n", growth >> 10);
    if (!TEST_SANITIZED) /* sanitizers keep freed stacks' shadow and fake frames */
        CHECK(growth < GROWTH_MAX);
    return NULL;
}

int main(void)
{
    st_watchdog(60);
    test_clear_env();
    for (int workers = 1; workers <= 2; workers++)
        for (int policy = 0; policy < 2; policy++) {
            test_init(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
            atomic_store(&ran, 0);
            weft_thread *t;
            CHECK_EQ(weft_spawn(&t, root, NULL, NULL), 0);
            CHECK_EQ(weft_join(t, NULL), 0);
            CHECK_EQ(weft_finalize(), 0);
        }
    puts("ok");
    return 0;
}
