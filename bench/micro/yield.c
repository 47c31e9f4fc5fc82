/* yield.c: cost of one weft_yield() when K user threads share one worker and all of them yield in turn.
 *
 * Each of K threads calls weft_yield() N times; a sample is the wall time from
 * the first spawn to the last join divided by K*N (the K spawns and joins are
 * noise next to K*N yields). The pthread counterpart is bench_pingpong.
 *
 *   bench_yield [-n YIELDS_PER_THREAD] [-k LIST] [-r REPS] [-w WORKERS] [-p POLICY]
 * Default -n: 1,000,000 / K per thread; default -w 1 (not "1,all").
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"

#define WARMUP_YIELDS 1000

typedef struct yielder {
    long n;
    weft_thread *t;
} yielder;

static void *yield_n(void *arg)
{
    long n = ((yielder *)arg)->n;
    for (long i = 0; i < n; i++)
        weft_yield();
    return NULL;
}

/* Spawns k threads that yield n times each and joins them; out of line for
 * callgrind --toggle-collect=bench_round. */
BENCH_NOINLINE void bench_round(yielder *ys, long k, long n);

BENCH_NOINLINE void bench_round(yielder *ys, long k, long n)
{
    for (long i = 0; i < k; i++) {
        ys[i].n = n;
        int rc = weft_spawn(&ys[i].t, yield_n, &ys[i], NULL);
        if (rc != 0)
            bench_die("weft_spawn", rc);
    }
    for (long i = 0; i < k; i++) {
        int rc = weft_join(ys[i].t, NULL);
        if (rc != 0)
            bench_die("weft_join", rc);
    }
}

static void run(const bench_opts *o, long workers, long k, long n, int policy)
{
    double samples[BENCH_MAX_RUNS];
    char param[32];
    yielder *ys = calloc((size_t)k, sizeof *ys);
    if (ys == NULL)
        bench_die("calloc", ENOMEM);
    bench_weft_init(workers, policy);
    bench_round(ys, k, WARMUP_YIELDS / k + 1);
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        bench_round(ys, k, n);
        samples[r] = (double)(bench_now_ns() - t0) / ((double)k * (double)n);
    }
    int rc = weft_finalize();
    if (rc != 0)
        bench_die("weft_finalize", rc);
    free(ys);
    snprintf(param, sizeof param, "%ld", k);
    bench_report(o, "yield", policy == WEFT_HELP_FIRST ? "weft-hf" : "weft", workers, param,
                 samples, o->reps, "ns/yield");
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -w 1; default -n 1000000/K\n");
    static const long w1 = 1;
    bench_default_list(&o.workers, o.workers_given, &w1, 1);
    int policy = strcmp(o.policy, "help-first") == 0 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
    for (int wi = 0; wi < o.workers.len; wi++) {
        for (int ki = 0; ki < o.threads.len; ki++) {
            long k = o.threads.v[ki] > 0 ? o.threads.v[ki] : 1;
            long n = bench_size(&o, 1000000 / k);
            run(&o, o.workers.v[wi], k, n > 0 ? n : 1, policy);
        }
    }
    return 0;
}
