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

static double run(const bench_opts *o, long n, long w, int unused)
{
    (void)unused;
    double samples[BENCH_MAX_RUNS];
    char param[32];
    bool bad = false;
    tbb::task_arena arena(w);
    arena.execute([&] {
        BENCH_SINK(fib_task(n < 15 ? n : 15));
        for (int r = 0; r < o->reps; r++) {
            uint64_t t0 = bench_now_ns();
            long v = fib_task(n);
            samples[r] = (double)(bench_now_ns() - t0);
            bad |= v != bench_fib_expected(n);
        }
    });
    if (bad) {
        fprintf(stderr, "bench: tbb fib(%ld) wrong\n", n);
        exit(1);
    }
    snprintf(param, sizeof param, "%ld", n);
    return bench_report(o, "fib", "tbb", w, param, samples, o->reps, "ns").median;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 30\n");
    bench_default_n(&o, 30);
    for (int ni = 0; ni < o.n.len; ni++)
        bench_fib_sweep(&o, "tbb", o.n.v[ni], bench_fib_serial_report(&o, "tbb", o.n.v[ni]).median,
                        run, 0);
    return 0;
}
