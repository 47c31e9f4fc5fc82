/* results.c: fib, a binary tree count and a small UTS tree give the serial
 * answers, on every rank, whatever the rank count. */
#include <stdint.h>

#include "dist_test.h"

#define FIB_N         20
#define TREE_DEPTH    14
#define UTS_ROOT_KIDS 40 /* geometric tree, in the manner of UTS T1 but small */
#define UTS_BRANCH    4  /* mean children of an inner node (expected value) */
#define UTS_DEPTH     7  /* no node below this depth has children */

static void *tree(void *arg)
{
    intptr_t depth = (intptr_t)arg;
    if (depth == 0)
        return (void *)1;
    weft_thread *l, *r;
    CHECK_EQ(weft_spawn(&l, tree, (void *)(depth - 1), NULL), 0);
    CHECK_EQ(weft_spawn(&r, tree, (void *)(depth - 1), NULL), 0);
    void *a, *b;
    CHECK_EQ(weft_join(r, &b), 0); /* the other order than spawned */
    CHECK_EQ(weft_join(l, &a), 0);
    return (void *)((intptr_t)a + (intptr_t)b + 1);
}

/* A node is its hash state and depth; children follow from the state. */
struct uts_node {
    uint64_t state;
    int depth;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53u;
    return x ^ (x >> 33);
}

static int uts_kids(const struct uts_node *n)
{
    if (n->depth == 0)
        return UTS_ROOT_KIDS;
    if (n->depth >= UTS_DEPTH)
        return 0;
    /* geometric with mean UTS_BRANCH: P(k) = p (1-p)^k, p = 1/(1+B) */
    int k = 0;
    uint64_t h = mix(n->state);
    while (k < 4 * UTS_BRANCH && h % (UTS_BRANCH + 1) != 0) {
        k++;
        h = mix(h + (uint64_t)k);
    }
    return k;
}

static long uts_serial(struct uts_node n)
{
    long count = 1;
    int kids = uts_kids(&n);
    for (int i = 0; i < kids; i++) {
        struct uts_node c = { mix(n.state * 31 + (uint64_t)i + 1), n.depth + 1 };
        count += uts_serial(c);
    }
    return count;
}

/* A thread per node; the node travels as a copy on the child's stack. */
static void *uts(void *arg)
{
    struct uts_node n = *(struct uts_node *)arg;
    int kids = uts_kids(&n);
    weft_thread *t[4 * UTS_BRANCH + UTS_ROOT_KIDS];
    for (int i = 0; i < kids; i++) {
        struct uts_node c = { mix(n.state * 31 + (uint64_t)i + 1), n.depth + 1 };
        CHECK_EQ(weft_spawn_copy(&t[i], uts, &c, sizeof c, NULL), 0);
    }
    long count = 1;
    for (int i = 0; i < kids; i++) {
        void *r;
        CHECK_EQ(weft_join(t[i], &r), 0);
        count += (long)(intptr_t)r;
    }
    return (void *)(intptr_t)count;
}

static void *uts_root(void *arg)
{
    (void)arg;
    struct uts_node root = { 0x5eed, 0 };
    return uts(&root);
}

int main(int argc, char **argv)
{
    dist_test_init(&argc, &argv);
    void *r = NULL;
    CHECK_EQ(weft_dist_run(dist_test_fib, (void *)(intptr_t)FIB_N, &r), 0);
    CHECK_EQ((intptr_t)r, dist_test_fib_serial(FIB_N));
    CHECK_EQ(weft_dist_run(tree, (void *)(intptr_t)TREE_DEPTH, &r), 0);
    CHECK_EQ((intptr_t)r, (1 << (TREE_DEPTH + 1)) - 1);
    CHECK_EQ(weft_dist_run(uts_root, NULL, &r), 0);
    struct uts_node root = { 0x5eed, 0 };
    long want = uts_serial(root);
    CHECK((intptr_t)r == want && want > 1000);
    CHECK_EQ(weft_dist_finalize(), 0);
    return 0;
}
