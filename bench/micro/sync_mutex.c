/* sync_mutex.c: mutex benchmarks: strict ping-pong between two threads through three mutexes, and a counter under one mutex contended by many threads.
 *
 * bench=mutex_pingpong param=2: two threads alternate strictly: each holds
 * a mutex the other waits for (the 3-mutex rotation: A holds m0,m1 and B
 * holds m2; each step a thread unlocks its older mutex, which its partner
 * is waiting for, and locks the next, which its partner still holds).
 * ns per round trip (A → B → A), -n round trips (default 1000000; the
 * pthread runs use a tenth: every hop is a futex hand-off).
 *   impl=weft      two user threads, for each -w worker count (default 1,all)
 *   impl=pthread   two pthreads on one CPU (workers=1) and unpinned (all)
 * bench=mutex_uncontended param=1: ns per lock+unlock pair by one thread
 * (-n third value, default 10000000): the fast paths alone.
 *   impl=weft (a user thread), weft_kthread (a plain thread), pthread
 * bench=mutex_contended param=KxN: K threads (-k, default 100) each add 1
 * to a shared counter N times (-n second value, default 100000) under one
 * mutex; ns per increment over the whole run.
 *   impl=weft      K user threads, for each -w worker count
 *   impl=pthread   K pthreads (unpinned)
 */
#include "bench.h"
#include "bench_weft.h"
#include "sync_ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

/* the lock interface over both implementations: sync_ops.h */

/* ---- ping-pong ------------------------------------------------------------------ */

struct pp {
    const struct bench_sync_ops *ops;
    void *m[3];
    long rounds;
    _Atomic int a_ready, b_ready;
    uint64_t ns;
};

static void *pp_a(void *arg)
{
    struct pp *p = arg;
    p->ops->lock(p->m[0]);
    p->ops->lock(p->m[1]);
    atomic_store(&p->a_ready, 1);
    while (!atomic_load(&p->b_ready))
        weft_yield(); /* sched_yield() on a pthread */
    uint64_t t0 = bench_now_ns();
    /* A holds m[i], m[i+1]; unlock m[i], lock m[i+2] (waits for B). */
    int i = 0;
    for (long r = 0; r < p->rounds; r++) {
        p->ops->unlock(p->m[i]);
        p->ops->lock(p->m[(i + 2) % 3]);
        i = (i + 1) % 3;
    }
    p->ns = bench_now_ns() - t0;
    p->ops->unlock(p->m[i]);
    p->ops->unlock(p->m[(i + 1) % 3]);
    return NULL;
}

static void *pp_b(void *arg)
{
    struct pp *p = arg;
    while (!atomic_load(&p->a_ready))
        weft_yield();
    p->ops->lock(p->m[2]);
    atomic_store(&p->b_ready, 1);
    /* B holds m[j-1]; lock m[j] (waits for A), unlock m[j-1]. */
    int j = 0;
    for (long r = 0; r < p->rounds; r++) {
        p->ops->lock(p->m[j]);
        p->ops->unlock(p->m[(j + 2) % 3]);
        j = (j + 1) % 3;
    }
    p->ops->unlock(p->m[(j + 2) % 3]);
    return NULL;
}

static void *weft_pp_a(void *arg)
{
    return pp_a(arg);
}
static void *weft_pp_b(void *arg)
{
    return pp_b(arg);
}

static void weft_start(long workers)
{
    bench_weft_init(workers, BENCH_POLICY_ENV);
}

static double pingpong_weft(long workers, long rounds)
{
    weft_start(workers);
    weft_mutex m[3];
    struct pp p = { &bench_weft_sync, { &m[0], &m[1], &m[2] }, rounds, 0, 0, 0 };
    for (int i = 0; i < 3; i++)
        weft_mutex_init(&m[i]);
    weft_thread *a, *b;
    weft_spawn(&a, weft_pp_a, &p, NULL);
    weft_spawn(&b, weft_pp_b, &p, NULL);
    weft_join(a, NULL);
    weft_join(b, NULL);
    weft_finalize();
    return (double)p.ns / (double)rounds;
}

static double pingpong_pthread(int one_cpu, long rounds)
{
    pthread_mutex_t m[3];
    struct pp p = { &bench_pthread_sync, { &m[0], &m[1], &m[2] }, rounds, 0, 0, 0 };
    for (int i = 0; i < 3; i++)
        pthread_mutex_init(&m[i], NULL);
    cpu_set_t old;
    if (one_cpu && bench_pin_one_cpu(&old) != 0)
        bench_die("sched_setaffinity", errno);
    pthread_t a, b;
    pthread_create(&a, NULL, pp_a, &p);
    pthread_create(&b, NULL, pp_b, &p);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    if (one_cpu)
        bench_unpin(&old);
    return (double)p.ns / (double)rounds;
}

/* ---- uncontended ------------------------------------------------------------------- */

struct un {
    const struct bench_sync_ops *ops;
    void *m;
    long n;
    double ns;
};

static void *un_body(void *arg)
{
    struct un *u = arg;
    long x = 0;
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < u->n; i++) {
        u->ops->lock(u->m);
        x++;
        BENCH_SINK(x);
        u->ops->unlock(u->m);
    }
    u->ns = (double)(bench_now_ns() - t0) / (double)u->n;
    return NULL;
}

static void *weft_un_body(void *arg)
{
    return un_body(arg);
}

static double uncontended(const char *impl, long n)
{
    weft_mutex wm = WEFT_MUTEX_INIT;
    pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
    struct un u = { &bench_weft_sync, &wm, n, 0 };
    if (strcmp(impl, "pthread") == 0) {
        u.ops = &bench_pthread_sync;
        u.m = &pm;
    }
    if (strcmp(impl, "weft") == 0) {
        weft_start(1);
        weft_thread *t;
        weft_spawn(&t, weft_un_body, &u, NULL);
        weft_join(t, NULL);
        weft_finalize();
    } else {
        un_body(&u);
    }
    return u.ns;
}

/* ---- contended counter --------------------------------------------------------------- */

struct cc {
    const struct bench_sync_ops *ops;
    void *m;
    long per;
    long counter;
};

static void *cc_body(void *arg)
{
    struct cc *c = arg;
    for (long i = 0; i < c->per; i++) {
        c->ops->lock(c->m);
        c->counter++;
        c->ops->unlock(c->m);
    }
    return NULL;
}

static void *weft_cc_body(void *arg)
{
    return cc_body(arg);
}

static double contended_weft(long workers, long k, long per)
{
    weft_start(workers);
    weft_mutex m = WEFT_MUTEX_INIT;
    struct cc c = { &bench_weft_sync, &m, per, 0 };
    weft_thread **t = calloc((size_t)k, sizeof *t);
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < k; i++)
        weft_spawn(&t[i], weft_cc_body, &c, NULL);
    for (long i = 0; i < k; i++)
        weft_join(t[i], NULL);
    uint64_t ns = bench_now_ns() - t0;
    weft_finalize();
    free(t);
    if (c.counter != k * per) {
        fprintf(stderr, "bench: weft counter %ld, expected %ld\n", c.counter, k * per);
        exit(1);
    }
    return (double)ns / (double)(k * per);
}

static double contended_pthread(long k, long per)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    struct cc c = { &bench_pthread_sync, &m, per, 0 };
    pthread_t *t = calloc((size_t)k, sizeof *t);
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < k; i++)
        pthread_create(&t[i], NULL, cc_body, &c);
    for (long i = 0; i < k; i++)
        pthread_join(t[i], NULL);
    uint64_t ns = bench_now_ns() - t0;
    free(t);
    if (c.counter != k * per) {
        fprintf(stderr, "bench: pthread counter %ld, expected %ld\n", c.counter, k * per);
        exit(1);
    }
    return (double)ns / (double)(k * per);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -n ROUNDS,PER,UN (ping-pong round trips, increments per thread, uncontended\n"
                "     pairs; 0 skips)\n"
                "  -k K: threads of the contended counter (default 100)  -i "
                "all|weft|weft_kthread|pthread\n");
    long rounds = o.n.len > 0 ? o.n.v[0] : 1000000;
    long per = o.n.len > 1 ? o.n.v[1] : 100000;
    long nun = o.n.len > 2 ? o.n.v[2] : 10000000;
    long k = o.threads_given ? o.threads.v[0] : 100;
    double s[BENCH_MAX_RUNS];
    char param[64];

    if (rounds > 0) {
        if (bench_wants(&o, "weft"))
            for (int wi = 0; wi < o.workers.len; wi++) {
                for (int r = 0; r < o.reps; r++)
                    s[r] = pingpong_weft(o.workers.v[wi], rounds);
                bench_report(&o, "mutex_pingpong", "weft", o.workers.v[wi], "2", s, o.reps,
                             "ns/rt");
            }
        if (bench_wants(&o, "pthread"))
            for (int one = 1; one >= 0; one--) {
                for (int r = 0; r < o.reps; r++)
                    s[r] = pingpong_pthread(one, rounds / 10);
                bench_report(&o, "mutex_pingpong", "pthread", one ? 1 : bench_ncpus(), "2", s,
                             o.reps, "ns/rt");
            }
    }
    if (nun > 0) {
        static const char *un_impls[] = { "weft", "weft_kthread", "pthread" };
        for (int i = 0; i < 3; i++) {
            if (!bench_wants(&o, un_impls[i]))
                continue;
            for (int r = 0; r < o.reps; r++)
                s[r] = uncontended(un_impls[i], nun);
            bench_report(&o, "mutex_uncontended", un_impls[i], 1, "1", s, o.reps, "ns/pair");
        }
    }
    if (per > 0) {
        snprintf(param, sizeof param, "%ldx%ld", k, per);
        if (bench_wants(&o, "weft"))
            for (int wi = 0; wi < o.workers.len; wi++) {
                for (int r = 0; r < o.reps; r++)
                    s[r] = contended_weft(o.workers.v[wi], k, per);
                bench_report(&o, "mutex_contended", "weft", o.workers.v[wi], param, s, o.reps,
                             "ns/incr");
            }
        if (bench_wants(&o, "pthread")) {
            for (int r = 0; r < o.reps; r++)
                s[r] = contended_pthread(k, per);
            bench_report(&o, "mutex_contended", "pthread", bench_ncpus(), param, s, o.reps,
                         "ns/incr");
        }
    }
    return 0;
}
