/* pthread_bench: an unmodified pthread program that times four patterns:
 * create+join, a sched_yield ping between 2 threads, a mutex+condvar
 * hand-off between 2 threads, and yield_loop: 2 threads that call
 * sched_yield in a loop and nothing else (per call: the program that
 * bench_yield -k 2 is natively, so its time is what one sched_yield
 * costs); and the ping again as yield_ra, whose turn
 * word is read with acquire and written with release instead of the
 * sequentially consistent ++ (a locked instruction each pass: on a fast
 * yield, a large part of the pass). Run it natively (glibc, pin it with
 * `taskset -c 0` for the one-CPU figures) and under the drop-in
 * (`weft-run --workers 1`): the same binary. One line per result:
 *   name=<pattern> ns_per_op=<median> min=<min> max=<max> runs=<runs> n=<ops>
 *   cpu_ns_per_op=<median>
 * (the process's CPU time per operation, which a loaded machine's waits for
 * a CPU do not inflate). 
 * Usage: pthread_bench [-n ops] [-r runs] [create|yield|handoff|yield_ra|yield_loop]... */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static void *nop(void *arg)
{
    return arg;
}

static double bench_create(long n)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, nop, NULL) != 0 || pthread_join(t, NULL) != 0)
            abort();
    }
    return (double)(now_ns() - t0) / (double)n;
}

static _Atomic long turn;
static long yield_n;
static void *yielder(void *arg)
{
    long me = (long)(intptr_t)arg;
    for (long i = 0; i < yield_n; i++) {
        while (turn % 2 != me)
            sched_yield();
        turn++;
    }
    return NULL;
}

/* The same turns with one writer at a time: release/acquire suffice. */
static void *yielder_ra(void *arg)
{
    long me = (long)(intptr_t)arg;
    for (long i = 0; i < yield_n; i++) {
        long t;
        while ((t = atomic_load_explicit(&turn, memory_order_acquire)) % 2 != me)
            sched_yield();
        atomic_store_explicit(&turn, t + 1, memory_order_release);
    }
    return NULL;
}

/* yield_loop: both threads start together (each waits, yielding, for the
 * other), so that under glibc every call finds the other thread ready. */
static _Atomic int loop_in;
static void *looper(void *arg)
{
    (void)arg;
    atomic_fetch_add(&loop_in, 1);
    while (atomic_load(&loop_in) < 2)
        sched_yield();
    for (long i = 0; i < yield_n; i++)
        sched_yield();
    return NULL;
}

static double bench_yield(long n, void *(*fn)(void *))
{
    yield_n = n;
    turn = 0;
    loop_in = 0;
    pthread_t a, b;
    uint64_t t0 = now_ns();
    pthread_create(&a, NULL, fn, (void *)0);
    pthread_create(&b, NULL, fn, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return (double)(now_ns() - t0) / (double)(2 * n); /* per pass of the turn */
}

static pthread_mutex_t hm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hc = PTHREAD_COND_INITIALIZER;
static long hturn, hand_n;
static void *hander(void *arg)
{
    long me = (long)(intptr_t)arg;
    pthread_mutex_lock(&hm);
    for (long i = 0; i < hand_n; i++) {
        while (hturn % 2 != me)
            pthread_cond_wait(&hc, &hm);
        hturn++;
        pthread_cond_signal(&hc);
    }
    pthread_mutex_unlock(&hm);
    return NULL;
}

static double bench_handoff(long n)
{
    hand_n = n;
    hturn = 0;
    pthread_t a, b;
    uint64_t t0 = now_ns();
    pthread_create(&a, NULL, hander, (void *)0);
    pthread_create(&b, NULL, hander, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return (double)(now_ns() - t0) / (double)(2 * n);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long n = 20000;
    int runs = 7, opt;
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        if (opt == 'n')
            n = atol(optarg);
        else if (opt == 'r')
            runs = atoi(optarg);
        else
            return 2;
    }
    const char *all[] = { "create", "yield", "handoff", "yield_ra", "yield_loop" };
    int nnames = argc - optind;
    const char **names = nnames ? (const char **)argv + optind : all;
    if (!nnames)
        nnames = (int)(sizeof all / sizeof all[0]);
    for (int k = 0; k < nnames; k++) {
        double v[64], c[64];
        if (runs > 64)
            runs = 64;
        for (int r = 0; r < runs; r++) {
            uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            if (strcmp(names[k], "create") == 0)
                v[r] = bench_create(n);
            else if (strcmp(names[k], "yield") == 0)
                v[r] = bench_yield(n, yielder);
            else if (strcmp(names[k], "yield_ra") == 0)
                v[r] = bench_yield(n, yielder_ra);
            else if (strcmp(names[k], "yield_loop") == 0)
                v[r] = bench_yield(n, looper);
            else if (strcmp(names[k], "handoff") == 0)
                v[r] = bench_handoff(n);
            else
                return 2;
            long ops = strcmp(names[k], "create") == 0 ? n : 2 * n;
            c[r] = (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / (double)ops;
        }
        qsort(v, (size_t)runs, sizeof v[0], cmp);
        qsort(c, (size_t)runs, sizeof c[0], cmp);
        printf("name=%s ns_per_op=%.1f min=%.1f max=%.1f runs=%d n=%ld cpu_ns_per_op=%.1f\n",
               names[k], v[runs / 2], v[0], v[runs - 1], runs, n, c[runs / 2]);
    }
    return 0;
}
