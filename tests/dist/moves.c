/* moves.c: threads really move between ranks, and a thread that moved
 * finds its locals at the same addresses with the same values, and keeps
 * its id. ctest runs it with WEFT_DIST_FORCE_STEAL=1 too. */
#include <stdint.h>

#include "dist_test.h"

#define WORKERS  16 /* threads the root spawns */
#define WORK_FIB 15 /* what each of them computes between its checks */
#define STEPS    6  /* spawn/join points per worker */
#define MAX_RUNS 50 /* runs until a move is seen (2 ranks and more) */

struct outcome {
    long moved; /* workers that resumed on another rank than they started */
    long off0;  /* workers that finished on a rank other than 0 */
};

static void *worker(void *arg)
{
    intptr_t seed = (intptr_t)arg;
    uint64_t id = weft_thread_id(weft_self());
    volatile long local[4] = { seed, seed * 3, seed * 5, seed * 7 };
    volatile long *where = local;
    int start = weft_dist_rank(), moved = 0;
    CHECK(id != 0);
    for (int s = 0; s < STEPS; s++) {
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, dist_test_fib, (void *)(intptr_t)WORK_FIB, NULL), 0);
        int before = weft_dist_rank();
        void *r;
        CHECK_EQ(weft_join(t, &r), 0);
        CHECK_EQ((intptr_t)r, dist_test_fib_serial(WORK_FIB));
        if (weft_dist_rank() != before)
            moved = 1;
        /* the same address, the same values, the same thread */
        CHECK(where == local);
        CHECK_EQ(local[0], seed + s);
        CHECK_EQ(local[3], seed * 7);
        CHECK_EQ(weft_thread_id(weft_self()), id);
        CHECK(weft_self() != NULL);
        CHECK_EQ(weft_worker_id(), 0);
        local[0]++;
        weft_yield();
    }
    if (weft_dist_rank() != start)
        moved = 1;
    return (void *)(intptr_t)(moved | (weft_dist_rank() != 0) << 1);
}

static void *root(void *arg)
{
    struct outcome *o = arg; /* rank 0's stack... read before any move */
    (void)o;
    weft_thread *t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        CHECK_EQ(weft_spawn(&t[i], worker, (void *)(intptr_t)(1000 * (i + 1)), NULL), 0);
    long moved = 0, off0 = 0;
    for (int i = 0; i < WORKERS; i++) {
        void *r;
        CHECK_EQ(weft_join(t[i], &r), 0);
        moved += (intptr_t)r & 1;
        off0 += ((intptr_t)r >> 1) & 1;
    }
    return (void *)(intptr_t)(moved << 16 | off0);
}

int main(int argc, char **argv)
{
    dist_test_init(&argc, &argv);
    int size = weft_dist_size();
    long moved = 0, off0 = 0;
    for (int run = 0; run < MAX_RUNS; run++) {
        void *r = NULL;
        CHECK_EQ(weft_dist_run(root, NULL, &r), 0);
        moved += (intptr_t)r >> 16;
        off0 += (intptr_t)r & 0xffff;
        if (size == 1 || (moved > 0 && off0 > 0))
            break;
    }
    if (size == 1) {
        CHECK_EQ(moved, 0);
        CHECK_EQ(off0, 0);
    } else {
        CHECK(moved > 0);
        CHECK(off0 > 0);
    }
    CHECK_EQ(weft_dist_finalize(), 0);
    return 0;
}
