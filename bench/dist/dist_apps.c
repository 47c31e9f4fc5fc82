/* dist_apps.c: UTS T1 and N-Queens under weft_dist (make bench-dist).
 *
 *   dist_apps uts REPS       UTS T1 (4,130,071 nodes), a thread per node
 *   dist_apps nqueens N REPS N-Queens(N), a thread per legal placement
 *   dist_apps uts-serial REPS / nqueens-serial N REPS   the same without weft
 * One line per run on rank 0: "dist_<app> ranks=R ... ms=...". A spawned
 * thread reads what its argument points to before it spawns (it may move
 * at its first spawn): the UTS node and the board travel by value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft_dist.h>

#include "../apps/uts/uts_tree.h"

#define T1_NODES   4130071L
#define MAX_QUEENS 16

/* T1 as bench/apps/uts/uts.c defines it (q, m and shift unused by a
 * geometric tree; UTS's defaults) */
static const uts_tree t1 = { UTS_GEO, UTS_SHAPE_FIXED, 10, 4.0, 19, 15.0 / 64.0, 4, 0.5 };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long uts_serial(const uts_node *n)
{
    int k = uts_num_children(&t1, n);
    long count = 1;
    for (int i = 0; i < k; i++) {
        uts_node child;
        uts_child(n, i, &child);
        count += uts_serial(&child);
    }
    return count;
}

/* Joins the k threads; the sum of their results (counts). */
static long join_sum(weft_thread **t, int k)
{
    long count = 0;
    for (int i = 0; i < k; i++) {
        void *sub;
        if (weft_join(t[i], &sub) != 0)
            abort();
        count += (long)(intptr_t)sub;
    }
    return count;
}

static void *uts_thread(void *arg)
{
    uts_node n = *(const uts_node *)arg; /* the copy on our own stack */
    int k = uts_num_children(&t1, &n);
    long count = 1;
    if (k > 0) {
        weft_thread *t[k];
        for (int i = 0; i < k; i++) {
            uts_node child;
            uts_child(&n, i, &child);
            if (weft_spawn_copy(&t[i], uts_thread, &child, sizeof child, NULL) != 0)
                abort();
        }
        count += join_sum(t, k);
    }
    return (void *)(intptr_t)count;
}

static void *uts_root_thread(void *arg)
{
    (void)arg;
    uts_node root;
    uts_root(&t1, &root);
    return uts_thread(&root);
}

struct board {
    int n, row;
    signed char col[MAX_QUEENS];
};

static int legal(const struct board *b, int c)
{
    for (int r = 0; r < b->row; r++) {
        int d = b->col[r] - c;
        if (d == 0 || d == b->row - r || d == r - b->row)
            return 0;
    }
    return 1;
}

static long queens_serial(struct board *b)
{
    if (b->row == b->n)
        return 1;
    long count = 0;
    for (int c = 0; c < b->n; c++)
        if (legal(b, c)) {
            b->col[b->row++] = (signed char)c;
            count += queens_serial(b);
            b->row--;
        }
    return count;
}

static void *queens_thread(void *arg)
{
    struct board b = *(const struct board *)arg;
    if (b.row == b.n)
        return (void *)1;
    weft_thread *t[MAX_QUEENS];
    int k = 0;
    for (int c = 0; c < b.n; c++)
        if (legal(&b, c)) {
            struct board next = b;
            next.col[next.row++] = (signed char)c;
            if (weft_spawn_copy(&t[k++], queens_thread, &next, sizeof next, NULL) != 0)
                abort();
        }
    return (void *)(intptr_t)join_sum(t, k);
}

static const long queens_solutions[MAX_QUEENS + 1] = { 1,     1,     0,      0,       2,       10,
                                                       4,     40,    92,     352,     724,     2680,
                                                       14200, 73712, 365596, 2279184, 14772512 };

int main(int argc, char **argv)
{
    if (weft_dist_init(&argc, &argv) != 0)
        return 1;
    int rank = weft_dist_rank(), size = weft_dist_size();
    const char *mode = argc > 1 ? argv[1] : "uts";
    int queens = !strncmp(mode, "nqueens", 7), serial = strstr(mode, "serial") != NULL;
    long n = queens && argc > 2 ? atol(argv[2]) : 12;
    long reps = atol(argc > (queens ? 3 : 2) ? argv[queens ? 3 : 2] : "1");
    if (n < 1 || n > MAX_QUEENS)
        n = 12;
    for (long r = 0; r < reps; r++) {
        uint64_t t0 = now_ns();
        long v;
        struct board b = { (int)n, 0, { 0 } };
        if (queens && serial) {
            v = queens_serial(&b);
        } else if (queens) {
            void *res = NULL;
            weft_dist_run(queens_thread, &b, &res);
            v = (long)(intptr_t)res;
        } else if (serial) {
            uts_node root;
            uts_root(&t1, &root);
            v = uts_serial(&root);
        } else {
            void *res = NULL;
            weft_dist_run(uts_root_thread, NULL, &res);
            v = (long)(intptr_t)res;
        }
        double ms = (double)(now_ns() - t0) / 1e6;
        long want = queens ? queens_solutions[n] : T1_NODES;
        if (v != want) {
            fprintf(stderr, "dist_apps: %s gave %ld, expected %ld\n", mode, v, want);
            return 1;
        }
        if (rank == 0)
            printf("dist_%s ranks=%d n=%ld result=%ld ms=%.2f\n", mode, size, queens ? n : 0, v,
                   ms);
    }
    weft_dist_finalize();
    return 0;
}
