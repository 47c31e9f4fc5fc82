/* blocking.c: cost of weft_blocking, the hand-off of a worker around an
 * arbitrary blocking call, against plain pthreads.
 *
 * bench=blocking_noop: one user thread calls weft_blocking(fn) N times with
 *   an empty fn; ns per call. The lend is usually cancelled before another
 *   kernel thread takes the worker (one futex wake per call).
 * bench=blocking_sleep param=K: K user threads each make N/K calls whose fn
 *   sleeps 50 us (nanosleep); wall ns per call. With K calls in flight at
 *   once the ideal is 50,000/K ns. pthread: K kernel threads sleeping
 *   directly (1:1, the floor).
 *
 *   bench_blocking [-n CALLS] [-k LIST] [-r REPS] [-w LIST] [-i all|weft|pthread]
 */
#include "bench.h"

#include <pthread.h>
#include <time.h>

#include "weft.h"

typedef int (*call_fn)(void (*)(void *), void *);

static void noop(void *arg)
{
    BENCH_SINK(arg);
}

static void nap(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 50000 };
    nanosleep(&ts, NULL);
}

struct job {
    call_fn call;
    void (*fn)(void *);
    long n;
};

static void *caller(void *arg)
{
    struct job *j = arg;
    for (long i = 0; i < j->n; i++)
        j->call(j->fn, NULL);
    return NULL;
}

static int direct(void (*fn)(void *), void *arg)
{
    fn(arg);
    return 0;
}

/* k threads (user threads, or pthreads when call == direct) make n/k calls
 * each; returns wall ns per call. */
static double round_weft(call_fn call, void (*fn)(void *), long workers, long k, long n)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = (int)workers;
    int rc = weft_init(&cfg);
    if (rc != 0)
        bench_die("weft_init", rc);
    struct job j = { call, fn, n / k };
    weft_thread *ts[256];
    caller(&(struct job){ call, fn, 100 }); /* warm-up: machines started */
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < k; i++) {
        rc = weft_spawn(&ts[i], caller, &j, NULL);
        if (rc != 0)
            bench_die("weft_spawn", rc);
    }
    for (long i = 0; i < k; i++)
        weft_join(ts[i], NULL);
    uint64_t t = bench_now_ns() - t0;
    rc = weft_finalize();
    if (rc != 0)
        bench_die("weft_finalize", rc);
    return (double)t / (double)(j.n * k);
}

static double round_pthread(void (*fn)(void *), long k, long n)
{
    struct job j = { direct, fn, n / k };
    pthread_t ts[256];
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < k; i++) {
        int rc = pthread_create(&ts[i], NULL, caller, &j);
        if (rc != 0)
            bench_die("pthread_create", rc);
    }
    for (long i = 0; i < k; i++)
        pthread_join(ts[i], NULL);
    return (double)(bench_now_ns() - t0) / (double)(j.n * k);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -n CALLS  -k LIST (concurrent callers for blocking_sleep, default 64)\n"
                "  -i all|weft|pthread\n");
    long n = o.n.len > 0 ? o.n.v[0] : 20000;
    double s[BENCH_MAX_RUNS];
    static const struct {
        const char *name;
        call_fn call;
    } impls[] = {
        { "weft", weft_blocking },
    };
    for (int ii = 0; ii < (int)(sizeof impls / sizeof impls[0]); ii++) {
        if (!bench_wants(&o, impls[ii].name))
            continue;
        for (int wi = 0; wi < o.workers.len; wi++) {
            for (int r = 0; r < o.reps; r++)
                s[r] = round_weft(impls[ii].call, noop, o.workers.v[wi], 1, n);
            bench_report(&o, "blocking_noop", impls[ii].name, o.workers.v[wi], "1", s, o.reps,
                         "ns/call");
        }
    }
    long ks[BENCH_MAX_LIST], nk = 0;
    if (o.threads.len > 0)
        for (int i = 0; i < o.threads.len; i++)
            ks[nk++] = o.threads.v[i] > 256 ? 256 : o.threads.v[i];
    else
        ks[nk++] = 64;
    for (long ki = 0; ki < nk; ki++) {
        long k = ks[ki], calls = n / 4 < k ? k : n / 4;
        char param[32];
        snprintf(param, sizeof param, "%ld", k);
        for (int ii = 0; ii < (int)(sizeof impls / sizeof impls[0]); ii++) {
            if (!bench_wants(&o, impls[ii].name))
                continue;
            for (int wi = 0; wi < o.workers.len; wi++) {
                for (int r = 0; r < o.reps; r++)
                    s[r] = round_weft(impls[ii].call, nap, o.workers.v[wi], k, calls);
                bench_report(&o, "blocking_sleep", impls[ii].name, o.workers.v[wi], param, s,
                             o.reps, "ns/call");
            }
        }
        if (bench_wants(&o, "pthread")) {
            for (int r = 0; r < o.reps; r++)
                s[r] = round_pthread(nap, k, calls);
            bench_report(&o, "blocking_sleep", "pthread", k, param, s, o.reps, "ns/call");
        }
    }
    return 0;
}
