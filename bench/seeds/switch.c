/* switch.c: seed 1's "light" context switch: two threads on one CPU hand
 * it to each other N times each. weft: weft_yield on one worker (default
 * pool); mltp: mltp_yield on one virtual processor (the shared FIFO queue);
 * pthread: a kernel-thread switch, two threads pinned to one CPU passing a
 * byte through two pipes (each read blocks, so every hand-off is a switch).
 *
 *   seeds_switch [-n SWITCHES_PER_THREAD] [-r REPS] [-i IMPL] [--callgrind]
 * Default -n 1000000 (100000 for pthread). RESULT bench=switch param=2,
 * *_ns per switch (2N switches per sample). With --callgrind (one run, one
 * implementation) bench/seeds/run.sh counts instructions per switch with
 * bench/scripts/instr.py --per 2: valgrind sees user-space instructions
 * only, so the kernel's part of a kernel-thread switch is not in its count.
 */
#include "bench.h"

#include <unistd.h>

#include "seeds.h"

static long n_per_thread;

static void *yield_weft(void *arg)
{
    for (long i = 0; i < n_per_thread; i++)
        weft_yield();
    return arg;
}

static void yield_mltp(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_per_thread; i++)
        mltp_yield();
}

static int pipes[2][2]; /* [0]: to the second thread, [1]: back */

static void *pong(void *arg)
{
    char c;
    for (long i = 0; i < n_per_thread; i++) {
        if (read(pipes[0][0], &c, 1) != 1 || write(pipes[1][1], &c, 1) != 1)
            bench_die("pipe", errno);
    }
    return arg;
}

static void *ping(void *arg)
{
    char c = 'x';
    for (long i = 0; i < n_per_thread; i++) {
        if (write(pipes[0][1], &c, 1) != 1 || read(pipes[1][0], &c, 1) != 1)
            bench_die("pipe", errno);
    }
    return arg;
}

/* One sample: 2 * n switches; returns ns per switch. Out of line so a
 * profile can find it. */
BENCH_NOINLINE double bench_round(enum seeds_impl impl, long n);

BENCH_NOINLINE double bench_round(enum seeds_impl impl, long n)
{
    n_per_thread = n;
    uint64_t t0 = bench_now_ns();
    int rc = 0;
    if (impl == SEEDS_WEFT) {
        weft_thread *a, *b;
        rc = weft_spawn(&a, yield_weft, NULL, NULL);
        if (rc == 0)
            rc = weft_spawn(&b, yield_weft, NULL, NULL);
        if (rc == 0)
            rc = weft_join(a, NULL);
        if (rc == 0)
            rc = weft_join(b, NULL);
    } else if (impl == SEEDS_MLTP) {
        mltp_thread_t *a = mltp_create(yield_mltp, NULL), *b = mltp_create(yield_mltp, NULL);
        rc = a && b ? 0 : errno;
        if (rc == 0)
            rc = mltp_join(a);
        if (rc == 0)
            rc = mltp_join(b);
    } else {
        pthread_attr_t at;
        pthread_t a, b;
        pthread_attr_init(&at);
        pthread_attr_setaffinity_np(&at, sizeof seeds_cpus, &seeds_cpus);
        rc = pthread_create(&a, &at, ping, NULL);
        if (rc == 0)
            rc = pthread_create(&b, &at, pong, NULL);
        pthread_attr_destroy(&at);
        if (rc == 0) {
            pthread_join(a, NULL);
            pthread_join(b, NULL);
        }
    }
    if (rc != 0)
        bench_die("switch round", rc);
    return (double)(bench_now_ns() - t0) / (2.0 * (double)n);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 1000000 (100000 for pthread); one worker / CPU\n");
    if (pipe(pipes[0]) != 0 || pipe(pipes[1]) != 0)
        bench_die("pipe", errno);
    double samples[BENCH_MAX_RUNS];
    for (int impl = 0; impl < SEEDS_NIMPL; impl++) {
        if (!seeds_wants(&o, impl))
            continue;
        long n = bench_size(&o, impl == SEEDS_PTHREAD ? 100000 : 1000000);
        seeds_start(impl, 1);
        if (!o.callgrind)
            bench_round(impl, n / 10 + 1); /* warm-up */
        for (int r = 0; r < o.reps; r++)
            samples[r] = bench_round(impl, n);
        seeds_stop(impl);
        bench_report(&o, "switch", seeds_impl_name[impl], 1, "2", samples, o.reps, "ns/switch");
    }
    return 0;
}
