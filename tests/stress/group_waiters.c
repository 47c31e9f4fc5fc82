/* Stress test: groups whose members spawn into their own group while
 * several user threads and a plain pthread wait on it at once, under 2 and 3
 * workers and both spawn policies, bounded by a deadline. Every wait must
 * return only after the whole tree has finished, and destroy must say
 * EBUSY while a member runs or a thread waits and 0 once all is done. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define SECONDS_PER_CONFIG (TEST_SANITIZED ? 1.5 : 2.0)
#define WAITERS            4
#define DEPTH              4
#define FANOUT             3

static weft_group g;
static atomic_long nodes;
static atomic_int waits_done;
static long total;

struct node {
    int depth;
    uint64_t seed;
};

static void *node(void *arg)
{
    struct node n = *(struct node *)arg; /* a copy on our own stack */
    uint64_t s = n.seed;
    for (int i = (int)(test_splitmix(&s) % 3); i > 0; i--)
        weft_yield();
    if (n.depth < DEPTH) {
        for (int i = 0; i < FANOUT; i++) {
            struct node c = { n.depth + 1, test_splitmix(&s) };
            CHECK_EQ(weft_group_spawn(&g, node, &c, sizeof c, NULL), 0);
            if (test_splitmix(&s) % 4 == 0)
                weft_yield();
        }
    }
    atomic_fetch_add(&nodes, 1);
    return NULL;
}

static void check_wait(void)
{
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(atomic_load(&nodes), total);
    atomic_fetch_add(&waits_done, 1);
}

static void *user_waiter(void *arg)
{
    uint64_t s = (uint64_t)(uintptr_t)arg;
    for (int i = (int)(test_splitmix(&s) % 4); i > 0; i--)
        weft_yield();
    check_wait();
    return NULL;
}

static void *plain_waiter(void *arg)
{
    (void)arg;
    check_wait();
    return NULL;
}

static void config(int workers, int policy, uint64_t seed)
{
    test_init(workers, policy);
    total = 0;
    for (long d = 0, w = 1; d <= DEPTH; d++, w *= FANOUT)
        total += w;
    double end = check_now() + SECONDS_PER_CONFIG;
    long rounds = 0;
    while (check_now() < end) {
        atomic_store(&nodes, 0);
        atomic_store(&waits_done, 0);
        CHECK_EQ(weft_group_init(&g), 0);
        struct node root = { 0, test_splitmix(&seed) };
        CHECK_EQ(weft_group_spawn(&g, node, &root, sizeof root, NULL), 0);
        weft_thread *w[WAITERS];
        for (int i = 0; i < WAITERS; i++)
            CHECK_EQ(weft_spawn(&w[i], user_waiter, (void *)(uintptr_t)test_splitmix(&seed), NULL),
                     0);
        pthread_t p;
        CHECK_EQ(pthread_create(&p, NULL, plain_waiter, NULL), 0);
        /* 0 only once every node has finished and no thread waits any more */
        if (weft_group_destroy(&g) == 0)
            CHECK_EQ(atomic_load(&nodes), total);
        if (seed % 2)
            check_wait(); /* the initial thread waits too */
        for (int i = 0; i < WAITERS; i++)
            CHECK_EQ(weft_join(w[i], NULL), 0);
        CHECK_EQ(test_pthread_join(p, NULL), 0);
        CHECK_EQ(weft_group_destroy(&g), 0);
        CHECK_EQ(atomic_load(&waits_done), WAITERS + 1 + (int)(seed % 2));
        rounds++;
    }
    CHECK_EQ(weft_finalize(), 0);
    printf("workers=%d policy=%d rounds=%ld\n", workers, policy, rounds);
}

int main(void)
{
    test_run_configs(config, 0x9e3779b97f4a7c15ull);
    return 0;
}
