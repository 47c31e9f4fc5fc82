/* task_graphs.h: what the task-graph benchmarks share across models (weft
 * tasks, OpenMP depend, oneTBB flow graph): sizes, the layered random graph
 * of graph_traversal and its node body, and the RESULT line per task.
 *
 * The four DAGs are Taskflow's benchmarks (benchmarks/ of taskflow/taskflow,
 * described in bench/README.md), with the same task bodies and sizes; each
 * timed call builds the graph, runs it, waits and releases it, as upstream
 * times it; the runtime is started before the timer.
 *   wavefront        MB x MB blocks, MB = S/8; (i,j) precedes (i+1,j), (i,j+1);
 *                    empty body (upstream's block_computation returns i+j)
 *   linear_chain     2^l tasks in a chain; body counter++ (non-atomic)
 *   binary_tree      heap-indexed 1 .. 2^l - 1, i precedes 2i, 2i+1; body
 *                    relaxed fetch_add on one shared counter
 *   graph_traversal  n levels x n nodes, 1 + rand()%4 successors per node in
 *                    the next level taken as consecutive slices of a shuffled
 *                    permutation (reshuffled when a slice reaches its end);
 *                    body: 32 sin + 32 cos (Node::mark)
 * The layered graph is generated with splitmix64 rather than libstdc++'s
 * mt19937 + std::shuffle and glibc's rand(): the same shape and degree
 * statistics, not the same edges; every model here runs the same graph.
 * Header-only C, also compiled as C++ (the oneTBB variant).
 */
#ifndef WEFT_BENCH_TASK_GRAPHS_H
#define WEFT_BENCH_TASK_GRAPHS_H

#include "bench.h" /* first: it asks for _GNU_SOURCE */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { TG_WAVEFRONT, TG_LINEAR_CHAIN, TG_BINARY_TREE, TG_GRAPH_TRAVERSAL, TG_STENCIL, TG_COUNT };

/* TG_STENCIL: the wavefront with upstream's commented-out block body (the
 * 8 x 8 stencil of matrix.hpp) for a speedup that work, not overhead,
 * decides; only when named (-i wavefront_stencil). */
static const char *const tg_names[TG_COUNT] = { "wavefront", "linear_chain", "binary_tree",
                                                "graph_traversal", "wavefront_stencil" };
/* Default sizes: upstream's largest (S, l, l, n, S). */
static const long tg_default_size[TG_COUNT] = { 8192, 20, 20, 512, 8192 };
#define TG_BLOCK 8 /* wavefront block side (B) */

static inline long tg_tasks(int b, long size)
{
    switch (b) {
    case TG_WAVEFRONT:
    case TG_STENCIL: return (size / TG_BLOCK) * (size / TG_BLOCK);
    case TG_LINEAR_CHAIN: return 1L << size;
    case TG_BINARY_TREE: return (1L << size) - 1;
    default: return size * size;
    }
}

/* ---- the layered graph ------------------------------------------------------ */

struct tg_level_graph {
    long n;        /* levels, and nodes per level; node id = level * n + index */
    int *nsucc;    /* successors of each node (the last level's are none) */
    long *succ0;   /* first successor's slot in succ */
    long *succ;    /* successor ids */
    int *npred;    /* predecessors of each node */
    long *pred0;   /* first predecessor's slot in pred */
    long *pred;    /* predecessor ids */
    char *visited; /* Node::_visited */
};

static inline uint64_t tg_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void tg_shuffle(long *p, long n, uint64_t *s)
{
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(tg_splitmix(s) % (uint64_t)(i + 1));
        long t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

static inline void *tg_alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

static inline void tg_level_graph_init(struct tg_level_graph *g, long n)
{
    long total = n * n, edges = 0, cap = total * 4;
    uint64_t seed = 0;
    g->n = n;
    g->nsucc = (int *)tg_alloc((size_t)total * sizeof *g->nsucc);
    g->succ0 = (long *)tg_alloc((size_t)total * sizeof *g->succ0);
    g->succ = (long *)tg_alloc((size_t)cap * sizeof *g->succ);
    g->npred = (int *)tg_alloc((size_t)total * sizeof *g->npred);
    g->pred0 = (long *)tg_alloc((size_t)total * sizeof *g->pred0);
    g->pred = (long *)tg_alloc((size_t)cap * sizeof *g->pred);
    g->visited = (char *)tg_alloc((size_t)total);
    long *perm = (long *)tg_alloc((size_t)n * sizeof *perm);
    for (long l = 0; l + 1 < n; l++) {
        for (long i = 0; i < n; i++)
            perm[i] = i;
        tg_shuffle(perm, n, &seed);
        long pos = 0;
        for (long i = 0; i < n; i++) {
            long id = l * n + i, k = 1 + (long)(tg_splitmix(&seed) % 4);
            if (pos + k > n)
                k = n - pos; /* the slice that reaches the end is cut short */
            g->succ0[id] = edges;
            g->nsucc[id] = (int)k;
            for (long e = 0; e < k; e++) {
                long s = (l + 1) * n + perm[pos + e];
                g->succ[edges++] = s;
                g->npred[s]++;
            }
            pos += k;
            if (pos >= n) {
                tg_shuffle(perm, n, &seed);
                pos = 0;
            }
        }
    }
    for (long i = (n - 1) * n; i < total; i++)
        g->succ0[i] = edges;
    long off = 0;
    for (long id = 0; id < total; id++) {
        g->pred0[id] = off;
        off += g->npred[id];
        g->npred[id] = 0;
    }
    for (long id = 0; id < total; id++)
        for (int e = 0; e < g->nsucc[id]; e++) {
            long s = g->succ[g->succ0[id] + e];
            g->pred[g->pred0[s] + g->npred[s]++] = id;
        }
    free(perm);
}

static inline void tg_level_graph_destroy(struct tg_level_graph *g)
{
    free(g->nsucc);
    free(g->succ0);
    free(g->succ);
    free(g->npred);
    free(g->pred0);
    free(g->pred);
    free(g->visited);
}

/* Node::mark(): about 0.74 us of libm work on this machine. */
static inline void tg_mark(struct tg_level_graph *g, long id)
{
    size_t i = (size_t)(id % g->n);
    g->visited[id] = 1;
    volatile double sink = 0;
    double x = (double)((i * 1315423911u) ^ (i >> 3)) + 1.0;
    for (int k = 0; k < 32; ++k) {
        x = sin(x) * 1.0000001 + cos(x);
        sink += x;
    }
}

/* Every node visited once (and the marks cleared for the next run). */
static inline void tg_level_graph_check(struct tg_level_graph *g)
{
    for (long id = 0; id < g->n * g->n; id++) {
        if (!g->visited[id]) {
            fprintf(stderr, "bench: graph_traversal: node %ld not visited\n", id);
            exit(1);
        }
        g->visited[id] = 0;
    }
}

/* ---- results --------------------------------------------------------------------- */

/* Reports one benchmark: samples are ns per whole call; the RESULT line
 * gives ns per task. */
static inline void tg_report(const bench_opts *o, int b, const char *impl, long workers, long size,
                             double *samples, int runs)
{
    char param[48];
    long tasks = tg_tasks(b, size);
    for (int r = 0; r < runs; r++)
        samples[r] /= (double)tasks;
    snprintf(param, sizeof param, "%ld/%ld", size, tasks);
    bench_report(o, tg_names[b], impl, workers, param, samples, runs, "ns/task");
}

/* Which benchmarks -i selects ("all" or one name), and the sizes -n gives
 * (default: upstream's largest). */
static inline int tg_wants(const bench_opts *o, int b)
{
    return (b != TG_STENCIL && strcmp(o->impl, "all") == 0) || strcmp(o->impl, tg_names[b]) == 0;
}

/* ---- the stencil ------------------------------------------------------------------ */

static double *tg_matrix; /* S x S, row-major */
static long tg_side;

static inline void tg_matrix_init(long s)
{
    tg_side = s;
    tg_matrix = (double *)tg_alloc((size_t)(s * s) * sizeof *tg_matrix);
    for (long i = 0; i < s * s; i++)
        tg_matrix[i] = (double)i;
}

static inline void tg_matrix_destroy(void)
{
    free(tg_matrix);
    tg_matrix = NULL;
}

static inline double tg_calc(double v0, double v1)
{
    return v0 == v1 ? pow(v0 / v1, 4.0f) : (v0 > v1 ? v0 : v1);
}

/* upstream's block_computation(i, j) before it was reduced to i + j */
static inline void tg_stencil_block(long i, long j)
{
    long s = tg_side, si = i * TG_BLOCK, sj = j * TG_BLOCK;
    long ei = si + TG_BLOCK > s ? s : si + TG_BLOCK, ej = sj + TG_BLOCK > s ? s : sj + TG_BLOCK;
    for (long ii = si; ii < ei; ++ii)
        for (long jj = sj; jj < ej; ++jj) {
            double v0 = ii == 0 ? 0 : tg_matrix[(ii - 1) * s + jj];
            double v1 = jj == 0 ? 0 : tg_matrix[ii * s + jj - 1];
            tg_matrix[ii * s + jj] = ii == 0 && jj == 0 ? 1 : tg_calc(v0, v1);
        }
}

/* The wavefront's block body in the baselines: upstream's stencil where
 * stencil is set (TG_STENCIL), the bare i + j otherwise. */
static inline long tg_block_computation(long i, long j, int stencil)
{
    if (stencil)
        tg_stencil_block(i, j);
    return i + j;
}

static inline void tg_sizes(const bench_opts *o, int b, bench_list *out)
{
    if (o->n.len > 0) {
        *out = o->n;
    } else {
        out->v[0] = tg_default_size[b];
        out->len = 1;
    }
}

/* ---- the driver ------------------------------------------------------------------- */

/* Sets up what benchmark b of the given size needs before its timed runs:
 * the layered graph (graph_traversal), the matrix (wavefront_stencil).
 * Returns whether the block body is the stencil; tg_release undoes it. */
static inline int tg_prepare(int b, struct tg_level_graph *g, long size)
{
    if (b == TG_GRAPH_TRAVERSAL)
        tg_level_graph_init(g, size);
    int stencil = b == TG_STENCIL;
    if (stencil)
        tg_matrix_init(size);
    return stencil;
}

/* An implementation's four graph builders; wavefront builds TG_STENCIL too. */
typedef struct tg_builders {
    void (*wavefront)(long size);
    void (*linear_chain)(long l);
    void (*binary_tree)(long l);
    void (*graph_traversal)(long n);
} tg_builders;

/* Builds and runs graph b of the given size: the timed part of a run. */
static inline void tg_build(const tg_builders *f, int b, long size)
{
    switch (b) {
    case TG_WAVEFRONT:
    case TG_STENCIL: f->wavefront(size); break;
    case TG_LINEAR_CHAIN: f->linear_chain(size); break;
    case TG_BINARY_TREE: f->binary_tree(size); break;
    default: f->graph_traversal(size); break;
    }
}

/* After one timed call started at t0: its time, the graph_traversal check
 * (outside the timer), and the sample unless r is the warm-up (r = -1). */
static inline void tg_record(int b, struct tg_level_graph *g, uint64_t t0, double *samples, int r)
{
    double dt = (double)(bench_now_ns() - t0);
    if (b == TG_GRAPH_TRAVERSAL)
        tg_level_graph_check(g);
    if (r >= 0)
        samples[r] = dt;
}

/* Releases what run set up for benchmark b: the layered graph, the matrix. */
static inline void tg_release(int b, struct tg_level_graph *g, int stencil)
{
    if (b == TG_GRAPH_TRAVERSAL)
        tg_level_graph_destroy(g);
    if (stencil)
        tg_matrix_destroy();
}

/* main: parses the options and runs each selected benchmark for each size
 * and worker count. */
typedef void (*tg_run_fn)(const bench_opts *o, int b, long size, long workers);

/* tg_main's usage lines: -i with the four graphs and an implementation's
 * extra names (a string literal, "" or "|name..."), and -n. */
#define TG_USAGE(extra_i)                                                                          \
    "  -i all|wavefront|linear_chain|binary_tree|graph_traversal" extra_i "\n"                     \
    "  -n sizes: S (wavefront), l (linear_chain, binary_tree), n (graph_traversal)\n"

static inline int tg_main(int argc, char **argv, const char *usage, tg_run_fn run)
{
    bench_opts o;
    bench_parse(argc, argv, &o, usage);
    for (int b = 0; b < TG_COUNT; b++) {
        if (!tg_wants(&o, b))
            continue;
        bench_list sizes;
        tg_sizes(&o, b, &sizes);
        for (int si = 0; si < sizes.len; si++)
            for (int wi = 0; wi < o.workers.len; wi++)
                run(&o, b, sizes.v[si], o.workers.v[wi]);
    }
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif
