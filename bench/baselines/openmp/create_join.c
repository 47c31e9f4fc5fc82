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

static void run(const bench_opts *o, long w, long n, double *samples)
{
#pragma omp parallel num_threads((int)w)
#pragma omp single
    {
        bench_loop_openmp(WARMUP);
        bench_time_per_op(o, bench_loop_openmp, n, samples);
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, NULL);
    bench_cj_sweep(&o, "openmp", run);
    return 0;
}
