/* create_join.c: OpenMP baseline for create+join: one empty `omp task` followed by `omp taskwait`, per iteration.
 *
 * The loop runs inside `parallel num_threads(w)` + `single`; the other w-1
 * threads of the team wait in the implicit barrier and may run the task.
 *   baseline_openmp_create_join [-n ITER] [-r REPS] [-w LIST] [--callgrind]
 */
#include "bench.h"

#include <omp.h>

#define WARMUP 1000

static BENCH_NOINLINE void empty_task(void)
{
    BENCH_SINK(0);
}

BENCH_NOINLINE void bench_loop_openmp(long n);

BENCH_NOINLINE void bench_loop_openmp(long n)
{
    for (long i = 0; i < n; i++) {
#pragma omp task
        empty_task();
#pragma omp taskwait
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, NULL);
    long n = bench_size(&o, 100000);
    if (n < 1)
        n = 1;
    for (int wi = 0; wi < o.workers.len; wi++) {
        double samples[BENCH_MAX_RUNS];
        int w = (int)o.workers.v[wi];
#pragma omp parallel num_threads(w)
#pragma omp single
        {
            bench_loop_openmp(WARMUP);
            for (int r = 0; r < o.reps; r++) {
                uint64_t t0 = bench_now_ns();
                bench_loop_openmp(n);
                samples[r] = (double)(bench_now_ns() - t0) / (double)n;
            }
        }
        bench_report(&o, "create_join", "openmp", w, "empty", samples, o.reps, "ns/op");
    }
    return 0;
}
