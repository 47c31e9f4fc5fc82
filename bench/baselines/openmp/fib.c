/* fib.c: OpenMP baseline for fib with one `omp task` per call (fib(n-1) as a task, fib(n-2) inline, then taskwait).
 *
 * No cut-off in the program; libgomp's own throttle (it runs a task at once
 * when more than 64 per thread are queued) applies, as it would for any user.
 *   baseline_openmp_fib [-n LIST] [-r REPS] [-w LIST] [--callgrind]
 */
#include "bench.h"

#include <omp.h>

static long fib_task(long n)
{
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a) firstprivate(n)
    a = fib_task(n - 1);
    b = fib_task(n - 2);
#pragma omp taskwait
    return a + b;
}

static double run(const bench_opts *o, long n, long w, int unused)
{
    (void)unused;
    double samples[BENCH_MAX_RUNS];
    int bad = 0;
#pragma omp parallel num_threads(w)
#pragma omp single
    bad = bench_fib_time(o, fib_task, n, 15, samples);
    return bench_fib_report(o, "openmp", w, n, samples, bad);
}

int main(int argc, char **argv)
{
    return bench_fib_main(argc, argv, "  default -n 30\n", 30, "openmp", run);
}
