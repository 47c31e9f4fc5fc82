/* task_graphs.c: Taskflow's DAG benchmarks (wavefront, linear_chain,
 * binary_tree, graph_traversal) with weft zero-wait tasks, in ns per task.
 *
 * Each timed call creates every task (counter = in-degree, successors
 * first so that each handle exists before a predecessor can continue it;
 * the sources last, with counter 0), lets them run, and waits: the initial
 * thread parks on a semaphore that the last task posts, so its worker's
 * scheduler context runs the tasks. Tasks are freed as they finish. The
 * same programs for OpenMP depend and oneTBB flow graph are in
 * bench/baselines/ (bench/common/task_graphs.h: what they share).
 *
 *   bench_task_graphs [-i all|wavefront|linear_chain|binary_tree|graph_traversal]
 *                     [-n SIZES] [-r REPS] [-w LIST]
 * SIZES: S for wavefront, l for linear_chain and binary_tree, n for
 * graph_traversal (default upstream's largest: 8192, 20, 20, 512).
 */
#include "task_graphs.h"
#include "bench.h"
#include "bench_weft.h"
#include "sched_est.h"

#include <stdatomic.h>

#include "weft.h"

static weft_sem done;
static weft_task **handles; /* one per task, for the successors' handles */

static void die_rc(const char *what, int rc)
{
    if (rc != 0)
        bench_die(what, rc);
}

/* ---- wavefront ------------------------------------------------------------- */

static long wf_mb;

static long block_computation(long i, long j)
{
    return i + j; /* upstream's body (the stencil is commented out there) */
}

static int wf_stencil; /* the real block body (TG_STENCIL) */

static void wf_task(void *arg)
{
    long k = (long)(intptr_t)arg, mb = wf_mb, i = k / mb, j = k % mb;
    if (wf_stencil)
        tg_stencil_block(i, j);
    else
        BENCH_SINK(block_computation(i, j));
    if (j + 1 < mb)
        weft_task_continue(handles[k + 1]);
    if (i + 1 < mb)
        weft_task_continue(handles[k + mb]);
    if (i + 1 == mb && j + 1 == mb)
        weft_sem_post(&done);
}

static void wavefront(long size)
{
    long mb = size / TG_BLOCK;
    wf_mb = mb;
    for (long k = mb * mb - 1; k >= 0; k--) {
        long i = k / mb, j = k % mb;
        die_rc("weft_task_create", weft_task_create(&handles[k], wf_task, (void *)(intptr_t)k,
                                                    (unsigned)((i > 0) + (j > 0))));
    }
    weft_sem_wait(&done);
}

/* ---- linear chain ---------------------------------------------------------- */

static size_t chain_counter;

/* arg: the next task's handle, NULL for the last */
static void chain_task(void *arg)
{
    chain_counter++;
    if (arg)
        weft_task_continue(arg);
    else
        weft_sem_post(&done);
}

static void linear_chain(long l)
{
    long n = 1L << l;
    weft_task *next = NULL;
    chain_counter = 0;
    for (long k = n - 1; k >= 0; k--) {
        weft_task *t;
        die_rc("weft_task_create", weft_task_create(&t, chain_task, next, k > 0));
        next = t;
    }
    weft_sem_wait(&done);
    if (chain_counter != (size_t)n) {
        fprintf(stderr, "bench: linear_chain counted %zu of %ld\n", chain_counter, n);
        exit(1);
    }
}

/* ---- binary tree ----------------------------------------------------------------- */

static atomic_size_t tree_counter;
static long tree_n; /* nodes: 1 .. tree_n */
static weft_task *tree_sink;

static void tree_task(void *arg)
{
    long i = (long)(intptr_t)arg;
    atomic_fetch_add_explicit(&tree_counter, 1, memory_order_relaxed);
    if (2 * i + 1 <= tree_n) {
        weft_task_continue(handles[2 * i]);
        weft_task_continue(handles[2 * i + 1]);
    } else {
        weft_task_continue(tree_sink); /* a leaf */
    }
}

static void post_done(void *arg)
{
    (void)arg;
    weft_sem_post(&done);
}

static void binary_tree(long l)
{
    long n = (1L << l) - 1;
    tree_n = n;
    atomic_store(&tree_counter, 0);
    die_rc("weft_task_create",
           weft_task_create(&tree_sink, post_done, NULL, (unsigned)(1L << (l - 1))));
    for (long i = n; i >= 1; i--)
        die_rc("weft_task_create",
               weft_task_create(&handles[i], tree_task, (void *)(intptr_t)i, i > 1));
    weft_sem_wait(&done);
    if (atomic_load(&tree_counter) != (size_t)n) {
        fprintf(stderr, "bench: binary_tree counted %zu of %ld\n", atomic_load(&tree_counter), n);
        exit(1);
    }
}

/* ---- graph traversal ------------------------------------------------------------- */

static struct tg_level_graph lg;
static weft_task *lg_sink;

static void lg_task(void *arg)
{
    long id = (long)(intptr_t)arg;
    tg_mark(&lg, id);
    int ns = lg.nsucc[id];
    if (id >= (lg.n - 1) * lg.n) {
        weft_task_continue(lg_sink); /* the last level's edges are no dependencies */
        return;
    }
    const long *s = &lg.succ[lg.succ0[id]];
    for (int e = 0; e < ns; e++)
        weft_task_continue(handles[s[e]]);
}

static void graph_traversal(long n)
{
    die_rc("weft_task_create", weft_task_create(&lg_sink, post_done, NULL, (unsigned)n));
    for (long id = n * n - 1; id >= 0; id--)
        die_rc("weft_task_create", weft_task_create(&handles[id], lg_task, (void *)(intptr_t)id,
                                                    (unsigned)lg.npred[id]));
    weft_sem_wait(&done);
}

/* ---- driver ------------------------------------------------------------------------ */

static const tg_builders builders = { wavefront, linear_chain, binary_tree, graph_traversal };

static void run(const bench_opts *o, int b, long size, long workers)
{
    double samples[BENCH_MAX_RUNS];
    long tasks = tg_tasks(b, size);
    handles = tg_alloc((size_t)(tasks + 2) * sizeof *handles);
    wf_stencil = tg_prepare(b, &lg, size);
    bench_weft_init(workers, WEFT_WORK_FIRST);
    die_rc("weft_sem_init", weft_sem_init(&done, 0));
    for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up (record caches, deque growth) */
        bench_sched_mark(r, o->reps, 0, tg_names[b], "weft", workers);
        uint64_t t0 = bench_now_ns();
        tg_build(&builders, b, size);
        tg_record(b, &lg, t0, samples, r);
        bench_sched_mark(r, o->reps, 1, tg_names[b], "weft", workers);
    }
    weft_sem_destroy(&done);
    die_rc("weft_finalize", weft_finalize());
    tg_release(b, &lg, wf_stencil);
    free(handles);
    tg_report(o, b, "weft", workers, size, samples, o->reps);
}

int main(int argc, char **argv)
{
    return tg_main(argc, argv, TG_USAGE("|wavefront_stencil"), run);
}
