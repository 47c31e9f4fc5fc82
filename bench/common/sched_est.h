/* sched_est.h: what a timed region would take on free CPUs, estimated from
 * the kernel's per-thread accounting, for speedups measured on a loaded
 * machine (BENCH_SCHED=1 in the environment; off otherwise).
 *
 * With other programs running, and the kernel's autogroup scheduling
 * giving each session an equal share of the CPUs, a program's second
 * thread buys it no more CPU: wall-clock speedups say nothing. The kernel
 * counts, per thread, the time it ran and the time it waited runnable for
 * a CPU (/proc/self/task/TID/schedstat). On free CPUs nobody waits for a
 * CPU, so the region would take
 *   at least  the longest any one thread ran (busiest), and
 *   at most   the wall time minus the least any busy thread waited for a
 *             CPU (each thread's own time without its waits; its sleeps,
 *             which load can lengthen, are kept: pessimistic).
 * A spinning idle thread counts as running, as it would on free CPUs.
 * Prints one line per region:
 *   SCHED bench=B impl=I workers=W wall_ms= cpu_ms= busiest_ms= free_hi_ms=
 * C and C++.
 */
#ifndef WEFT_BENCH_SCHED_EST_H
#define WEFT_BENCH_SCHED_EST_H

#include "bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_SCHED_MAX  64 /* threads followed */
#define BENCH_SCHED_BUSY 10 /* a thread that ran 1/BENCH_SCHED_BUSY of the busiest's time is busy */

struct bench_sched {
    int n;
    long tid[BENCH_SCHED_MAX];
    uint64_t run[BENCH_SCHED_MAX], wait[BENCH_SCHED_MAX]; /* ns */
    uint64_t t;                                           /* bench_now_ns() */
};

static inline int bench_sched_on(void)
{
    const char *e = getenv("BENCH_SCHED");
    return e && *e && *e != '0';
}

static inline void bench_sched_snap(struct bench_sched *s)
{
    s->n = 0;
    DIR *d = opendir("/proc/self/task");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL && s->n < BENCH_SCHED_MAX) {
            if (e->d_name[0] == '.')
                continue;
            char path[300]; /* "/proc/self/task/" + a d_name (256) + "/schedstat" */
            snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            unsigned long long run, wait;
            if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
                s->tid[s->n] = atol(e->d_name);
                s->run[s->n] = run;
                s->wait[s->n] = wait;
                s->n++;
            }
            fclose(f);
        }
        closedir(d);
    }
    s->t = bench_now_ns();
}

/* The estimate for the region from a to b (threads born inside count from 0). */
static inline void bench_sched_print(const char *bench, const char *impl, long workers,
                                     const struct bench_sched *a, const struct bench_sched *b)
{
    uint64_t wall = b->t - a->t, cpu = 0, busiest = 0, run[BENCH_SCHED_MAX], wait[BENCH_SCHED_MAX];
    for (int i = 0; i < b->n; i++) {
        run[i] = b->run[i];
        wait[i] = b->wait[i];
        for (int j = 0; j < a->n; j++)
            if (a->tid[j] == b->tid[i]) {
                run[i] -= a->run[j];
                wait[i] -= a->wait[j];
            }
        cpu += run[i];
        if (run[i] > busiest)
            busiest = run[i];
    }
    uint64_t least_wait = wall;
    for (int i = 0; i < b->n; i++)
        if (run[i] * BENCH_SCHED_BUSY >= busiest && wait[i] < least_wait)
            least_wait = wait[i];
    printf("SCHED bench=%s impl=%s workers=%ld wall_ms=%.1f cpu_ms=%.1f busiest_ms=%.1f "
           "free_hi_ms=%.1f\n",
           bench, impl, workers, (double)wall / 1e6, (double)cpu / 1e6, (double)busiest / 1e6,
           (double)(wall - least_wait) / 1e6);
    fflush(stdout);
}

/* For a loop of timed calls: call before the call (end 0) and after it
 * (end 1); the last of reps (r = reps - 1) is the region, when on. */
static inline void bench_sched_mark(int r, int reps, int end, const char *bench, const char *impl,
                                    long workers)
{
    static struct bench_sched start;
    if (r != reps - 1 || !bench_sched_on())
        return;
    if (!end) {
        bench_sched_snap(&start);
        return;
    }
    struct bench_sched stop;
    bench_sched_snap(&stop);
    bench_sched_print(bench, impl, workers, &start, &stop);
}

#ifdef __cplusplus
}
#endif
#endif /* WEFT_BENCH_SCHED_EST_H */
