/* cholesky.c: blocked Cholesky (bench/common/cholesky.h: tiles, kernels,
 * dependencies) with one weft task per tile operation, its counter the
 * number of operations it depends on; GFLOPS. The OpenMP depend version is
 * bench/baselines/openmp/cholesky.c. Each timed run builds the tasks, runs
 * them and waits (the input is copied back in untimed).
 *   bench_cholesky [-n N] [-r REPS] [-w LIST]     (tiles of 256; default N 4096)
 */
#include "cholesky.h"
#include "bench.h"
#include "bench_weft.h"
#include "sched_est.h"

#include <stdatomic.h>

#include "weft.h"

#define TILE 256

static weft_sem done;
static atomic_int left;

static void op_task(void *arg)
{
    struct ch_op *o = arg;
    ch_run_op(o);
    for (int s = 0; s < o->nsucc; s++)
        weft_task_continue(ch_ops[o->succ[s]].handle);
    if (atomic_fetch_sub_explicit(&left, 1, memory_order_acq_rel) == 1)
        weft_sem_post(&done);
}

int main(int argc, char **argv)
{
    bench_opts o;
    ch_main_init(argc, argv, &o, TILE);
    for (int wi = 0; wi < o.workers.len; wi++) {
        double samples[BENCH_MAX_RUNS];
        bench_weft_init(o.workers.v[wi], WEFT_WORK_FIRST);
        weft_sem_init(&done, 0);
        for (int r = -1; r < o.reps; r++) { /* r = -1: warm-up */
            ch_reset();
            bench_sched_mark(r, o.reps, 0, "cholesky", "weft", o.workers.v[wi]);
            uint64_t t0 = bench_now_ns();
            atomic_store(&left, ch_nops);
            for (int i = ch_nops - 1; i >= 0; i--) {
                int rc = weft_task_create((weft_task **)&ch_ops[i].handle, op_task, &ch_ops[i],
                                          (unsigned)ch_ops[i].npred);
                if (rc != 0)
                    bench_die("weft_task_create", rc);
            }
            weft_sem_wait(&done);
            double dt = (double)(bench_now_ns() - t0);
            bench_sched_mark(r, o.reps, 1, "cholesky", "weft", o.workers.v[wi]);
            ch_check();
            if (r >= 0)
                samples[r] = dt;
        }
        weft_sem_destroy(&done);
        int rc = weft_finalize();
        if (rc != 0)
            bench_die("weft_finalize", rc);
        ch_report(&o, "weft", o.workers.v[wi], samples, o.reps);
    }
    return 0;
}
