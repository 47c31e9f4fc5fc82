/* fib.c: fib(n) with one weft_spawn per call, on 1 and on all workers, against serial fib: T1/Ts and speedup.
 *
 * bench_weft_fib(n) spawns a thread for fib(n-1), computes fib(n-2) itself (the same
 * parallel function, on the same thread) and joins; every call with n >= 2
 * spawns once, fib(n+1)-1 spawns in all. Ts is bench_fib_serial in the same
 * run; T1 the weft time on one worker; Tp the time on p workers.
 *
 *   bench_fib [-n LIST] [-r REPS] [-w LIST] [-p work-first|help-first|both] [-i all|weft|serial]
 * Default -n 30. Results name the help-first runs impl=weft-hf.
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"

/* Median time of fib(n) on workers workers; reports it and returns the median. */
static double run(const bench_opts *o, long n, long workers, int policy)
{
    double samples[BENCH_MAX_RUNS];
    char param[32];
    bench_weft_init(workers, policy);
    BENCH_SINK(bench_weft_fib((void *)(intptr_t)(n < 15 ? n : 15))); /* warm-up */
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        long v = (long)(intptr_t)bench_weft_fib((void *)(intptr_t)n);
        samples[r] = (double)(bench_now_ns() - t0);
        if (v != bench_fib_expected(n)) {
            fprintf(stderr, "bench: weft fib(%ld) = %ld, expected %ld\n", n, v,
                    bench_fib_expected(n));
            exit(1);
        }
    }
    int rc = weft_finalize();
    if (rc != 0)
        bench_die("weft_finalize", rc);
    snprintf(param, sizeof param, "%ld", n);
    return bench_report(o, "fib", policy == WEFT_HELP_FIRST ? "weft-hf" : "weft", workers, param,
                        samples, o->reps, "ns")
        .median;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  -i all|weft|serial (default all); default -n 30\n");
    bench_default_n(&o, 30);
    int policies[2], np = 0;
    if (strcmp(o.policy, "help-first") != 0)
        policies[np++] = WEFT_WORK_FIRST;
    if (strcmp(o.policy, "work-first") != 0)
        policies[np++] = WEFT_HELP_FIRST;
    for (int ni = 0; ni < o.n.len; ni++) {
        long n = o.n.v[ni];
        double ts = 0;
        if (bench_wants(&o, "serial"))
            ts = bench_fib_serial_report(&o, "weft", n).median;
        if (!bench_wants(&o, "weft"))
            continue;
        for (int pi = 0; pi < np; pi++)
            bench_fib_sweep(&o, policies[pi] == WEFT_HELP_FIRST ? "weft-hf" : "weft", n, ts, run,
                            policies[pi]);
    }
    return 0;
}
