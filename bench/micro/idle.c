/* idle.c: CPU used by a runtime with nothing to run.
 *
 * bench=idle: weft_init with W workers, then (after 64 short and 64 blocked
 * weft_blocking calls, so that idle spare kernel threads exist too) the
 * initial thread sleeps S seconds in weft_sleep_ns: every worker and every
 * spare has nothing to do. Reports the process's user+system CPU time over
 * the sleep as a percentage of one core (the goal: well under 1%).
 * -i raw: the initial thread sleeps in a raw nanosleep instead, holding its
 * worker blocked in the kernel with nothing else to run (issue 24, item
 * 11: the bar is 0.05%); -i all: both, weft first.
 *
 *   bench_idle [-n SECONDS] [-w LIST] [-i weft|raw|all]
 */
#include "bench.h"

#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "weft.h"

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void noop(void *arg)
{
    BENCH_SINK(arg);
}

static void nap(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 2000000 };
    nanosleep(&ts, NULL);
}

static void *blocked(void *arg)
{
    weft_blocking(nap, arg);
    return NULL;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -n SECONDS of idling (default 3)\n");
    long secs = o.n.len > 0 ? o.n.v[0] : 3;
    int kinds = strcmp(o.impl, "raw") == 0 ? 2 : strcmp(o.impl, "all") == 0 ? 3 : 1;
    for (int kind = 1; kind <= 2; kind++) {
        if (!(kinds & kind))
            continue;
        int raw = kind == 2;
        for (int wi = 0; wi < o.workers.len; wi++) {
            weft_config cfg;
            weft_config_default(&cfg);
            cfg.workers = (int)o.workers.v[wi];
            int rc = weft_init(&cfg);
            if (rc != 0)
                bench_die("weft_init", rc);
            for (int i = 0; i < 64; i++)
                weft_blocking(noop, NULL);
            weft_thread *t[64];
            for (int i = 0; i < 64; i++)
                if ((rc = weft_spawn(&t[i], blocked, NULL, NULL)) != 0)
                    bench_die("weft_spawn", rc);
            for (int i = 0; i < 64; i++)
                weft_join(t[i], NULL);
            weft_sleep_ns(200000000); /* let workers reach their sleep */
            double c0 = cpu_s();
            uint64_t t0 = bench_now_ns();
            if (raw) {
                struct timespec ts = { (time_t)secs, 0 };
                while (nanosleep(&ts, &ts) != 0)
                    ; /* EINTR: a preemption signal (signal(7)); sleep the rest */
            } else {
                weft_sleep_ns((uint64_t)secs * 1000000000u);
            }
            double used = cpu_s() - c0;
            double wall = (double)(bench_now_ns() - t0) * 1e-9;
            double pct = 100.0 * used / wall;
            weft_stats st;
            weft_stats_get(&st);
            printf("RESULT bench=idle impl=%s workers=%ld param=%lds cpu_pct=%.4f handoffs=%llu "
                   "commit=%s\n",
                   raw ? "weft-raw" : "weft", o.workers.v[wi], secs, pct,
                   (unsigned long long)st.io_handoffs, BENCH_COMMIT);
            printf("  idle runtime%s, %ld workers (+ spare kernel threads after %llu hand-offs): "
                   "%.4f%% of a core over %.1f s\n",
                   raw ? " (initial thread in a raw nanosleep)" : "", o.workers.v[wi],
                   (unsigned long long)st.io_handoffs, pct, wall);
            rc = weft_finalize();
            if (rc != 0)
                bench_die("weft_finalize", rc);
        }
    }
    return 0;
}
