/* prio.c: priorities and time quanta: latency under a flood, the cost of a
 * quantum, and fairness among spinners.
 *
 *   bench_prio [-i all|latency|overhead|fairness] [-r REPS] [-n N] [-q LIST]
 *
 * latency: 2 workers; 20 BACKGROUND (param flood=bg) or NORMAL (flood=normal)
 *   threads compute 100 ms at a time without calling weft (then yield); a
 *   plain kernel thread wakes HIGH threads (each waits on a semaphore of
 *   its own) about 5,000 times a second, each doing 10 us of work. Reports
 *   the wake-to-run latency percentiles of each run (p50, p99, p99.9; the
 *   median over REPS runs), for each quantum in -q (microseconds; 0 = off;
 *   default 1000,10000,0): impl=weft-q1ms, weft-q10ms, weft-off.
 *   BENCH_PRIO_DUMP=DIR keeps each configuration's last run's samples
 *   there (bench/scripts/prio-plot.py draws them).
 * overhead: fib(-n N, default 35) with a weft_spawn per call on all workers,
 *   quantum 1 ms against off in the same binary, runs alternated: median
 *   wall and process CPU times (the monitor's included) and their ratios.
 * fairness: 8 equal NORMAL spinners on 2 workers, 1 ms quantum, 2 s: each
 *   one's share of a worker (work done / total work x 2), min and max.
 */
#include "bench.h"
#include "bench_weft.h"

#include <dirent.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "weft.h"

#define FLOOD       20
#define FLOOD_MS    100
#define NHIGH       64
#define WAKE_NS     200000 /* 5,000 wake-ups a second */
#define WORK_NS     10000
#define MAX_SAMPLES 200000
#define SPINNERS    8

static void init_q(int workers, long quantum_us)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    cfg.quantum_us = quantum_us > 0 ? quantum_us : -1; /* 0: off */
    int rc = weft_init(&cfg);
    if (rc != 0)
        bench_die("weft_init", rc);
}

static const char *qname(long q, char *buf, size_t n)
{
    if (q <= 0)
        snprintf(buf, n, "weft-off");
    else if (q % 1000 == 0)
        snprintf(buf, n, "weft-q%ldms", q / 1000);
    else
        snprintf(buf, n, "weft-q%ldus", q);
    return buf;
}

/* Computes for about ns without a call but the clock read every ~1 us. */
static void compute(uint64_t ns)
{
    uint64_t end = bench_now_ns() + ns;
    volatile uint64_t x = 0;
    do {
        for (int i = 0; i < 256; i++)
            x++;
    } while (bench_now_ns() < end);
}

/* ---- latency under a flood ------------------------------------------------------ */

static atomic_int stop;

struct high {
    weft_sem sem;
    _Atomic uint64_t woken_at; /* the waker's clock when it posted */
    _Atomic int busy;          /* 1 from the post until the request is served */
} __attribute__((aligned(64)));

static struct high highs[NHIGH];
static double lat[MAX_SAMPLES];
static atomic_int nlat;

static void *flood(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        compute((uint64_t)FLOOD_MS * 1000000);
        weft_yield();
    }
    return NULL;
}

static void *serve(void *arg)
{
    struct high *h = arg;
    for (;;) {
        weft_sem_wait(&h->sem);
        if (atomic_load_explicit(&stop, memory_order_relaxed))
            return NULL;
        uint64_t now = bench_now_ns();
        int k = atomic_fetch_add(&nlat, 1);
        if (k < MAX_SAMPLES)
            lat[k] = (double)(now - atomic_load(&h->woken_at));
        compute(WORK_NS);
        atomic_store(&h->busy, 0);
    }
}

static void *waker(void *arg)
{
    uint64_t end = bench_now_ns() + (uint64_t)(*(double *)arg * 1e9);
    uint64_t next = bench_now_ns();
    int i = 0;
    while (bench_now_ns() < end) {
        next += WAKE_NS;
        uint64_t now = bench_now_ns();
        if (next > now) {
            struct timespec ts = { 0, (long)(next - now) };
            nanosleep(&ts, NULL);
        } else {
            /* Behind (this thread was off the CPU): the slots missed are
             * dropped, not posted at once, or a burst of requests made by
             * the load generator's own delay would queue behind each
             * other and be counted as wake-up latency. */
            next = now;
        }
        struct high *h = &highs[i++ % NHIGH];
        if (atomic_load(&h->busy))
            continue; /* still serving the last one: skip, as an overloaded server would */
        atomic_store(&h->busy, 1);
        atomic_store(&h->woken_at, bench_now_ns());
        weft_sem_post(&h->sem);
    }
    return NULL;
}

static double pct(double *v, int n, double p)
{
    int k = (int)(p * (n - 1));
    return v[k];
}

/* BENCH_PRIO_DUMP=DIR: the sorted samples of a run (ns, one a line) go to
 * DIR/IMPL-FLOOD.txt, for bench/scripts/prio-plot.py. */
static void dump_samples(const char *impl, const char *fl, int n)
{
    const char *dir = getenv("BENCH_PRIO_DUMP");
    if (!dir || !*dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%s.txt", dir, impl, fl);
    FILE *f = fopen(path, "w");
    if (!f)
        bench_die(path, errno);
    for (int i = 0; i < n; i++)
        fprintf(f, "%.0f\n", lat[i]);
    fclose(f);
}

static void latency_once(long q, int flood_prio, double secs, double out[3])
{
    init_q(2, q);
    atomic_store(&stop, 0);
    atomic_store(&nlat, 0);
    weft_attr fa = WEFT_ATTR_INIT, ha = WEFT_ATTR_INIT;
    fa.priority = flood_prio;
    ha.priority = WEFT_PRIO_HIGH;
    weft_thread *ft[FLOOD], *ht[NHIGH];
    for (int i = 0; i < NHIGH; i++) {
        weft_sem_init(&highs[i].sem, 0);
        atomic_store(&highs[i].busy, 0);
        if (weft_spawn(&ht[i], serve, &highs[i], &ha) != 0)
            bench_die("weft_spawn", EAGAIN);
    }
    for (int i = 0; i < FLOOD; i++)
        if (weft_spawn(&ft[i], flood, NULL, &fa) != 0)
            bench_die("weft_spawn", EAGAIN);
    /* the waker: a kernel thread of its own (bound), joined without
     * blocking worker 0 */
    weft_attr ba = WEFT_ATTR_INIT;
    ba.bound = 1;
    weft_thread *wk;
    if (weft_spawn(&wk, waker, &secs, &ba) != 0)
        bench_die("weft_spawn", EAGAIN);
    weft_join(wk, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < NHIGH; i++)
        weft_sem_post(&highs[i].sem);
    for (int i = 0; i < NHIGH; i++)
        weft_join(ht[i], NULL);
    for (int i = 0; i < FLOOD; i++)
        weft_join(ft[i], NULL);
    weft_finalize();
    int n = atomic_load(&nlat);
    if (n > MAX_SAMPLES)
        n = MAX_SAMPLES;
    qsort(lat, (size_t)n, sizeof lat[0], bench_cmp_double);
    out[0] = n ? pct(lat, n, 0.50) : 0;
    out[1] = n ? pct(lat, n, 0.99) : 0;
    out[2] = n ? pct(lat, n, 0.999) : 0;
    char name[32];
    const char *fl = flood_prio < 0 ? "bg" : "normal";
    printf("  run: %s flood=%s samples=%d p50=%.1fus p99=%.1fus p99.9=%.1fus\n",
           qname(q, name, sizeof name), fl, n, out[0] / 1e3, out[1] / 1e3, out[2] / 1e3);
    dump_samples(name, fl, n); /* each run overwrites: the last one stays */
}

static void latency(const bench_opts *o, const bench_list *qs, double secs)
{
    static const int floods[2] = { WEFT_PRIO_BACKGROUND, WEFT_PRIO_NORMAL };
    for (int f = 0; f < 2; f++)
        for (int qi = 0; qi < qs->len; qi++) {
            double p[3][BENCH_MAX_RUNS];
            for (int r = 0; r < o->reps; r++) {
                double out[3];
                latency_once(qs->v[qi], floods[f], secs, out);
                for (int k = 0; k < 3; k++)
                    p[k][r] = out[k];
            }
            char name[32];
            bench_stats s50 = bench_summarize(p[0], o->reps), s99 = bench_summarize(p[1], o->reps),
                        s999 = bench_summarize(p[2], o->reps);
            printf("RESULT bench=prio_latency impl=%s workers=2 param=flood=%s p50_ns=%.0f "
                   "p99_ns=%.0f p999_ns=%.0f runs=%d commit=%s\n",
                   qname(qs->v[qi], name, sizeof name), f ? "normal" : "bg", s50.median, s99.median,
                   s999.median, o->reps, BENCH_COMMIT);
            printf("  prio_latency %-10s flood=%-6s p50 %8.1f us  p99 %8.1f us  p99.9 %8.1f us\n",
                   name, f ? "normal" : "bg", s50.median / 1e3, s99.median / 1e3,
                   s999.median / 1e3);
            fflush(stdout);
        }
}

/* ---- the cost of a quantum --------------------------------------------------------- */

static double cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

/* CPU time of the monitor thread so far (its schedstat, in ns), 0 if not
 * found. */
static double monitor_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    double ns = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f) || strncmp(comm, "weft-monitor", 12) != 0) {
            fclose(f);
            continue;
        }
        fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        if ((f = fopen(path, "r"))) {
            unsigned long long run = 0;
            if (fscanf(f, "%llu", &run) == 1)
                ns = (double)run;
            fclose(f);
        }
    }
    closedir(d);
    return ns;
}

static void overhead(const bench_opts *o, long n)
{
    double mon[BENCH_MAX_RUNS];
    uint64_t npre = 0;
    double t[2][BENCH_MAX_RUNS], c[2][BENCH_MAX_RUNS];
    static const long q[2] = { 1000, 0 };
    int workers = bench_ncpus();
    for (int r = 0; r < o->reps; r++)
        for (int k = 0; k < 2; k++) {
            init_q(workers, q[k]);
            double c0 = cpu_ns();
            uint64_t t0 = bench_now_ns();
            long v = (long)(intptr_t)bench_weft_fib((void *)(intptr_t)n);
            t[k][r] = (double)(bench_now_ns() - t0);
            c[k][r] = cpu_ns() - c0; /* every thread's, the monitor's included */
            if (v != bench_fib_expected(n))
                bench_die("fib", EINVAL);
            weft_stats st;
            weft_stats_get(&st);
            if (k == 0) {
                mon[r] = monitor_cpu_ns() / c[k][r] * 100;
                npre += st.preempt_quantum + st.preempt_priority;
            }
            weft_finalize();
        }
    char param[32];
    snprintf(param, sizeof param, "%ld", n);
    bench_stats on = bench_report(o, "prio_fib", "weft-q1ms", workers, param, t[0], o->reps, "ns");
    bench_stats off = bench_report(o, "prio_fib", "weft-off", workers, param, t[1], o->reps, "ns");
    bench_stats con =
        bench_report(o, "prio_fib_cpu", "weft-q1ms", workers, param, c[0], o->reps, "ns");
    bench_stats coff =
        bench_report(o, "prio_fib_cpu", "weft-off", workers, param, c[1], o->reps, "ns");
    bench_stats ms = bench_summarize(mon, o->reps);
    printf("RESULT bench=prio_fib_monitor impl=weft-q1ms workers=%d param=%s monitor_cpu_pct=%.3f "
           "preemptions=%llu runs=%d commit=%s\n",
           workers, param, ms.median, (unsigned long long)npre, o->reps, BENCH_COMMIT);
    printf("  prio_fib overhead of a 1 ms quantum: %+.2f %% wall, %+.2f %% CPU time; the monitor "
           "used %.3f %% of the CPU time, %llu preemptions in %d runs\n",
           (on.median / off.median - 1) * 100, (con.median / coff.median - 1) * 100, ms.median,
           (unsigned long long)npre, o->reps);
}

/* ---- fairness -------------------------------------------------------------------------- */

static _Atomic uint64_t work[SPINNERS];

static void *spinner(void *arg)
{
    _Atomic uint64_t *w = arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        volatile uint64_t x = 0;
        for (int i = 0; i < 1000; i++)
            x++;
        atomic_store_explicit(w, atomic_load_explicit(w, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    return NULL;
}

static void fairness(const bench_opts *o, double secs)
{
    double mins[BENCH_MAX_RUNS], maxs[BENCH_MAX_RUNS];
    for (int r = 0; r < o->reps; r++) {
        init_q(2, 1000);
        atomic_store(&stop, 0);
        weft_thread *t[SPINNERS];
        for (int i = 0; i < SPINNERS; i++) {
            atomic_store(&work[i], 0);
            weft_spawn(&t[i], spinner, &work[i], NULL);
        }
        weft_sleep_ns((uint64_t)(secs * 1e9)); /* parks: worker 0 runs spinners meanwhile */
        atomic_store(&stop, 1);
        for (int i = 0; i < SPINNERS; i++)
            weft_join(t[i], NULL);
        weft_finalize();
        double total = 0;
        for (int i = 0; i < SPINNERS; i++)
            total += (double)atomic_load(&work[i]);
        double lo = 1e9, hi = 0;
        printf("  run: shares of a worker:");
        for (int i = 0; i < SPINNERS; i++) {
            double share = (double)atomic_load(&work[i]) / total * 2 * 100;
            printf(" %.1f", share);
            lo = share < lo ? share : lo;
            hi = share > hi ? share : hi;
        }
        printf(" %%\n");
        mins[r] = lo;
        maxs[r] = hi;
    }
    bench_stats lo = bench_summarize(mins, o->reps), hi = bench_summarize(maxs, o->reps);
    printf("RESULT bench=prio_fairness impl=weft-q1ms workers=2 param=spinners=8 "
           "min_share_pct=%.1f max_share_pct=%.1f runs=%d commit=%s\n",
           lo.median, hi.median, o->reps, BENCH_COMMIT);
    printf("  prio_fairness 8 spinners, 2 workers: shares of a worker %.1f %% .. %.1f %% "
           "(fair: 25 %%)\n",
           lo.median, hi.median);
}

int main(int argc, char **argv)
{
    bench_list qs = { { 1000, 10000, 0 }, 3 };
    /* -q is ours: take it out before the shared parser sees it */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-q") == 0) {
            if (bench_parse_list(argv[i + 1], &qs) != 0)
                bench_die("-q", EINVAL);
            memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof argv[0]);
            argc -= 2;
            break;
        }
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -i all|latency|overhead|fairness; -n: seconds per latency run (default 1) or "
                "fib's n (overhead, default 35); -q LIST quanta in us (0 = off)\n");
    if (bench_wants(&o, "latency"))
        latency(&o, &qs, o.n.len && !bench_wants(&o, "overhead") ? (double)o.n.v[0] : 1.0);
    if (bench_wants(&o, "overhead"))
        overhead(&o, o.n.len && !bench_wants(&o, "latency") ? o.n.v[0] : 35);
    if (bench_wants(&o, "fairness"))
        fairness(&o, 2.0);
    return 0;
}
