/* task_graphs.cpp: oneTBB flow-graph baseline for the task-graph benchmarks
 * (wavefront, linear_chain, binary_tree, graph_traversal): a continue_node
 * per task and make_edge per dependency, the sources fed one continue_msg,
 * then wait_for_all, as Taskflow's oneTBB variants do; ns per task, graph
 * construction and destruction included. Parallelism is capped per call with
 * global_control (it counts the calling thread).
 *   baseline_tbb_task_graphs [-i all|<benchmark>] [-n SIZES] [-r REPS] [-w LIST]
 */
#include "task_graphs.h"
#include "bench.h"

#include <atomic>
#include <memory>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

using node_t = tbb::flow::continue_node<tbb::flow::continue_msg>;
using msg_t = tbb::flow::continue_msg;

static int stencil; /* the real block body (TG_STENCIL) */

static void wavefront(long size)
{
    long mb = size / TG_BLOCK;
    tbb::flow::graph g;
    std::vector<std::unique_ptr<node_t>> nodes(mb * mb);
    for (long i = 0; i < mb; i++)
        for (long j = 0; j < mb; j++)
            nodes[i * mb + j] = std::make_unique<node_t>(g, [i, j](const msg_t &) {
                BENCH_SINK(tg_block_computation(i, j, stencil));
            });
    for (long i = 0; i < mb; i++)
        for (long j = 0; j < mb; j++) {
            if (i + 1 < mb)
                tbb::flow::make_edge(*nodes[i * mb + j], *nodes[(i + 1) * mb + j]);
            if (j + 1 < mb)
                tbb::flow::make_edge(*nodes[i * mb + j], *nodes[i * mb + j + 1]);
        }
    nodes[0]->try_put(msg_t());
    g.wait_for_all();
}

static size_t chain_counter;

static void linear_chain(long l)
{
    long n = 1L << l;
    chain_counter = 0;
    tbb::flow::graph g;
    std::vector<std::unique_ptr<node_t>> nodes(n);
    for (long k = 0; k < n; k++)
        nodes[k] = std::make_unique<node_t>(g, [](const msg_t &) { chain_counter++; });
    for (long k = 0; k + 1 < n; k++)
        tbb::flow::make_edge(*nodes[k], *nodes[k + 1]);
    nodes[0]->try_put(msg_t());
    g.wait_for_all();
    if (chain_counter != (size_t)n) {
        fprintf(stderr, "bench: linear_chain counted %zu of %ld\n", chain_counter, n);
        exit(1);
    }
}

static std::atomic<size_t> tree_counter;

static void binary_tree(long l)
{
    long n = (1L << l) - 1;
    tree_counter = 0;
    tbb::flow::graph g;
    std::vector<std::unique_ptr<node_t>> nodes(n + 1);
    for (long i = 1; i <= n; i++)
        nodes[i] = std::make_unique<node_t>(g, [](const msg_t &) {
            tree_counter.fetch_add(1, std::memory_order_relaxed);
        });
    for (long i = 1; 2 * i + 1 <= n; i++) {
        tbb::flow::make_edge(*nodes[i], *nodes[2 * i]);
        tbb::flow::make_edge(*nodes[i], *nodes[2 * i + 1]);
    }
    nodes[1]->try_put(msg_t());
    g.wait_for_all();
    if (tree_counter != (size_t)n) {
        fprintf(stderr, "bench: binary_tree counted %zu of %ld\n", tree_counter.load(), n);
        exit(1);
    }
}

static struct tg_level_graph lg;

static void graph_traversal(long n)
{
    tbb::flow::graph g;
    std::vector<std::unique_ptr<node_t>> nodes(n * n);
    /* upstream's extra source, feeding all of level 0 */
    node_t source(g, [](const msg_t &) {});
    for (long id = 0; id < n * n; id++)
        nodes[id] = std::make_unique<node_t>(g, [id](const msg_t &) { tg_mark(&lg, id); });
    for (long id = 0; id < n; id++)
        tbb::flow::make_edge(source, *nodes[id]);
    for (long id = 0; id < (n - 1) * n; id++)
        for (int e = 0; e < lg.nsucc[id]; e++)
            tbb::flow::make_edge(*nodes[id], *nodes[lg.succ[lg.succ0[id] + e]]);
    source.try_put(msg_t());
    g.wait_for_all();
}

static const tg_builders builders = { wavefront, linear_chain, binary_tree, graph_traversal };

static void run(const bench_opts *o, int b, long size, long workers)
{
    double samples[BENCH_MAX_RUNS];
    stencil = tg_prepare(b, &lg, size);
    for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up (TBB's workers start) */
        tbb::global_control c(tbb::global_control::max_allowed_parallelism, (size_t)workers);
        uint64_t t0 = bench_now_ns();
        tg_build(&builders, b, size);
        tg_record(b, &lg, t0, samples, r);
    }
    tg_release(b, &lg, stencil);
    tg_report(o, b, "tbb", workers, size, samples, o->reps);
}

int main(int argc, char **argv)
{
    return tg_main(argc, argv, TG_USAGE(""), run);
}
