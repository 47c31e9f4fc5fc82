/* fib.cpp: Boost.Fiber baseline for fib with one fiber per call (fib(n-1) in a new fiber, fib(n-2) inline, then join).
 *
 * launch::dispatch runs the child at once, keeping live fibers to O(n) per
 * chain; launch::post would queue them breadth-first and hold one 128 KiB
 * stack per queued call. workers=1: round_robin; workers=w: work_stealing.
 *   baseline_boostfiber_fib [-n LIST] [-r REPS] [-w LIST] [--callgrind]
 */
#include "pool.hpp"

static long fib_fiber(long n)
{
    if (n < 2)
        return n;
    long a;
    bf::fiber f(bf::launch::dispatch, [&a, n] { a = fib_fiber(n - 1); });
    long b = fib_fiber(n - 2);
    f.join();
    return a + b;
}

static double run(const bench_opts *o, long n, long w, int /* unused */)
{
    double samples[BENCH_MAX_RUNS];
    int bad = 0;
    with_threads(w, [&] { bad = bench_fib_time(o, fib_fiber, n, 15, samples); });
    return bench_fib_report(o, "boostfiber", w, n, samples, bad);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 30; every workers > 1 after the first is skipped\n");
    bench_boost_workers(&o);
    bench_default_n(&o, 30);
    if (o.n.len > 1 && o.workers.len > 0 && o.workers.v[o.workers.len - 1] > 1) {
        fprintf(stderr, "bench: Boost.Fiber: one -n per process when workers > 1; using %ld\n",
                o.n.v[0]);
        o.n.len = 1;
    }
    bench_fib_sweeps(&o, "boostfiber", run, 0);
    return 0;
}
