/* fib.cpp: oneTBB baseline for fib with one task_group::run per call (fib(n-1) as a task, fib(n-2) inline, then wait).
 *
 * Runs in a task_arena of w threads; no cut-off.
 *   baseline_tbb_fib [-n LIST] [-r REPS] [-w LIST] [--callgrind]
 */
#include "bench.h"

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

static long fib_task(long n)
{
    if (n < 2)
        return n;
    long a, b;
    tbb::task_group g;
    g.run([&a, n] { a = fib_task(n - 1); });
    b = fib_task(n - 2);
    g.wait();
    return a + b;
}

static double run(const bench_opts *o, long n, long w, int /* unused */)
{
    double samples[BENCH_MAX_RUNS];
    int bad = 0;
    tbb::task_arena arena(w);
    arena.execute([&] { bad = bench_fib_time(o, fib_task, n, 15, samples); });
    return bench_fib_report(o, "tbb", w, n, samples, bad);
}

int main(int argc, char **argv)
{
    return bench_fib_main(argc, argv, "  default -n 30\n", 30, "tbb", run);
}
