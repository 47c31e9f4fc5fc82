/* Tests weft_spawn/weft_join/weft_detach called from plain kernel threads
 * while the runtime runs: weft_self()==NULL and weft_worker_id()==-1 there,
 * handles cross between user threads and plain threads in both directions, a
 * plain thread blocked in weft_join does not hold a worker, and several plain
 * threads spawn and join concurrently. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *times3(void *arg)
{
    return (void *)((intptr_t)arg * 3);
}

static atomic_int gate;
static atomic_int about_to_join;

static void *wait_gate(void *arg)
{
    while (!atomic_load(&gate))
        weft_yield();
    return arg;
}

static void *pthread_basic(void *arg)
{
    (void)arg;
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_worker_id(), -1);
    CHECK(weft_num_workers() > 0);
    weft_thread *t;
    void *res;
    for (intptr_t i = 0; i < (TEST_TSAN ? 100 : 1000); i++) {
        CHECK_EQ(weft_spawn(&t, times3, (void *)i, NULL), 0);
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((intptr_t)res, 3 * i);
    }
    /* Errors are the same from a plain thread. */
    CHECK_EQ(weft_spawn(NULL, times3, NULL, NULL), EINVAL);
    CHECK_EQ(weft_spawn(&t, NULL, NULL, NULL), EINVAL);
    CHECK_EQ(weft_join(NULL, NULL), EINVAL);
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&t, test_yield_until_set, &gate, NULL), 0);
    CHECK_EQ(weft_detach(t), 0);
    CHECK_EQ(weft_join(t, NULL), EINVAL);
    atomic_store(&gate, 1);
    return (void *)0x600d;
}

/* Joins the user thread handed over in *arg (spawned by the initial thread). */
static void *pthread_joins(void *arg)
{
    void *res = NULL;
    atomic_store(&about_to_join, 1);
    CHECK_EQ(weft_join((weft_thread *)arg, &res), 0);
    return res;
}

/* Spawns and returns a handle; a user thread joins it. */
static void *pthread_spawns(void *arg)
{
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, times3, arg, NULL), 0);
    return t;
}

/* Many plain threads spawning trees concurrently (TSan: ~0.5 ms a thread). */
#define TREE_DEPTH (TEST_TSAN ? 5 : 8)
#define TREES      (TEST_TSAN ? 4 : 20)
#define TREE_NODES ((1 << (TREE_DEPTH + 1)) - 1)
static void *sum_tree(void *arg)
{
    intptr_t depth = (intptr_t)arg;
    if (depth == 0)
        return (void *)1;
    weft_thread *a, *b;
    void *ra, *rb;
    CHECK_EQ(weft_spawn(&a, sum_tree, (void *)(depth - 1), NULL), 0);
    CHECK_EQ(weft_spawn(&b, sum_tree, (void *)(depth - 1), NULL), 0);
    CHECK_EQ(weft_join(a, &ra), 0);
    CHECK_EQ(weft_join(b, &rb), 0);
    return (void *)((intptr_t)ra + (intptr_t)rb + 1);
}

static void *pthread_trees(void *arg)
{
    (void)arg;
    long total = 0;
    for (int i = 0; i < TREES; i++) {
        weft_thread *t;
        void *res;
        CHECK_EQ(weft_spawn(&t, sum_tree, (void *)(intptr_t)TREE_DEPTH, NULL), 0);
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((intptr_t)res, TREE_NODES);
        total += (intptr_t)res;
    }
    return (void *)(intptr_t)total;
}

static void run(int workers, int policy)
{
    test_init(workers, policy);
    pthread_t pt;
    void *res;

    CHECK_EQ(pthread_create(&pt, NULL, pthread_basic, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK(res == (void *)0x600d);

    /* A plain thread blocked in weft_join holds no worker: with one worker
     * the initial thread keeps spawning and joining meanwhile. */
    atomic_store(&gate, 0);
    atomic_store(&about_to_join, 0);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, wait_gate, (void *)0x1d, NULL), 0);
    CHECK_EQ(pthread_create(&pt, NULL, pthread_joins, t), 0);
    while (!atomic_load(&about_to_join))
        weft_yield();
    for (intptr_t i = 0; i < 200; i++) {
        weft_thread *u;
        CHECK_EQ(weft_spawn(&u, times3, (void *)i, NULL), 0);
        CHECK_EQ(weft_join(u, &res), 0);
        CHECK_EQ((intptr_t)res, 3 * i);
    }
    atomic_store(&gate, 1);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK(res == (void *)0x1d);

    /* A user thread joins a thread a plain thread spawned. */
    CHECK_EQ(pthread_create(&pt, NULL, pthread_spawns, (void *)(intptr_t)14), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    t = res;
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, 42);

    /* Concurrent plain threads and the initial thread, all spawning trees. */
    enum { P = 3 };
    pthread_t pts[P];
    for (int i = 0; i < P; i++)
        CHECK_EQ(pthread_create(&pts[i], NULL, pthread_trees, NULL), 0);
    res = pthread_trees(NULL);
    CHECK_EQ((intptr_t)res, TREES * TREE_NODES);
    for (int i = 0; i < P; i++) {
        CHECK_EQ(test_pthread_join(pts[i], &res), 0);
        CHECK_EQ((intptr_t)res, TREES * TREE_NODES);
    }
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    run(1, WEFT_WORK_FIRST);
    run(1, WEFT_HELP_FIRST);
    run(2, WEFT_WORK_FIRST);
    run(3, WEFT_HELP_FIRST);
    return 0;
}
