/* pingpong.c: the 1:1 baselines for bench_yield: kernel threads that sched_yield() on one CPU, and two threads handing a token through a mutex and a condition variable.
 *
 * bench=yield impl=pthread: K pthreads pinned to the same CPU each call
 * sched_yield() N times; a sample is the time from a common start (barrier)
 * to the last join divided by K*N. Default workers=1 (one CPU).
 * bench=pingpong_condvar impl=pthread param=2: two pthreads pass a token N
 * times each (2N hand-offs) under one mutex and condvar; ns per hand-off, with
 * both threads on one CPU (workers=1) and unpinned (workers=all).
 * No weft call here: the program only shares the harness.
 *
 *   bench_pingpong [-n PER_THREAD] [-k LIST] [-r REPS] [-w LIST] [-i all|sched_yield|condvar]
 */
#include "bench.h"

#include <pthread.h>

#define WARMUP 1000

typedef struct yield_arg {
    pthread_barrier_t *start;
    long n;
} yield_arg;

static void *yield_n(void *p)
{
    yield_arg *a = p;
    pthread_barrier_wait(a->start);
    for (long i = 0; i < a->n; i++)
        sched_yield();
    return NULL;
}

/* k threads yield n times each from a common start; returns the elapsed ns. */
BENCH_NOINLINE uint64_t bench_round_sched_yield(pthread_t *ts, long k, long n);

BENCH_NOINLINE uint64_t bench_round_sched_yield(pthread_t *ts, long k, long n)
{
    pthread_barrier_t start;
    yield_arg a = { &start, n };
    pthread_barrier_init(&start, NULL, (unsigned)k + 1);
    for (long i = 0; i < k; i++) {
        int rc = pthread_create(&ts[i], NULL, yield_n, &a);
        if (rc != 0)
            bench_die("pthread_create", rc);
    }
    pthread_barrier_wait(&start);
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < k; i++)
        pthread_join(ts[i], NULL);
    uint64_t t = bench_now_ns() - t0;
    pthread_barrier_destroy(&start);
    return t;
}

static void run_sched_yield(const bench_opts *o, long workers, long k, long n)
{
    double samples[BENCH_MAX_RUNS];
    char param[32];
    pthread_t *ts = calloc((size_t)k, sizeof *ts);
    if (ts == NULL)
        bench_die("calloc", ENOMEM);
    cpu_set_t old;
    int pinned = workers == 1 && bench_pin_one_cpu(&old) == 0;
    bench_round_sched_yield(ts, k, WARMUP / k + 1);
    for (int r = 0; r < o->reps; r++)
        samples[r] = (double)bench_round_sched_yield(ts, k, n) / ((double)k * (double)n);
    if (pinned)
        bench_unpin(&old);
    free(ts);
    snprintf(param, sizeof param, "%ld", k);
    bench_report(o, "yield", "pthread", workers, param, samples, o->reps, "ns/yield");
}

typedef struct pingpong {
    pthread_mutex_t m;
    pthread_cond_t c;
    int turn; /* under m: whose turn it is, 0 or 1 */
    long n;
} pingpong;

typedef struct player {
    pingpong *pp;
    int id;
} player;

static void *play(void *p)
{
    player *me = p;
    pingpong *pp = me->pp;
    for (long i = 0; i < pp->n; i++) {
        pthread_mutex_lock(&pp->m);
        while (pp->turn != me->id)
            pthread_cond_wait(&pp->c, &pp->m);
        pp->turn = 1 - me->id;
        pthread_cond_signal(&pp->c);
        pthread_mutex_unlock(&pp->m);
    }
    return NULL;
}

/* Two threads pass the token n times each; returns the elapsed ns. */
BENCH_NOINLINE uint64_t bench_round_condvar(long n);

BENCH_NOINLINE uint64_t bench_round_condvar(long n)
{
    pingpong pp;
    player pl[2] = { { &pp, 0 }, { &pp, 1 } };
    pthread_t t[2];
    pthread_mutex_init(&pp.m, NULL);
    pthread_cond_init(&pp.c, NULL);
    pp.turn = 0;
    pp.n = n;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < 2; i++) {
        int rc = pthread_create(&t[i], NULL, play, &pl[i]);
        if (rc != 0)
            bench_die("pthread_create", rc);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    uint64_t elapsed = bench_now_ns() - t0;
    pthread_cond_destroy(&pp.c);
    pthread_mutex_destroy(&pp.m);
    return elapsed;
}

static void run_condvar(const bench_opts *o, long workers, long n)
{
    double samples[BENCH_MAX_RUNS];
    cpu_set_t old;
    int pinned = workers == 1 && bench_pin_one_cpu(&old) == 0;
    bench_round_condvar(WARMUP);
    for (int r = 0; r < o->reps; r++)
        samples[r] = (double)bench_round_condvar(n) / (2.0 * (double)n);
    if (pinned)
        bench_unpin(&old);
    bench_report(o, "pingpong_condvar", "pthread", workers, "2", samples, o->reps, "ns/handoff");
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -i all|sched_yield|condvar; default -n 1000000/K (sched_yield), 200000 "
                "(condvar);\n"
                "  sched_yield runs on -w 1 unless -w is given\n");
    if (bench_wants(&o, "sched_yield")) {
        long w1 = 1;
        const long *ws = o.workers_given ? o.workers.v : &w1;
        int nw = o.workers_given ? o.workers.len : 1;
        for (int wi = 0; wi < nw; wi++) {
            for (int ki = 0; ki < o.threads.len; ki++) {
                long k = o.threads.v[ki] > 0 ? o.threads.v[ki] : 1;
                long n = bench_size(&o, 1000000 / k);
                run_sched_yield(&o, ws[wi], k, n > 0 ? n : 1);
            }
        }
    }
    if (bench_wants(&o, "condvar")) {
        long n = bench_size(&o, 200000);
        for (int wi = 0; wi < o.workers.len; wi++)
            run_condvar(&o, o.workers.v[wi], n > 0 ? n : 1);
    }
    return 0;
}
