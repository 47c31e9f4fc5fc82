/* yield.c: OpenMP baseline for yield: K tasks on a one-thread team each executing `omp taskyield` N times.
 *
 * Caveat printed with the result: libgomp (GCC) implements taskyield as a
 * no-op, so each task runs its N "yields" straight through; the number is the
 * cost of the call, not of a task switch. Another OpenMP runtime (LLVM's
 * libomp) may switch tasks here.
 *   baseline_openmp_yield [-n PER_TASK] [-k LIST] [-r REPS] [--callgrind]
 */
#include "bench.h"

#include <omp.h>

#define WARMUP_YIELDS 1000

static void yield_n(long n)
{
    for (long i = 0; i < n; i++) {
#pragma omp taskyield
        BENCH_SINK(i);
    }
}

BENCH_NOINLINE void bench_round_openmp(long k, long n);

BENCH_NOINLINE void bench_round_openmp(long k, long n)
{
    for (long i = 0; i < k; i++) {
#pragma omp task firstprivate(n)
        yield_n(n);
    }
#pragma omp taskwait
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 1000000/K; one thread\n");
    for (int ki = 0; ki < o.threads.len; ki++) {
        double samples[BENCH_MAX_RUNS];
        char param[32];
        long k = o.threads.v[ki] > 0 ? o.threads.v[ki] : 1;
        long n = bench_size(&o, 1000000 / k);
        if (n < 1)
            n = 1;
#pragma omp parallel num_threads(1)
#pragma omp single
        {
            bench_round_openmp(k, WARMUP_YIELDS / k + 1);
            for (int r = 0; r < o.reps; r++) {
                uint64_t t0 = bench_now_ns();
                bench_round_openmp(k, n);
                samples[r] = (double)(bench_now_ns() - t0) / ((double)k * (double)n);
            }
        }
        snprintf(param, sizeof param, "%ld", k);
        bench_report(&o, "yield", "openmp", 1, param, samples, o.reps, "ns/yield");
        if (!o.callgrind)
            printf("  note: libgomp's taskyield is a no-op: this is not a task switch\n");
    }
    return 0;
}
