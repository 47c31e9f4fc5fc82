/* cholesky.c: OpenMP baseline for blocked Cholesky (bench/common/cholesky.h):
 * one task per tile operation, created in program order from a single
 * thread, with depend(in:) on the tiles it reads and depend(inout:) on the
 * one it writes; GFLOPS.
 *   baseline_openmp_cholesky [-n N] [-r REPS] [-w LIST]   (tiles of 256)
 */
#include "cholesky.h"
#include "bench.h"
#include "sched_est.h"

#include <omp.h>

#define TILE 256

static void factorise(void)
{
#pragma omp parallel
#pragma omp single
    for (int x = 0; x < ch_nops; x++) {
        struct ch_op *op = &ch_ops[x];
        double *out = ch_t(op->i, op->j);
        double *a = ch_t(op->k, op->k), *b = ch_t(op->i, op->k), *c = ch_t(op->j, op->k);
        (void)out; /* gcc 12 does not count uses in depend clauses */
        (void)a;
        (void)b;
        (void)c;
        switch (op->kind) {
        case CH_POTRF:
#pragma omp task firstprivate(op) depend(inout : out[0])
            ch_run_op(op);
            break;
        case CH_TRSM:
#pragma omp task firstprivate(op) depend(in : a[0]) depend(inout : out[0])
            ch_run_op(op);
            break;
        case CH_SYRK:
#pragma omp task firstprivate(op) depend(in : b[0]) depend(inout : out[0])
            ch_run_op(op);
            break;
        default:
#pragma omp task firstprivate(op) depend(in : b[0], c[0]) depend(inout : out[0])
            ch_run_op(op);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    ch_main_init(argc, argv, &o, TILE);
    for (int wi = 0; wi < o.workers.len; wi++) {
        double samples[BENCH_MAX_RUNS];
        omp_set_num_threads((int)o.workers.v[wi]);
        for (int r = -1; r < o.reps; r++) { /* r = -1: warm-up */
            ch_reset();
            bench_sched_mark(r, o.reps, 0, "cholesky", "omp", o.workers.v[wi]);
            uint64_t t0 = bench_now_ns();
            factorise();
            double dt = (double)(bench_now_ns() - t0);
            bench_sched_mark(r, o.reps, 1, "cholesky", "omp", o.workers.v[wi]);
            ch_check();
            if (r >= 0)
                samples[r] = dt;
        }
        ch_report(&o, "omp", o.workers.v[wi], samples, o.reps);
    }
    return 0;
}
