/* sync_barrier.c: seed 5's barrier experiments: a symmetric 2-thread barrier, an asymmetric one (unequal work per episode), and the wake-up latency and notify cost of each barrier implementation.
 *
 * Implementations (-i):
 *   weft          weft_barrier between two user threads (workers from -w)
 *   weft_kthread  weft_barrier between two plain pthreads (no runtime)
 *   pthread       pthread_barrier_t between two pthreads
 *   spin          a pure spin barrier (pause loop) between two pthreads
 * Parts:
 *   bench=barrier_sym        ns per episode, both threads do nothing else
 *                            (weft, weft_kthread, pthread, spin)
 *   bench=barrier_asym       total ns for -n[1] episodes; thread 0 does 10
 *                            units of work (a 10x10 double matmul each),
 *                            thread 1 does param units (0..10)
 *   bench=barrier_twork      ns thread 0 spent in its own work during the
 *                            asymmetric run at param units: how much the
 *                            waiting thread slows the busy one
 *   bench=barrier_twakeup    at level 0 (thread 1 always waits, thread 0
 *                            arrives last): time from the last arrival to
 *                            the waiter running again (rdtsc, median of
 *                            all episodes, reported in ns; cycles in the
 *                            human line)
 *   bench=barrier_tcall      same run: time the last arriver spends in
 *                            the barrier call (its notify cost)
 * Options: -n SYM,ASYM episodes (default 1000000,50000; pthread's
 * symmetric run uses a tenth: each episode costs two futex hand-offs),
 * -k levels (default 0..10), -w worker counts for weft (default 1,all; the
 * asymmetric part uses the largest), -r repetitions, -i implementation.
 * Each run starts with a warm-up of 2% of its episodes (at least 1000).
 */
#include "bench.h"
#include "bench_weft.h"

#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return bench_now_ns();
#endif
}

/* TSC ticks per ns, measured once against CLOCK_MONOTONIC. */
static double tsc_per_ns = 1.0;

static void calibrate(void)
{
    uint64_t n0 = bench_now_ns(), c0 = ticks();
    while (bench_now_ns() - n0 < 20000000)
        ;
    uint64_t n1 = bench_now_ns(), c1 = ticks();
    tsc_per_ns = (double)(c1 - c0) / (double)(n1 - n0);
}

/* ---- the unit of work ------------------------------------------------------ */

typedef struct mm {
    double a[10][10], b[10][10], c[10][10];
} __attribute__((aligned(64))) mm;

static BENCH_NOINLINE void unit(mm *m)
{
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) {
            double s = 0;
            for (int k = 0; k < 10; k++)
                s += m->a[i][k] * m->b[k][j];
            m->c[i][j] = s;
        }
    BENCH_SINK(m->c[5][5]);
}

static void mm_init(mm *m)
{
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) {
            m->a[i][j] = 0.5 + i - j;
            m->b[i][j] = 1.0 / (1 + i + j);
        }
}

/* ---- barrier implementations ------------------------------------------------ */

struct spinbar {
    _Atomic unsigned arrived __attribute__((aligned(64)));
    _Atomic unsigned episode __attribute__((aligned(64)));
};

static int spin_wait(void *p)
{
    struct spinbar *b = p;
    /* acquire: pairs with the release increment of the last arriver. */
    unsigned e = atomic_load_explicit(&b->episode, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&b->episode, e + 1, memory_order_release);
        return -1;
    }
    while (atomic_load_explicit(&b->episode, memory_order_acquire) == e)
#if defined(__x86_64__)
        __builtin_ia32_pause();
#else
        ;
#endif
    return 0;
}

static int weft_wait(void *p)
{
    return weft_barrier_wait(p);
}

static int pthread_wait(void *p)
{
    return pthread_barrier_wait(p);
}

/* ---- one run: two participants ------------------------------------------------- */

struct run {
    int (*wait)(void *);
    void *bar;
    long episodes, warmup;
    int units[2];
    uint64_t *arrive, *ret, *wake; /* per episode (level-0 timing run) or NULL */
    uint64_t elapsed_ns;           /* measured by participant 0 */
    uint64_t twork[2];             /* ticks spent in work */
    mm m[2];
};

struct part {
    struct run *r;
    int id;
};

static void *participant(void *arg)
{
    struct part *p = arg;
    struct run *r = p->r;
    int id = p->id, u = r->units[id];
    mm *m = &r->m[id];
    for (long e = 0; e < r->warmup; e++) {
        for (int k = 0; k < u; k++)
            unit(m);
        r->wait(r->bar);
    }
    r->wait(r->bar);
    uint64_t t0 = bench_now_ns(), work = 0;
    for (long e = 0; e < r->episodes; e++) {
        uint64_t w0 = ticks();
        for (int k = 0; k < u; k++)
            unit(m);
        uint64_t w1 = ticks();
        work += w1 - w0;
        if (r->arrive && id == 0) {
            r->arrive[e] = w1;
            r->wait(r->bar);
            r->ret[e] = ticks();
        } else if (r->wake && id == 1) {
            r->wait(r->bar);
            r->wake[e] = ticks();
        } else {
            r->wait(r->bar);
        }
    }
    if (id == 0)
        r->elapsed_ns = bench_now_ns() - t0;
    r->twork[id] = work;
    return NULL;
}

static void *weft_participant(void *arg)
{
    return participant(arg);
}

/* Runs one measurement with implementation impl; workers > 0 for weft. */
static void run_once(struct run *r, const char *impl, long workers)
{
    struct part p[2] = { { r, 0 }, { r, 1 } };
    mm_init(&r->m[0]);
    mm_init(&r->m[1]);
    r->warmup = r->episodes / 50 > 1000 ? r->episodes / 50 : 1000;
    if (strcmp(impl, "weft") == 0) {
        bench_weft_init(workers, BENCH_POLICY_ENV);
        weft_barrier b;
        weft_barrier_init(&b, 2);
        r->bar = &b;
        r->wait = weft_wait;
        weft_thread *t[2];
        int e;
        for (int i = 0; i < 2; i++)
            if ((e = weft_spawn(&t[i], weft_participant, &p[i], NULL)) != 0)
                bench_die("weft_spawn", e);
        for (int i = 0; i < 2; i++)
            weft_join(t[i], NULL);
        weft_barrier_destroy(&b);
        weft_finalize();
        return;
    }
    weft_barrier wb;
    pthread_barrier_t pb;
    struct spinbar sb = { 0, 0 };
    if (strcmp(impl, "weft_kthread") == 0) {
        weft_barrier_init(&wb, 2);
        r->bar = &wb;
        r->wait = weft_wait;
    } else if (strcmp(impl, "pthread") == 0) {
        pthread_barrier_init(&pb, NULL, 2);
        r->bar = &pb;
        r->wait = pthread_wait;
    } else {
        r->bar = &sb;
        r->wait = spin_wait;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        int e = pthread_create(&t[i], NULL, participant, &p[i]);
        if (e)
            bench_die("pthread_create", e);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (strcmp(impl, "pthread") == 0)
        pthread_barrier_destroy(&pb);
}

static const char *impls[] = { "weft", "weft_kthread", "pthread", "spin" };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void symmetric(const bench_opts *o, long n)
{
    double samples[BENCH_MAX_RUNS];
    for (size_t k = 0; k < sizeof impls / sizeof *impls; k++) {
        const char *impl = impls[k];
        if (!bench_wants(o, impl))
            continue;
        int weft = strcmp(impl, "weft") == 0;
        long nw = weft ? o->workers.len : 1;
        long eps = strcmp(impl, "pthread") == 0 ? n / 10 : n;
        for (long wi = 0; wi < nw; wi++) {
            long workers = weft ? o->workers.v[wi] : 2;
            for (int rep = 0; rep < o->reps; rep++) {
                static struct run r;
                memset(&r, 0, sizeof r);
                r.episodes = eps;
                run_once(&r, impl, workers);
                samples[rep] = (double)r.elapsed_ns / (double)eps;
            }
            bench_report(o, "barrier_sym", impl, workers, "2", samples, o->reps, "ns/episode");
        }
    }
}

static void asymmetric(const bench_opts *o, long n, const bench_list *levels)
{
    double total[BENCH_MAX_RUNS], twork[BENCH_MAX_RUNS], twake[BENCH_MAX_RUNS],
        tcall[BENCH_MAX_RUNS];
    long workers = 1;
    for (int i = 0; i < o->workers.len; i++)
        if (o->workers.v[i] > workers)
            workers = o->workers.v[i];
    uint64_t *arrive = calloc((size_t)n, sizeof *arrive), *ret = calloc((size_t)n, sizeof *ret),
             *wake = calloc((size_t)n, sizeof *wake), *tmp = calloc((size_t)n, sizeof *tmp);
    if (!arrive || !ret || !wake || !tmp)
        bench_die("calloc", ENOMEM);
    for (size_t k = 0; k < sizeof impls / sizeof *impls; k++) {
        const char *impl = impls[k];
        if (!bench_wants(o, impl))
            continue;
        long w = strcmp(impl, "weft") == 0 ? workers : 2;
        for (int li = 0; li < levels->len; li++) {
            long level = levels->v[li];
            int timing = level == 0;
            for (int rep = 0; rep < o->reps; rep++) {
                static struct run r;
                memset(&r, 0, sizeof r);
                r.episodes = n;
                r.units[0] = 10;
                r.units[1] = (int)level;
                if (timing) {
                    r.arrive = arrive;
                    r.ret = ret;
                    r.wake = wake;
                }
                run_once(&r, impl, w);
                total[rep] = (double)r.elapsed_ns;
                twork[rep] = (double)r.twork[0] / tsc_per_ns;
                if (timing) {
                    long m = 0;
                    for (long e = 0; e < n; e++)
                        if (wake[e] > arrive[e])
                            tmp[m++] = wake[e] - arrive[e];
                    qsort(tmp, (size_t)m, sizeof *tmp, cmp_u64);
                    twake[rep] = m ? (double)tmp[m / 2] : 0;
                    for (long e = 0; e < n; e++)
                        tmp[e] = ret[e] - arrive[e];
                    qsort(tmp, (size_t)n, sizeof *tmp, cmp_u64);
                    tcall[rep] = (double)tmp[n / 2];
                }
            }
            char param[32];
            snprintf(param, sizeof param, "%ld", level);
            bench_report(o, "barrier_asym", impl, w, param, total, o->reps, "ns");
            bench_report(o, "barrier_twork", impl, w, param, twork, o->reps, "ns");
            if (timing) {
                bench_stats cw = bench_summarize(twake, o->reps),
                            cc = bench_summarize(tcall, o->reps);
                for (int rep = 0; rep < o->reps; rep++) {
                    twake[rep] /= tsc_per_ns;
                    tcall[rep] /= tsc_per_ns;
                }
                bench_report(o, "barrier_twakeup", impl, w, "0", twake, o->reps, "ns");
                bench_report(o, "barrier_tcall", impl, w, "0", tcall, o->reps, "ns");
                printf("  %-16s %-12s Twakeup %.0f cycles, Tcall %.0f cycles (medians)\n",
                       "barrier_cycles", impl, cw.median, cc.median);
            }
        }
    }
    free(arrive);
    free(ret);
    free(wake);
    free(tmp);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -n SYM,ASYM episodes (0 skips a part)  -k asymmetry levels (default 0..10)\n"
                "  -i all|weft|weft_kthread|pthread|spin\n");
    long nsym = o.n.len > 0 ? o.n.v[0] : 1000000;
    long nasym = o.n.len > 1 ? o.n.v[1] : 50000;
    bench_list levels;
    if (o.threads_given) {
        levels = o.threads;
    } else {
        levels.len = 11;
        for (int i = 0; i <= 10; i++)
            levels.v[i] = i;
    }
    calibrate();
    printf("# tsc %.3f ticks/ns; unit of work: 10x10 double matmul\n", tsc_per_ns);
    if (nsym > 0)
        symmetric(&o, nsym);
    if (nasym > 0)
        asymmetric(&o, nasym, &levels);
    return 0;
}
