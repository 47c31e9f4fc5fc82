/* create_join.c: cost of creating and joining one empty user thread (weft_spawn + weft_join), against pthread_create + pthread_join.
 *
 * One loop iteration = one spawn and one join of a thread whose function
 * returns at once; the parent waits for each child before the next, so this is
 * latency, not throughput. "workers=N" for weft is the runtime's worker count
 * (the loop runs on worker 0, the others may steal); for pthreads, workers=1
 * pins the process to one CPU and workers=N leaves it on N CPUs. Results name
 * the help-first runs impl=weft-hf.
 *
 *   bench_create_join [-n ITER] [-r REPS] [-w LIST] [-p work-first|help-first|both] [-i all|weft|pthread]
 */
#include "bench.h"
#include "bench_weft.h"

#include <pthread.h>

#include "weft.h"

#define WARMUP 1000

static void *empty_weft(void *arg)
{
    return arg;
}

static void *empty_pthread(void *arg)
{
    return arg;
}

/* The measured loops are out of line so that callgrind --toggle-collect can
 * name them (bench_loop_weft, bench_loop_pthread). */
BENCH_NOINLINE void bench_loop_weft(long n);
BENCH_NOINLINE void bench_loop_pthread(long n);

BENCH_NOINLINE void bench_loop_weft(long n)
{
    for (long i = 0; i < n; i++) {
        weft_thread *t;
        int rc = weft_spawn(&t, empty_weft, NULL, NULL);
        bench_ok(rc, "weft_spawn");
        rc = weft_join(t, NULL);
        bench_ok(rc, "weft_join");
    }
}

BENCH_NOINLINE void bench_loop_pthread(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, empty_pthread, NULL);
        bench_ok(rc, "pthread_create");
        rc = pthread_join(t, NULL);
        bench_ok(rc, "pthread_join");
    }
}

static void run_weft(const bench_opts *o, long n, long workers, int policy)
{
    double samples[BENCH_MAX_RUNS];
    bench_weft_init(workers, policy);
    bench_loop_weft(WARMUP);
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        bench_loop_weft(n);
        samples[r] = (double)(bench_now_ns() - t0) / (double)n;
    }
    int rc = weft_finalize();
    bench_ok(rc, "weft_finalize");
    bench_report(o, "create_join", policy == WEFT_HELP_FIRST ? "weft-hf" : "weft", workers, "empty",
                 samples, o->reps, "ns/op");
}

static void run_pthread(const bench_opts *o, long n, long workers)
{
    double samples[BENCH_MAX_RUNS];
    cpu_set_t old;
    int pinned = workers == 1 && bench_pin_one_cpu(&old) == 0;
    bench_loop_pthread(WARMUP);
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        bench_loop_pthread(n);
        samples[r] = (double)(bench_now_ns() - t0) / (double)n;
    }
    if (pinned)
        bench_unpin(&old);
    bench_report(o, "create_join", "pthread", workers, "empty", samples, o->reps, "ns/op");
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -i all|weft|pthread (default all)\n");
    long n = bench_size(&o, 100000);
    if (n < 1)
        n = 1;
    for (int i = 0; i < o.workers.len; i++) {
        long w = o.workers.v[i];
        if (bench_wants(&o, "weft")) {
            if (strcmp(o.policy, "help-first") != 0)
                run_weft(&o, n, w, WEFT_WORK_FIRST);
            if (strcmp(o.policy, "work-first") != 0)
                run_weft(&o, n, w, WEFT_HELP_FIRST);
        }
        if (bench_wants(&o, "pthread"))
            run_pthread(&o, n, w);
    }
    return 0;
}
