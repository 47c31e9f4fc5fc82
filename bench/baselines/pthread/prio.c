/* prio.c: pthreads baseline for bench_prio's latency under a flood: the
 * kernel's scheduler with nice levels in place of weft's classes.
 *
 * The same load as bench/micro/prio.c: the process kept to 2 CPUs; 20
 * flood threads at nice 19 compute 100 ms at a time (reading the clock
 * about every microsecond, then sched_yield); 64 request threads at nice 0
 * each wait on a semaphore of their own; a waker thread (nice 0) posts one
 * about 5,000 times a second, skipping a request still being served, and
 * each request computes 10 us. Reports the wake-to-run latency percentiles
 * (post to running, p50, p99, p99.9; the median over -r runs) as
 * RESULT bench=prio_latency impl=pthread-nice param=flood=nice19.
 * BENCH_PRIO_DUMP=DIR writes the last run's sorted samples (ns, one a
 * line) to DIR/pthread-nice-nice19.txt for bench/scripts/prio-plot.py.
 *
 *   baseline_pthread_prio [-n SECONDS] [-r REPS]   (default 1 s, 5 runs)
 */
#include "bench.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FLOOD       20
#define FLOOD_MS    100
#define NHIGH       64
#define WAKE_NS     200000 /* 5,000 wake-ups a second */
#define WORK_NS     10000
#define MAX_SAMPLES 200000
#define FLOOD_NICE  19

struct high {
    sem_t sem;
    _Atomic uint64_t woken_at; /* the waker's clock when it posted */
    _Atomic int busy;          /* 1 from the post until the request is served */
} __attribute__((aligned(64)));

static struct high highs[NHIGH];
static double lat[MAX_SAMPLES];
static atomic_int nlat;
static atomic_int stop;

/* Computes for about ns, the clock read about every microsecond. */
static void compute(uint64_t ns)
{
    uint64_t end = bench_now_ns() + ns;
    volatile uint64_t x = 0;
    do {
        for (int i = 0; i < 256; i++)
            x++;
    } while (bench_now_ns() < end);
}

static void *flood(void *arg)
{
    (void)arg;
    /* nice applies to one kernel thread on Linux: this one */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), FLOOD_NICE) != 0)
        bench_die("setpriority", errno);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        compute((uint64_t)FLOOD_MS * 1000000);
        sched_yield();
    }
    return NULL;
}

static void *serve(void *arg)
{
    struct high *h = arg;
    for (;;) {
        while (sem_wait(&h->sem) != 0)
            ;
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
            continue; /* still serving the last one, as an overloaded server would */
        atomic_store(&h->busy, 1);
        atomic_store(&h->woken_at, bench_now_ns());
        sem_post(&h->sem);
    }
    return NULL;
}

static void spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(t, NULL, fn, arg);
    if (rc != 0)
        bench_die("pthread_create", rc);
}

static void once(double secs, double out[3], int last)
{
    atomic_store(&stop, 0);
    atomic_store(&nlat, 0);
    pthread_t ft[FLOOD], ht[NHIGH], wk;
    for (int i = 0; i < NHIGH; i++) {
        sem_init(&highs[i].sem, 0, 0);
        atomic_store(&highs[i].busy, 0);
        spawn(&ht[i], serve, &highs[i]);
    }
    for (int i = 0; i < FLOOD; i++)
        spawn(&ft[i], flood, NULL);
    spawn(&wk, waker, &secs);
    pthread_join(wk, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < NHIGH; i++)
        sem_post(&highs[i].sem);
    for (int i = 0; i < NHIGH; i++) {
        pthread_join(ht[i], NULL);
        sem_destroy(&highs[i].sem);
    }
    for (int i = 0; i < FLOOD; i++)
        pthread_join(ft[i], NULL);
    int n = atomic_load(&nlat);
    if (n > MAX_SAMPLES)
        n = MAX_SAMPLES;
    qsort(lat, (size_t)n, sizeof lat[0], bench_cmp_double);
    out[0] = n ? lat[(int)(0.50 * (n - 1))] : 0;
    out[1] = n ? lat[(int)(0.99 * (n - 1))] : 0;
    out[2] = n ? lat[(int)(0.999 * (n - 1))] : 0;
    printf("  run: pthread-nice flood=nice19 samples=%d p50=%.1fus p99=%.1fus p99.9=%.1fus\n", n,
           out[0] / 1e3, out[1] / 1e3, out[2] / 1e3);
    const char *dir = getenv("BENCH_PRIO_DUMP");
    if (last && dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/pthread-nice-nice19.txt", dir);
        FILE *f = fopen(path, "w");
        if (!f)
            bench_die(path, errno);
        for (int i = 0; i < n; i++)
            fprintf(f, "%.0f\n", lat[i]);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -n: seconds per run (default 1)\n");
    double secs = o.n.len ? (double)o.n.v[0] : 1.0;
    /* two CPUs, as weft's two workers */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 2) {
        cpu_set_t two;
        CPU_ZERO(&two);
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
            if (CPU_ISSET(c, &set)) {
                CPU_SET(c, &two);
                k++;
            }
        sched_setaffinity(0, sizeof two, &two);
    }
    double p[3][BENCH_MAX_RUNS];
    for (int r = 0; r < o.reps; r++) {
        double out[3];
        once(secs, out, r == o.reps - 1);
        for (int k = 0; k < 3; k++)
            p[k][r] = out[k];
    }
    bench_stats s50 = bench_summarize(p[0], o.reps), s99 = bench_summarize(p[1], o.reps),
                s999 = bench_summarize(p[2], o.reps);
    printf("RESULT bench=prio_latency impl=pthread-nice workers=2 param=flood=nice19 p50_ns=%.0f "
           "p99_ns=%.0f p999_ns=%.0f runs=%d commit=%s\n",
           s50.median, s99.median, s999.median, o.reps, BENCH_COMMIT);
    printf("  prio_latency %-12s flood=%-7s p50 %8.1f us  p99 %8.1f us  p99.9 %8.1f us\n",
           "pthread-nice", "nice19", s50.median / 1e3, s99.median / 1e3, s999.median / 1e3);
    return 0;
}
