/* create_join.cpp: oneTBB baseline for create+join: one empty task_group::run followed by task_group::wait, per iteration.
 *
 * The loop runs in a task_arena of w threads (w = 1: the calling thread
 * alone). The task_group is reused across iterations, as TBB code does.
 *   baseline_tbb_create_join [-n ITER] [-r REPS] [-w LIST] [--callgrind]
 */
#include "bench.h"

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

static const long warmup = 1000;

static BENCH_NOINLINE void empty_task()
{
    BENCH_SINK(0);
}

BENCH_NOINLINE void bench_loop_tbb(tbb::task_group &g, long n);

BENCH_NOINLINE void bench_loop_tbb(tbb::task_group &g, long n)
{
    for (long i = 0; i < n; i++) {
        g.run([] { empty_task(); });
        g.wait();
    }
}

static void run(const bench_opts *o, long w, long n, double *samples)
{
    tbb::task_arena arena((int)w);
    arena.execute([&] {
        tbb::task_group g;
        bench_loop_tbb(g, warmup);
        for (int r = 0; r < o->reps; r++) {
            uint64_t t0 = bench_now_ns();
            bench_loop_tbb(g, n);
            samples[r] = (double)(bench_now_ns() - t0) / (double)n;
        }
    });
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, NULL);
    bench_cj_sweep(&o, "tbb", run);
    return 0;
}
