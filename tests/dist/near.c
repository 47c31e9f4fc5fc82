/* near.c: node-first victim selection. With the ranks grouped into
 * "nodes" (WEFT_DIST_NODE_RANKS=2, as ctest runs it on 4 and 8 ranks), a
 * thief tries a rank of its own node 3 times for each try anywhere else:
 * its WEFT_DIST_STATS line at finalize counts its attempts (steals + fails)
 * and those on its node (near). Without groups, or when every rank is on
 * one node, no attempt is counted near. Either way the results are right. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_test.h"

#define DEPTH     10 /* a binary tree of 2^DEPTH leaves */
#define RUNS      4
#define STATS_MAX 4096

/* A tree node: its leaves. */
static void *node(void *arg)
{
    intptr_t depth = (intptr_t)arg;
    if (depth == 0)
        return (void *)1;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, node, (void *)(depth - 1), NULL), 0);
    intptr_t mine = (intptr_t)node((void *)(depth - 1));
    void *theirs = NULL;
    CHECK_EQ(weft_join(t, &theirs), 0);
    return (void *)(mine + (intptr_t)theirs);
}

/* weft_dist_finalize with WEFT_DIST_STATS=1, its stderr captured: this
 * rank's steals, failed attempts and attempts on its node. */
static void finalize_counting(unsigned long long *steals, unsigned long long *fails,
                              unsigned long long *near)
{
    char buf[STATS_MAX];
    CHECK_EQ(dist_test_finalize_stats(buf, sizeof buf), 0);
    const char *s = strstr(buf, " steals "), *fl = strstr(buf, " fails "),
               *nr = strstr(buf, " near ");
    if (!s || !fl || !nr)
        fprintf(stderr, "near: no steal counts in: %s\n", buf);
    CHECK(s && fl && nr);
    *steals = strtoull(s + 8, NULL, 10);
    *fails = strtoull(fl + 7, NULL, 10);
    *near = strtoull(nr + 6, NULL, 10);
}

int main(int argc, char **argv)
{
    const char *g = getenv("WEFT_DIST_NODE_RANKS");
    int group = g && *g ? atoi(g) : 0;
    dist_test_init(&argc, &argv);
    int size = weft_dist_size();
    /* node first is on when the groups split the ranks */
    int split = group > 0 && group < size && group > 1;
    for (int run = 0; run < RUNS; run++) {
        void *r = NULL;
        CHECK_EQ(weft_dist_run(node, (void *)(intptr_t)DEPTH, &r), 0);
        CHECK_EQ((intptr_t)r, (intptr_t)1 << DEPTH);
    }
    unsigned long long steals, fails, near;
    int me = weft_dist_rank();
    finalize_counting(&steals, &fails, &near);
    unsigned long long tries = steals + fails;
    if (!split) {
        CHECK_EQ(near, 0);
        return 0;
    }
    /* 3 of every 4 attempts, the remote one last: near is 3/4 of them,
     * rounded either way by the cycle the last attempt ended in */
    if (4 * near + 4 < 3 * tries || 4 * near > 3 * tries + 4)
        fprintf(stderr, "near: rank %d: %llu of %llu attempts on its node\n", me, near, tries);
    CHECK(4 * near + 4 >= 3 * tries);
    CHECK(4 * near <= 3 * tries + 4);
    CHECK(tries > 0);
    return 0;
}
