/* patterns.c: join and spawn patterns beyond plain fork-join: a thread
 * joined by a sibling rather than its spawner, a deep chain, the largest
 * copied argument, weft_exit, weft_yield, and eight runs in a row. */
#include <stdint.h>
#include <string.h>

#include "dist_test.h"

#define CHAIN_DEPTH 1000
#define SIBLINGS    8
#define WORK_FIB    12
#define RUNS        8

static void *work(void *arg)
{
    return dist_test_fib(arg);
}

/* Joins the thread its argument names: spawned by its parent, not by it. */
static void *join_sibling(void *arg)
{
    weft_thread *t = arg;
    CHECK(dist_test_fib((void *)(intptr_t)WORK_FIB) != NULL);
    void *r = NULL;
    CHECK_EQ(weft_join(t, &r), 0);
    return r;
}

static void *siblings(void *arg)
{
    (void)arg;
    long sum = 0;
    for (int i = 0; i < SIBLINGS; i++) {
        weft_thread *a, *b;
        CHECK_EQ(weft_spawn(&a, work, (void *)(intptr_t)WORK_FIB, NULL), 0);
        CHECK_EQ(weft_spawn(&b, join_sibling, a, NULL), 0);
        void *r = NULL;
        CHECK_EQ(weft_join(b, &r), 0);
        sum += (intptr_t)r;
    }
    return (void *)(intptr_t)sum;
}

static void *chain(void *arg)
{
    intptr_t depth = (intptr_t)arg;
    if (depth == 0)
        return (void *)0;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, chain, (void *)(depth - 1), NULL), 0);
    weft_yield();
    void *r = NULL;
    CHECK_EQ(weft_join(t, &r), 0);
    return (void *)((intptr_t)r + 1);
}

struct big {
    unsigned char bytes[4096];
};

static void *check_big(void *arg)
{
    const struct big *b = arg;
    unsigned char local = b->bytes[100];
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, work, (void *)(intptr_t)WORK_FIB, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    /* the copy is on our own stack: valid wherever we are now */
    for (int i = 0; i < (int)sizeof b->bytes; i++)
        CHECK_EQ(b->bytes[i], (unsigned char)(i * 7));
    return (void *)(intptr_t)local;
}

static void *exits(void *arg)
{
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, work, (void *)(intptr_t)WORK_FIB, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    weft_exit((void *)((intptr_t)arg + 1));
}

static void *root(void *arg)
{
    (void)arg;
    void *r = siblings(NULL);
    CHECK_EQ((intptr_t)r, SIBLINGS * dist_test_fib_serial(WORK_FIB));
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, chain, (void *)(intptr_t)CHAIN_DEPTH, NULL), 0);
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK_EQ((intptr_t)r, CHAIN_DEPTH);
    struct big b;
    for (int i = 0; i < (int)sizeof b.bytes; i++)
        b.bytes[i] = (unsigned char)(i * 7);
    CHECK_EQ(weft_spawn_copy(&t, check_big, &b, sizeof b, NULL), 0);
    memset(&b, 0, sizeof b); /* the child has its own copy */
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK_EQ((intptr_t)r, (unsigned char)700);
    CHECK_EQ(weft_spawn_copy(&t, check_big, &b, sizeof b + 1, NULL), EINVAL);
    CHECK_EQ(weft_spawn(&t, exits, (void *)41, NULL), 0);
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK_EQ((intptr_t)r, 42);
    weft_exit((void *)7); /* the root too */
}

int main(int argc, char **argv)
{
    dist_test_init(&argc, &argv);
    for (int i = 0; i < RUNS; i++) {
        void *r = NULL;
        CHECK_EQ(weft_dist_run(root, NULL, &r), 0);
        CHECK_EQ((intptr_t)r, 7);
    }
    CHECK_EQ(weft_dist_finalize(), 0);
    return 0;
}
