/* task_graphs.c: OpenMP baseline for the task-graph benchmarks (wavefront,
 * linear_chain, binary_tree, graph_traversal): one task per node with
 * depend clauses, created from a single thread inside a parallel region,
 * as Taskflow's OpenMP variants do; ns per task, construction included.
 *
 * Each node has a dependency token (an int); a task names its own token
 * `out` and its predecessors' `in` (graph_traversal: an iterator over the
 * predecessor list, OpenMP 5.0). The tokens and the layered graph are input
 * data, made before the timer; the team persists between regions.
 *   baseline_openmp_task_graphs [-i all|<benchmark>] [-n SIZES] [-r REPS] [-w LIST]
 */
#include "task_graphs.h"
#include "bench.h"
#include "sched_est.h"

#include <omp.h>
#include <stdatomic.h>

static int *tok; /* one dependency token per node */

static int stencil; /* the real block body (TG_STENCIL) */

static void wavefront(long size)
{
    long mb = size / TG_BLOCK;
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < mb; i++)
        for (long j = 0; j < mb; j++) {
            long k = i * mb + j;
            if (i > 0 && j > 0) {
#pragma omp task firstprivate(i, j) depend(in : tok[k - mb], tok[k - 1]) depend(out : tok[k])
                BENCH_SINK(tg_block_computation(i, j, stencil));
            } else if (i > 0) {
#pragma omp task firstprivate(i, j) depend(in : tok[k - mb]) depend(out : tok[k])
                BENCH_SINK(tg_block_computation(i, j, stencil));
            } else if (j > 0) {
#pragma omp task firstprivate(i, j) depend(in : tok[k - 1]) depend(out : tok[k])
                BENCH_SINK(tg_block_computation(i, j, stencil));
            } else {
#pragma omp task firstprivate(i, j) depend(out : tok[k])
                BENCH_SINK(tg_block_computation(i, j, stencil));
            }
        }
}

static size_t chain_counter;

static void linear_chain(long l)
{
    long n = 1L << l;
    chain_counter = 0;
#pragma omp parallel
#pragma omp single
    for (long k = 0; k < n; k++) {
        if (k > 0) {
#pragma omp task depend(in : tok[k - 1]) depend(out : tok[k])
            chain_counter++;
        } else {
#pragma omp task depend(out : tok[k])
            chain_counter++;
        }
    }
    if (chain_counter != (size_t)n) {
        fprintf(stderr, "bench: linear_chain counted %zu of %ld\n", chain_counter, n);
        exit(1);
    }
}

static atomic_size_t tree_counter;

static void binary_tree(long l)
{
    long n = (1L << l) - 1;
    atomic_store(&tree_counter, 0);
#pragma omp parallel
#pragma omp single
    for (long i = 1; i <= n; i++) {
        if (i > 1) {
#pragma omp task depend(in : tok[i / 2]) depend(out : tok[i])
            atomic_fetch_add_explicit(&tree_counter, 1, memory_order_relaxed);
        } else {
#pragma omp task depend(out : tok[i])
            atomic_fetch_add_explicit(&tree_counter, 1, memory_order_relaxed);
        }
    }
    if (atomic_load(&tree_counter) != (size_t)n) {
        fprintf(stderr, "bench: binary_tree counted %zu of %ld\n", atomic_load(&tree_counter), n);
        exit(1);
    }
}

static struct tg_level_graph lg;
static int verify; /* the warm-up run checks every predecessor ran first */

static void check_preds(long id)
{
    for (int e = 0; e < lg.npred[id]; e++)
        if (!__atomic_load_n(&lg.visited[lg.pred[lg.pred0[id] + e]], __ATOMIC_ACQUIRE)) {
            fprintf(stderr, "bench: graph_traversal: node %ld ran before a predecessor\n", id);
            exit(1);
        }
}

static void graph_traversal(long n)
{
#pragma omp parallel
#pragma omp single
    for (long id = 0; id < n * n; id++) {
        const long *p = &lg.pred[lg.pred0[id]];
        int np = lg.npred[id];
        (void)np; /* gcc 12 does not see its use in the iterator */
#pragma omp task firstprivate(id) depend(iterator(k = 0 : np), in : tok[p[k]]) depend(out : tok[id])
        {
            if (verify)
                check_preds(id);
            tg_mark(&lg, id);
        }
    }
}

static const tg_builders builders = { wavefront, linear_chain, binary_tree, graph_traversal };

static void run(const bench_opts *o, int b, long size, long workers)
{
    double samples[BENCH_MAX_RUNS];
    tok = tg_alloc((size_t)(tg_tasks(b, size) + 2) * sizeof *tok);
    stencil = tg_prepare(b, &lg, size);
    omp_set_num_threads((int)workers);
    for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up (the team starts) */
        verify = r < 0;
        bench_sched_mark(r, o->reps, 0, tg_names[b], "omp", workers);
        uint64_t t0 = bench_now_ns();
        tg_build(&builders, b, size);
        tg_record(b, &lg, t0, samples, r);
        bench_sched_mark(r, o->reps, 1, tg_names[b], "omp", workers);
    }
    tg_release(b, &lg, stencil);
    free(tok);
    tg_report(o, b, "omp", workers, size, samples, o->reps);
}

int main(int argc, char **argv)
{
    return tg_main(argc, argv, TG_USAGE(""), run);
}
