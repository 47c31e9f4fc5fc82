/* lmbench.c: seed 2's LMbench-style experiments: thread create + delete in
 * batches of 10 (create 10 threads that return at once, join the 10), and a
 * token passed around a ring of N threads through one lock and a condition
 * per thread (cost per hand-off).
 *
 *   seeds_lmbench [-b create|ring|all] [-n HANDOFFS] [-k RING_SIZES] [-w WORKERS] [-r REPS] [-i IMPL]
 * Defaults: -k 50,100,200 -w 1,2 -r 5; -n: 200000 hand-offs per sample for
 * weft and mltp, 20000 for pthreads; create: 1000 batches of 10 per sample.
 * RESULT bench=create_delete param=10, *_ns per thread created and joined;
 * RESULT bench=ring param=N, *_ns per hand-off. weft and mltp run one
 * worker / virtual processor per -w value; pthreads are restricted to that
 * many CPUs. The ring's timed part starts once every thread waits.
 */
#include "bench.h"

#include <time.h>

#include "seeds.h"

/* ---- create + delete ------------------------------------------------------------ */

#define BATCH 10

static void *ret_weft(void *arg)
{
    return arg;
}

static void ret_mltp(void *arg)
{
    (void)arg;
}

static double create_once(enum seeds_impl impl, long batches)
{
    weft_thread *wt[BATCH];
    mltp_thread_t *mt[BATCH];
    pthread_t pt[BATCH];
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setaffinity_np(&a, sizeof seeds_cpus, &seeds_cpus);
    uint64_t t0 = bench_now_ns();
    for (long b = 0; b < batches; b++) {
        int rc = 0;
        for (int i = 0; i < BATCH && rc == 0; i++) {
            if (impl == SEEDS_WEFT)
                rc = weft_spawn(&wt[i], ret_weft, NULL, NULL);
            else if (impl == SEEDS_MLTP)
                rc = (mt[i] = mltp_create(ret_mltp, NULL)) ? 0 : errno;
            else
                rc = pthread_create(&pt[i], &a, ret_weft, NULL);
        }
        for (int i = 0; i < BATCH && rc == 0; i++) {
            if (impl == SEEDS_WEFT)
                rc = weft_join(wt[i], NULL);
            else if (impl == SEEDS_MLTP)
                rc = mltp_join(mt[i]);
            else
                rc = pthread_join(pt[i], NULL);
        }
        if (rc != 0)
            bench_die("create/join", rc);
    }
    uint64_t t1 = bench_now_ns();
    pthread_attr_destroy(&a);
    return (double)(t1 - t0) / (double)(batches * BATCH);
}

/* ---- token ring -------------------------------------------------------------------- */

struct ring {
    enum seeds_impl impl;
    int n;
    long rounds;
    int owner;   /* under the lock: whose turn; -1 before the start */
    int waiting; /* under the lock: threads that reached their first wait */
    struct seeds_lock lock;
    union {
        weft_cond w;
        mltp_cond_t m;
        pthread_cond_t p;
    } * cond; /* one per thread */
};

static void r_wait(struct ring *r, int i)
{
    if (r->impl == SEEDS_WEFT)
        weft_cond_wait(&r->cond[i].w, &r->lock.u.w);
    else if (r->impl == SEEDS_MLTP)
        mltp_cond_wait(&r->cond[i].m, &r->lock.u.m);
    else
        pthread_cond_wait(&r->cond[i].p, &r->lock.u.p);
}

static void r_signal(struct ring *r, int i)
{
    if (r->impl == SEEDS_WEFT)
        weft_cond_signal(&r->cond[i].w);
    else if (r->impl == SEEDS_MLTP)
        mltp_cond_signal(&r->cond[i].m);
    else
        pthread_cond_signal(&r->cond[i].p);
}

/* Thread `id`: waits for the token rounds times, passing it on each time. */
static void ring_member(void *arg, int id)
{
    struct ring *r = arg;
    int next = (id + 1) % r->n;
    seeds_lock(&r->lock);
    r->waiting++;
    for (long k = 0; k < r->rounds; k++) {
        while (r->owner != id)
            r_wait(r, id);
        r->owner = next;
        r_signal(r, next);
    }
    seeds_unlock(&r->lock);
}

struct ring_run {
    struct ring *r;
    uint64_t t0;
};

/* The team runs in a thread of its own; the caller starts the clock once
 * every member waits, and hands the token to member 0. */
static void *ring_team(void *arg)
{
    struct ring *r = arg;
    seeds_team_run(r->impl, r->n, ring_member, r);
    return NULL;
}

static void ring_team_mltp(void *arg)
{
    ring_team(arg);
}

static double ring_once(enum seeds_impl impl, int n, long handoffs)
{
    struct ring r = {
        .impl = impl, .n = n, .rounds = handoffs / n > 0 ? handoffs / n : 1, .owner = -1
    };
    r.cond = calloc((size_t)n, sizeof *r.cond);
    if (!r.cond)
        bench_die("calloc", ENOMEM);
    seeds_lock_init(&r.lock, impl, MLTP_LOCK_SPIN);
    if (impl == SEEDS_WEFT) {
        for (int i = 0; i < n; i++)
            weft_cond_init(&r.cond[i].w);
    } else if (impl == SEEDS_MLTP) {
        for (int i = 0; i < n; i++)
            mltp_cond_init(&r.cond[i].m);
    } else {
        for (int i = 0; i < n; i++)
            pthread_cond_init(&r.cond[i].p, NULL);
    }
    /* the team: a user thread (weft, mltp) or a kernel thread (pthread) */
    weft_thread *wt = NULL;
    mltp_thread_t *mt = NULL;
    pthread_t pt;
    int rc;
    if (impl == SEEDS_WEFT)
        rc = weft_spawn(&wt, ring_team, &r, NULL);
    else if (impl == SEEDS_MLTP)
        rc = (mt = mltp_create(ring_team_mltp, &r)) ? 0 : errno;
    else
        rc = pthread_create(&pt, NULL, ring_team, &r);
    if (rc != 0)
        bench_die("ring team", rc);
    for (;;) {
        seeds_lock(&r.lock);
        int all = r.waiting == n;
        seeds_unlock(&r.lock);
        if (all)
            break;
        if (impl == SEEDS_PTHREAD) {
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, NULL);
        } else {
            weft_yield();
        }
    }
    uint64_t t0 = bench_now_ns();
    seeds_lock(&r.lock);
    r.owner = 0;
    r_signal(&r, 0);
    seeds_unlock(&r.lock);
    if (impl == SEEDS_WEFT)
        rc = weft_join(wt, NULL);
    else if (impl == SEEDS_MLTP)
        rc = mltp_join(mt);
    else
        rc = pthread_join(pt, NULL);
    uint64_t t1 = bench_now_ns();
    if (rc != 0)
        bench_die("ring join", rc);
    if (impl == SEEDS_WEFT) {
        for (int i = 0; i < n; i++)
            weft_cond_destroy(&r.cond[i].w);
    } else if (impl == SEEDS_PTHREAD) {
        for (int i = 0; i < n; i++)
            pthread_cond_destroy(&r.cond[i].p);
    }
    seeds_lock_destroy(&r.lock);
    free(r.cond);
    return (double)(t1 - t0) / (double)(r.rounds * n);
}

int main(int argc, char **argv)
{
    const char *which = seeds_take_opt(&argc, argv, "-b", "all");
    bench_opts o;
    bench_parse(argc, argv, &o, "  [-b create|ring|all]; default -k 50,100,200 -w 1,2\n");
    static const long k[] = { 50, 100, 200 };
    seeds_defaults(&o, k, 3, NULL, 0);
    double samples[BENCH_MAX_RUNS];
    for (seeds_iter it = SEEDS_ITER_INIT; seeds_next(&o, &it);) {
        enum seeds_impl impl = (enum seeds_impl)it.impl;
        if (!strcmp(which, "all") || !strcmp(which, "create")) {
            long batches = impl == SEEDS_PTHREAD ? 200 : 1000;
            create_once(impl, batches / 10); /* warm-up */
            for (int r = 0; r < o.reps; r++)
                samples[r] = create_once(impl, batches);
            bench_report(&o, "create_delete", seeds_impl_name[impl], it.w, "10", samples, o.reps,
                         "ns/thread");
        }
        if (!strcmp(which, "all") || !strcmp(which, "ring")) {
            for (int ki = 0; ki < o.threads.len; ki++) {
                int n = (int)o.threads.v[ki];
                long h = bench_size(&o, impl == SEEDS_PTHREAD ? 20000 : 200000);
                ring_once(impl, n, h / 10); /* warm-up */
                for (int r = 0; r < o.reps; r++)
                    samples[r] = ring_once(impl, n, h);
                seeds_report(&o, "ring", &it, n, samples, o.reps, "ns/hand-off");
            }
        }
    }
    return 0;
}
