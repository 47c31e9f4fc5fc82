/* sync_cond.c: condition-variable hand-off: two threads pass a turn back and forth under one mutex, each waiting on its own condvar.
 *
 * bench=cond_handoff param=2: ns per round trip (A → B → A) over -n round
 * trips (default 1000000; the pthread runs use a twentieth: every hand-off
 * is a futex wake and sleep).
 *   impl=weft      two user threads, for each -w worker count (default 1,all)
 *   impl=pthread   two pthreads on one CPU (workers=1) and unpinned (all)
 */
#include "bench.h"
#include "sync_ops.h"

#include <pthread.h>
#include <weft.h>

struct ho {
    const struct bench_sync_ops *ops;
    void *m;
    void *c[2];
    int turn; /* under m */
    long rounds;
    uint64_t ns;
};

struct player {
    struct ho *h;
    int me;
};

static void *play(void *arg)
{
    struct player *p = arg;
    struct ho *h = p->h;
    const struct bench_sync_ops *o = h->ops;
    uint64_t t0 = bench_now_ns();
    for (long r = 0; r < h->rounds; r++) {
        o->lock(h->m);
        while (h->turn != p->me)
            o->wait(h->c[p->me], h->m);
        h->turn = 1 - p->me;
        o->signal(h->c[1 - p->me]);
        o->unlock(h->m);
    }
    if (p->me == 0)
        h->ns = bench_now_ns() - t0;
    return NULL;
}

static void *weft_play(void *arg)
{
    return play(arg);
}

static double handoff_weft(long workers, long rounds)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = (int)workers;
    int e = weft_init(&cfg);
    if (e)
        bench_die("weft_init", e);
    weft_mutex m = WEFT_MUTEX_INIT;
    weft_cond c[2] = { WEFT_COND_INIT, WEFT_COND_INIT };
    struct ho h = { &bench_weft_sync, &m, { &c[0], &c[1] }, 0, rounds, 0 };
    struct player p[2] = { { &h, 0 }, { &h, 1 } };
    weft_thread *t[2];
    for (int i = 0; i < 2; i++)
        weft_spawn(&t[i], weft_play, &p[i], NULL);
    for (int i = 0; i < 2; i++)
        weft_join(t[i], NULL);
    weft_finalize();
    return (double)h.ns / (double)rounds;
}

static double handoff_pthread(int one_cpu, long rounds)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
    struct ho h = { &bench_pthread_sync, &m, { &c[0], &c[1] }, 0, rounds, 0 };
    struct player p[2] = { { &h, 0 }, { &h, 1 } };
    cpu_set_t old;
    if (one_cpu && bench_pin_one_cpu(&old) != 0)
        bench_die("sched_setaffinity", errno);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, play, &p[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (one_cpu)
        bench_unpin(&old);
    return (double)h.ns / (double)rounds;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -n ROUNDS (round trips)  -i all|weft|pthread\n");
    long rounds = o.n.len > 0 ? o.n.v[0] : 1000000;
    double s[BENCH_MAX_RUNS];
    if (bench_wants(&o, "weft"))
        for (int wi = 0; wi < o.workers.len; wi++) {
            for (int r = 0; r < o.reps; r++)
                s[r] = handoff_weft(o.workers.v[wi], rounds);
            bench_report(&o, "cond_handoff", "weft", o.workers.v[wi], "2", s, o.reps, "ns/rt");
        }
    if (bench_wants(&o, "pthread"))
        for (int one = 1; one >= 0; one--) {
            long n = rounds / 20 > 1000 ? rounds / 20 : rounds;
            for (int r = 0; r < o.reps; r++)
                s[r] = handoff_pthread(one, n);
            bench_report(&o, "cond_handoff", "pthread", one ? 1 : bench_ncpus(), "2", s, o.reps,
                         "ns/rt");
        }
    return 0;
}
