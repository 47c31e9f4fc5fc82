/* spawn_loop.c: a flat loop of leaf spawns in the initial thread (main), then the joins: the speedup of p workers over one.
 *
 * The shape of a `for` loop of tasks in main (OpenMP's single + task loop):
 * main spawns COUNT threads, each running a leaf of -n iterations of a
 * dependent integer loop (default 4000, a few microseconds), then joins them
 * in order. main never leaves worker 0, so the loop only runs in parallel if
 * idle workers take the children while main goes on spawning, under either
 * spawn policy. The summary line gives T1/Tp per policy.
 *
 *   bench_spawn_loop [-n LEAF_ITERS] [-r REPS] [-w LIST] [-p work-first|help-first|both]
 * Default -w 1,all, -p both.
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"

#define COUNT 10000

static weft_thread *threads[COUNT];

/* A leaf of n steps of an xorshift chain: no memory traffic, no sharing. */
static void *leaf(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg | 1;
    long n = (long)((uintptr_t)arg >> 32);
    for (long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return (void *)(uintptr_t)x;
}

static BENCH_NOINLINE void spawn_loop(long iters)
{
    for (long i = 0; i < COUNT; i++) {
        int rc = weft_spawn(&threads[i], leaf,
                            (void *)(uintptr_t)((uint64_t)iters << 32 | (uint64_t)i), NULL);
        bench_ok(rc, "weft_spawn");
    }
    for (long i = 0; i < COUNT; i++) {
        void *r;
        int rc = weft_join(threads[i], &r);
        bench_ok(rc, "weft_join");
        BENCH_SINK(r);
    }
}

static double run(const bench_opts *o, long iters, long workers, int policy)
{
    double samples[BENCH_MAX_RUNS];
    char param[32];
    bench_weft_init(workers, policy);
    spawn_loop(iters); /* warm-up: stacks cached, workers started */
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        spawn_loop(iters);
        samples[r] = (double)(bench_now_ns() - t0);
    }
    weft_stats st;
    if (weft_stats_get(&st) == 0 && !o->callgrind)
        printf("  (%ld workers: %llu steals)\n", workers, (unsigned long long)st.steals);
    int rc = weft_finalize();
    bench_ok(rc, "weft_finalize");
    snprintf(param, sizeof param, "%ld", iters);
    return bench_report(o, "spawn_loop", policy == WEFT_HELP_FIRST ? "weft-hf" : "weft", workers,
                        param, samples, o->reps, "ns")
        .median;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -n leaf iterations (default 4000); -p default both\n");
    bench_default_n(&o, 4000);
    int both = 1;
    for (int i = 1; i < argc; i++)
        both &= strcmp(argv[i], "-p") != 0;
    for (int pi = 0; pi < 2; pi++) {
        int policy = pi ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
        if (!both && strcmp(o.policy, pi ? "help-first" : "work-first") != 0)
            continue;
        double t1 = 0, tp = 0;
        long p = 1;
        for (int wi = 0; wi < o.workers.len; wi++) {
            double t = run(&o, o.n.v[0], o.workers.v[wi], policy);
            if (o.workers.v[wi] == 1)
                t1 = t;
            if (o.workers.v[wi] >= p) {
                p = o.workers.v[wi];
                tp = t;
            }
        }
        if (t1 > 0 && tp > 0 && p > 1 && !o.callgrind)
            printf("  spawn_loop %s: speedup T1/T%ld = %.2f\n", pi ? "help-first" : "work-first", p,
                   t1 / tp);
    }
    return 0;
}
