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
    char param[32];
    int bad = 0;
#pragma omp parallel num_threads(w)
#pragma omp single
    {
        BENCH_SINK(fib_task(n < 15 ? n : 15));
        for (int r = 0; r < o->reps; r++) {
            uint64_t t0 = bench_now_ns();
            long v = fib_task(n);
            samples[r] = (double)(bench_now_ns() - t0);
            bad |= v != bench_fib_expected(n);
        }
    }
    if (bad) {
        fprintf(stderr, "bench: openmp fib(%ld) wrong\n", n);
        exit(1);
    }
    snprintf(param, sizeof param, "%ld", n);
    return bench_report(o, "fib", "openmp", w, param, samples, o->reps, "ns").median;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 30\n");
    bench_default_n(&o, 30);
    for (int ni = 0; ni < o.n.len; ni++)
        bench_fib_sweep(&o, "openmp", o.n.v[ni],
                        bench_fib_serial_report(&o, "openmp", o.n.v[ni]).median, run, 0);
    return 0;
}
