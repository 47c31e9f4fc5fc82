/* transport.c: WEFT_DIST_TRANSPORT chooses how the ranks reach each other.
 * An unknown value is refused on every rank (EINVAL); rma and shm both
 * give the serial answers on one node, whichever rank count, and the
 * WEFT_DIST_STATS line each rank prints at finalize names the transport
 * that ran; auto takes shm on one node. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_test.h"

#define FIB_N      18
#define TREE_DEPTH 10
#define RUNS       3
#define STATS_MAX  4096

static void *tree(void *arg)
{
    intptr_t depth = (intptr_t)arg;
    if (depth == 0)
        return (void *)1;
    weft_thread *l, *r;
    CHECK_EQ(weft_spawn(&l, tree, (void *)(depth - 1), NULL), 0);
    CHECK_EQ(weft_spawn(&r, tree, (void *)(depth - 1), NULL), 0);
    void *a, *b;
    CHECK_EQ(weft_join(l, &a), 0);
    CHECK_EQ(weft_join(r, &b), 0);
    return (void *)((intptr_t)a + (intptr_t)b + 1);
}

/* weft_dist_finalize with WEFT_DIST_STATS=1, its stderr captured: the
 * line must name transport want, and carry the counters the scale model
 * compares its events with (bench/scale/calibrate.sh reads them). */
static void finalize_expecting(const char *want)
{
    char buf[STATS_MAX], needle[64];
    int rc = dist_test_finalize_stats(buf, sizeof buf);
    unsetenv("WEFT_DIST_STATS");
    CHECK_EQ(rc, 0);
    snprintf(needle, sizeof needle, "transport %s\n", want);
    if (!strstr(buf, needle))
        fprintf(stderr, "transport: wanted \"%s\" in: %s\n", want, buf);
    CHECK(strstr(buf, needle) != NULL);
    CHECK(strstr(buf, " steals ") != NULL);
    CHECK(strstr(buf, " fails ") != NULL);
    CHECK(strstr(buf, " idle_ns ") != NULL);
}

static void runs(void)
{
    for (int i = 0; i < RUNS; i++) {
        void *r = NULL;
        CHECK_EQ(weft_dist_run(dist_test_fib, (void *)(intptr_t)FIB_N, &r), 0);
        CHECK_EQ((intptr_t)r, dist_test_fib_serial(FIB_N));
        CHECK_EQ(weft_dist_run(tree, (void *)(intptr_t)TREE_DEPTH, &r), 0);
        CHECK_EQ((intptr_t)r, (1 << (TREE_DEPTH + 1)) - 1);
    }
}

int main(int argc, char **argv)
{
    /* ours, so that a refused init leaves MPI for the next one */
    dist_test_mpi_init(&argc, &argv);

    setenv("WEFT_DIST_TRANSPORT", "carrier-pigeon", 1);
    int rc = weft_dist_init(&argc, &argv);
    if (rc == ENOTSUP) {
        MPI_Finalize();
        SKIP("weft_dist is not available in this build");
    }
    CHECK_EQ(rc, EINVAL);
    CHECK_EQ(weft_dist_rank(), -1);

    setenv("WEFT_DIST_TRANSPORT", "rma", 1);
    CHECK_EQ(weft_dist_init(&argc, &argv), 0);
    runs();
    finalize_expecting("rma");

    setenv("WEFT_DIST_TRANSPORT", "shm", 1);
    CHECK_EQ(weft_dist_init(&argc, &argv), 0);
    runs();
    finalize_expecting("shm");

    unsetenv("WEFT_DIST_TRANSPORT"); /* auto: every rank of a ctest run is on this node */
    CHECK_EQ(weft_dist_init(&argc, &argv), 0);
    runs();
    finalize_expecting("shm");

    MPI_Finalize();
    return 0;
}
