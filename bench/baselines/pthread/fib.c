/* fib.c: pthreads baseline for fib with one pthread_create per call (fib(n-1) in a new kernel thread, fib(n-2) inline, then pthread_join).
 *
 * Threads get 64 KiB stacks (weft's default) so that thousands can be alive
 * at once. workers=1 pins the process to one CPU; workers=N leaves it on N.
 * A kernel thread per call is slow: keep n around 20.
 *   baseline_pthread_fib [-n LIST] [-r REPS] [-w LIST]   (default -n 20)
 */
#include "bench.h"

#include <pthread.h>

#define STACK_SIZE (64 * 1024)

static pthread_attr_t attr;

static void *fib_thread(void *arg)
{
    long n = (long)(intptr_t)arg;
    if (n < 2)
        return arg;
    pthread_t t;
    void *a;
    int rc = pthread_create(&t, &attr, fib_thread, (void *)(intptr_t)(n - 1));
    bench_ok(rc, "pthread_create");
    long b = (long)(intptr_t)fib_thread((void *)(intptr_t)(n - 2));
    rc = pthread_join(t, &a);
    bench_ok(rc, "pthread_join");
    return (void *)(intptr_t)((long)(intptr_t)a + b);
}

static double run(const bench_opts *o, long n, long w, int unused)
{
    (void)unused;
    double samples[BENCH_MAX_RUNS];
    cpu_set_t old;
    int pinned = w == 1 && bench_pin_one_cpu(&old) == 0;
    BENCH_SINK(fib_thread((void *)(intptr_t)(n < 10 ? n : 10)));
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        long v = (long)(intptr_t)fib_thread((void *)(intptr_t)n);
        samples[r] = (double)(bench_now_ns() - t0);
        if (v != bench_fib_expected(n)) {
            fprintf(stderr, "bench: pthread fib(%ld) = %ld, wrong\n", n, v);
            exit(1);
        }
    }
    if (pinned)
        bench_unpin(&old);
    return bench_fib_report(o, "pthread", w, n, samples, 0);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 20\n");
    bench_default_n(&o, 20);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_SIZE);
    bench_fib_sweeps(&o, "pthread", run, 0);
    pthread_attr_destroy(&attr);
    return 0;
}
