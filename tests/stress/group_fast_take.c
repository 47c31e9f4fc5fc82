/* Stress test: several user threads share one group, each spawning one
 * member at a time and waiting for the group, so that waits that find
 * every member finished (and take them with one CAS) race with each other
 * and with new members in reused stacks, under 2 and 3 workers and both
 * spawn policies, bounded by a deadline. A wait must never return before
 * a member spawned before it has finished. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define SECONDS_PER_CONFIG (TEST_SANITIZED ? 1.0 : 1.5)
#define SPAWNERS           6

static weft_group g;
static double end;

struct slot {
    atomic_int done;
    int yields; /* set by the spawner before each spawn */
};

static void *member(void *arg)
{
    struct slot *s = arg;
    for (int i = s->yields; i > 0; i--)
        weft_yield();
    atomic_store(&s->done, 1);
    return NULL;
}

static void *spawner(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg;
    struct slot s = { 0, 0 };
    long rounds = 0;
    while (check_now() < end) {
        atomic_store(&s.done, 0);
        s.yields = (int)(test_splitmix(&seed) % 3);
        CHECK_EQ(weft_group_spawn(&g, member, &s, 0, NULL), 0);
        if (test_splitmix(&seed) % 2)
            weft_yield();
        CHECK_EQ(weft_group_wait(&g), 0);
        CHECK_EQ(atomic_load(&s.done), 1); /* our member was spawned before the wait */
        rounds++;
    }
    return (void *)rounds;
}

static void config(int workers, int policy, uint64_t seed)
{
    test_init(workers, policy);
    CHECK_EQ(weft_group_init(&g), 0);
    end = check_now() + SECONDS_PER_CONFIG;
    weft_thread *t[SPAWNERS];
    for (int i = 0; i < SPAWNERS; i++)
        CHECK_EQ(weft_spawn(&t[i], spawner, (void *)(uintptr_t)test_splitmix(&seed), NULL), 0);
    long rounds = 0;
    for (int i = 0; i < SPAWNERS; i++) {
        void *r;
        CHECK_EQ(weft_join(t[i], &r), 0);
        rounds += (long)(intptr_t)r;
    }
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(weft_group_destroy(&g), 0);
    CHECK_EQ(weft_finalize(), 0);
    printf("workers=%d policy=%d rounds=%ld\n", workers, policy, rounds);
}

int main(void)
{
    test_run_configs(config, 0x243f6a8885a308d3ull);
    return 0;
}
