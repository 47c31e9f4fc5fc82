/* seeds.h: what the seeds' experiments share: one program runs the same
 * algorithm with weft's native API, with mltp.h and with pthreads, through
 * a thin layer of teams, locks and barriers chosen per implementation.
 *
 * The three implementations (-i weft | mltp | pthread | all):
 *  weft     weft_init (work-first, work stealing) with `workers` workers;
 *           weft_mutex, weft_barrier, weft_cond. A team is spawned by a
 *           root user thread, not by the initial thread: the initial thread
 *           is pinned to worker 0, so only a root thread's continuation can
 *           be stolen by the other workers while children run.
 *  mltp     mltp_init(workers): the seed's shared FIFO run queue;
 *           mltp_lock (kind per program), mltp_barrier, mltp_cond. The
 *           initial thread creates the team, as a seed program would.
 *  pthread  one kernel thread per thread, all restricted to the first
 *           `workers` CPUs of the affinity mask (so "workers" means the same
 *           CPUs for the three); pthread_mutex, pthread_barrier.
 * Include after bench.h.
 */
#ifndef WEFT_BENCH_SEEDS_H
#define WEFT_BENCH_SEEDS_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mltp.h"
#include "weft.h"

enum seeds_impl { SEEDS_WEFT, SEEDS_MLTP, SEEDS_PTHREAD, SEEDS_NIMPL };

static const char *const seeds_impl_name[SEEDS_NIMPL] = { "weft", "mltp", "pthread" };

/* CPUs the pthread implementation may use (set by seeds_start). */
static cpu_set_t seeds_cpus;

static inline void seeds_die(const char *what, int err)
{
    bench_die(what, err);
}

/* Starts the runtime of impl with `workers` workers / virtual processors /
 * CPUs. */
static inline void seeds_start(enum seeds_impl impl, long workers)
{
    int rc = 0;
    if (impl == SEEDS_WEFT) {
        weft_config cfg;
        weft_config_default(&cfg);
        cfg.workers = (int)workers;
        rc = weft_init(&cfg);
    } else if (impl == SEEDS_MLTP) {
        rc = mltp_init((int)workers);
    } else {
        cpu_set_t all;
        CPU_ZERO(&seeds_cpus);
        if (sched_getaffinity(0, sizeof all, &all) != 0)
            seeds_die("sched_getaffinity", errno);
        long n = 0;
        for (int c = 0; c < CPU_SETSIZE && n < workers; c++)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &seeds_cpus);
                n++;
            }
    }
    if (rc != 0)
        seeds_die("init", rc);
}

static inline void seeds_stop(enum seeds_impl impl)
{
    int rc = 0;
    if (impl == SEEDS_WEFT)
        rc = weft_finalize();
    else if (impl == SEEDS_MLTP)
        rc = mltp_finalize();
    if (rc != 0)
        seeds_die("finalize", rc);
}

/* ---- teams: n threads running fn(arg, id), created and joined ---------------- */

typedef void seeds_fn(void *arg, int id);

struct seeds_member {
    seeds_fn *fn;
    void *arg;
    int id;
    union {
        weft_thread *w;
        mltp_thread_t *m;
        pthread_t p;
    } h;
};

struct seeds_team {
    enum seeds_impl impl;
    int n;
    struct seeds_member *mem;
};

static void *seeds_member_main(void *p)
{
    struct seeds_member *m = p;
    m->fn(m->arg, m->id);
    return NULL;
}

static void seeds_member_mltp(void *p)
{
    seeds_member_main(p);
}

/* weft: the root spawns the members (each runs at once, the root's
 * continuation is stolen by an idle worker) and joins them. */
static void *seeds_weft_root(void *p)
{
    struct seeds_team *t = p;
    for (int i = 0; i < t->n; i++) {
        int rc = weft_spawn(&t->mem[i].h.w, seeds_member_main, &t->mem[i], NULL);
        if (rc != 0)
            seeds_die("weft_spawn", rc);
    }
    for (int i = 0; i < t->n; i++) {
        int rc = weft_join(t->mem[i].h.w, NULL);
        if (rc != 0)
            seeds_die("weft_join", rc);
    }
    return NULL;
}

/* Runs fn(arg, 0..n-1) on n threads of impl and returns when all are done. */
static inline void seeds_team_run(enum seeds_impl impl, int n, seeds_fn *fn, void *arg)
{
    struct seeds_team t = { impl, n, calloc((size_t)n, sizeof(struct seeds_member)) };
    if (!t.mem)
        seeds_die("calloc", ENOMEM);
    for (int i = 0; i < n; i++) {
        t.mem[i].fn = fn;
        t.mem[i].arg = arg;
        t.mem[i].id = i;
    }
    if (impl == SEEDS_WEFT) {
        weft_thread *root;
        int rc = weft_spawn(&root, seeds_weft_root, &t, NULL);
        if (rc == 0)
            rc = weft_join(root, NULL);
        if (rc != 0)
            seeds_die("weft root", rc);
    } else if (impl == SEEDS_MLTP) {
        for (int i = 0; i < n; i++)
            if (!(t.mem[i].h.m = mltp_create(seeds_member_mltp, &t.mem[i])))
                seeds_die("mltp_create", errno);
        for (int i = 0; i < n; i++) {
            int rc = mltp_join(t.mem[i].h.m);
            if (rc != 0)
                seeds_die("mltp_join", rc);
        }
    } else {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setaffinity_np(&a, sizeof seeds_cpus, &seeds_cpus);
        for (int i = 0; i < n; i++) {
            int rc = pthread_create(&t.mem[i].h.p, &a, seeds_member_main, &t.mem[i]);
            if (rc != 0)
                seeds_die("pthread_create", rc);
        }
        pthread_attr_destroy(&a);
        for (int i = 0; i < n; i++)
            pthread_join(t.mem[i].h.p, NULL);
    }
    free(t.mem);
}

/* ---- locks and barriers ---------------------------------------------------------- */

struct seeds_lock {
    enum seeds_impl impl;
    union {
        weft_mutex w;
        mltp_lock_t m;
        pthread_mutex_t p;
    } u;
};

static inline void seeds_lock_init(struct seeds_lock *l, enum seeds_impl impl, int mltp_kind)
{
    l->impl = impl;
    if (impl == SEEDS_WEFT)
        weft_mutex_init(&l->u.w);
    else if (impl == SEEDS_MLTP)
        mltp_lock_init(&l->u.m, mltp_kind);
    else
        pthread_mutex_init(&l->u.p, NULL);
}

static inline void seeds_lock(struct seeds_lock *l)
{
    if (l->impl == SEEDS_WEFT)
        weft_mutex_lock(&l->u.w);
    else if (l->impl == SEEDS_MLTP)
        mltp_lock(&l->u.m);
    else
        pthread_mutex_lock(&l->u.p);
}

static inline void seeds_unlock(struct seeds_lock *l)
{
    if (l->impl == SEEDS_WEFT)
        weft_mutex_unlock(&l->u.w);
    else if (l->impl == SEEDS_MLTP)
        mltp_unlock(&l->u.m);
    else
        pthread_mutex_unlock(&l->u.p);
}

static inline void seeds_lock_destroy(struct seeds_lock *l)
{
    if (l->impl == SEEDS_WEFT)
        weft_mutex_destroy(&l->u.w);
    else if (l->impl == SEEDS_PTHREAD)
        pthread_mutex_destroy(&l->u.p);
}

struct seeds_barrier {
    enum seeds_impl impl;
    union {
        weft_barrier w;
        mltp_barrier_t m;
        pthread_barrier_t p;
    } u;
};

static inline void seeds_barrier_init(struct seeds_barrier *b, enum seeds_impl impl, int count)
{
    b->impl = impl;
    if (impl == SEEDS_WEFT)
        weft_barrier_init(&b->u.w, (unsigned)count);
    else if (impl == SEEDS_MLTP)
        mltp_barrier_init(&b->u.m, count);
    else
        pthread_barrier_init(&b->u.p, NULL, (unsigned)count);
}

static inline void seeds_barrier_wait(struct seeds_barrier *b)
{
    if (b->impl == SEEDS_WEFT)
        weft_barrier_wait(&b->u.w);
    else if (b->impl == SEEDS_MLTP)
        mltp_barrier(&b->u.m);
    else
        pthread_barrier_wait(&b->u.p);
}

static inline void seeds_barrier_destroy(struct seeds_barrier *b)
{
    if (b->impl == SEEDS_WEFT)
        weft_barrier_destroy(&b->u.w);
    else if (b->impl == SEEDS_PTHREAD)
        pthread_barrier_destroy(&b->u.p);
}

/* ---- options ----------------------------------------------------------------------- */

/* Implementations selected by -i (all, or one name). */
static inline int seeds_wants(const bench_opts *o, enum seeds_impl impl)
{
    return bench_wants(o, seeds_impl_name[impl]);
}

/* Takes a program's own "flag VALUE" out of argv before bench_parse sees
 * the rest: returns VALUE, or dflt where the flag is not there. */
static inline const char *seeds_take_opt(int *argc, char **argv, const char *flag, const char *dflt)
{
    for (int i = 1; i + 1 < *argc; i++)
        if (!strcmp(argv[i], flag)) {
            const char *v = argv[i + 1];
            for (int j = i; j + 2 <= *argc; j++)
                argv[j] = argv[j + 2];
            *argc -= 2;
            return v;
        }
    return dflt;
}

/* The seeds' defaults where the command line left them out: -w 1,2, -k
 * the nk values of k and, where nsizes > 0, -n the values of sizes. */
static inline void seeds_defaults(bench_opts *o, const long *k, int nk, const long *sizes,
                                  int nsizes)
{
    static const long w12[] = { 1, 2 };
    bench_default_list(&o->workers, o->workers_given, w12, 2);
    bench_default_list(&o->threads, o->threads_given, k, nk);
    if (nsizes > 0)
        bench_default_list(&o->n, o->n.len > 0, sizes, nsizes);
}

/* ---- the configurations a program runs ------------------------------------------------ */

/* Every implementation -i wants, on every -w worker count, with its
 * runtime started for the loop's body:
 *   for (seeds_iter it = SEEDS_ITER_INIT; seeds_next(&o, &it);)
 *       ... it.impl on it.w workers ...
 * (each call stops the runtime the previous one started; no break). */
typedef struct seeds_iter {
    int impl;    /* enum seeds_impl; SEEDS_NIMPL at the end */
    int wi;      /* index in o->workers */
    long w;      /* o->workers.v[wi] */
    int started; /* the runtime of impl runs */
} seeds_iter;

#define SEEDS_ITER_INIT                                                                            \
    {                                                                                              \
        0, -1, 0, 0                                                                                \
    }

static inline int seeds_next(const bench_opts *o, seeds_iter *it)
{
    if (it->started) {
        seeds_stop((enum seeds_impl)it->impl);
        it->started = 0;
    }
    for (; it->impl < SEEDS_NIMPL; it->impl++, it->wi = -1)
        if (seeds_wants(o, (enum seeds_impl)it->impl) && it->wi + 1 < o->workers.len) {
            it->w = o->workers.v[++it->wi];
            seeds_start((enum seeds_impl)it->impl, it->w);
            it->started = 1;
            return 1;
        }
    return 0;
}

/* bench_report of one configuration, with the thread count t as param. */
static inline void seeds_report(const bench_opts *o, const char *bench, const seeds_iter *it, int t,
                                const double *samples, int reps, const char *unit)
{
    char param[32];
    snprintf(param, sizeof param, "%d", t);
    bench_report(o, bench, seeds_impl_name[it->impl], it->w, param, samples, reps, unit);
}

#endif
