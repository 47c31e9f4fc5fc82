/* trace.c: what WEFT_TRACE costs: fib(n) with one weft_spawn per call,
 * untraced and traced, alternating in one run.
 *
 * Each repetition runs an untraced and a traced runtime (weft_init with and
 * without WEFT_TRACE, in turn first), so a machine whose load drifts slows
 * both alike. The traced runs write their file to a temporary folder (the
 * conversion at weft_finalize is outside the timed part) and count their
 * events from weft_finalize's notice. Reports the medians, the ratio of the
 * medians and the nanoseconds per event: (traced - untraced) / events, of
 * the wall-clock time and of the process's CPU time (which leaves out the
 * time other processes took the CPU: steadier on a loaded machine, and on
 * one worker nearly all of it is the worker's).
 *
 *   bench_trace [-n LIST] [-r REPS] [-w LIST] [-i all|untraced|traced] [--callgrind]
 * Default -n 30 -r 11 -w 1,0. --callgrind runs one kind (-i) once and prints
 * its events: bench/scripts/instr.py gives instructions per spawn of each,
 * and their difference over the events per spawn is instructions per event.
 */
#include "bench.h"
#include "bench_weft.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "weft.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif

#define NOTICE_MAX 4096 /* weft_finalize's stderr while tracing */

static char trace_dir[64];

/* weft_finalize with stderr going to a file; returns the event count of
 * the trace notice (0 for an untraced runtime) and passes other lines on. */
static unsigned long long finalize_counting(void)
{
    char path[128], buf[NOTICE_MAX];
    snprintf(path, sizeof path, "%s/notice", trace_dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (saved < 0 || fd < 0)
        bench_die("open", errno);
    dup2(fd, 2);
    /* The conversion's cost grows with the digits of the time stamps:
     * callgrind leaves it out, so instr.py's difference is the recording. */
    CALLGRIND_TOGGLE_COLLECT;
    int rc = weft_finalize();
    CALLGRIND_TOGGLE_COLLECT;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (rc != 0)
        bench_die("weft_finalize", rc);
    ssize_t len = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    buf[len > 0 ? len : 0] = '\0';
    unsigned long long events = 0, dropped = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *t = strstr(line, "trace: ");
        char *p = t ? strstr(t, ".json: ") : NULL;
        if (p && sscanf(p, ".json: %llu events, %llu dropped", &events, &dropped) == 2)
            continue;
        fprintf(stderr, "%s\n", line);
    }
    return events;
}

static uint64_t cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One runtime on workers workers, traced or not: the time of fib(n) in ns,
 * *cpu the process's CPU time meanwhile and *events the events traced
 * (warm-up included). */
static double run_once(long n, long workers, int traced, double *cpu, unsigned long long *events)
{
    char path[128];
    snprintf(path, sizeof path, "%s/fib.json", trace_dir);
    if (traced)
        setenv("WEFT_TRACE", path, 1);
    else
        unsetenv("WEFT_TRACE");
    bench_weft_init(workers, WEFT_WORK_FIRST);
    unsetenv("WEFT_TRACE");
    BENCH_SINK(bench_weft_fib((void *)(intptr_t)(n < 15 ? n : 15))); /* warm-up */
    uint64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
    long v = (long)(intptr_t)bench_weft_fib((void *)(intptr_t)n);
    uint64_t t1 = bench_now_ns(), c1 = cpu_now_ns();
    *cpu = (double)(c1 - c0);
    if (v != bench_fib_expected(n)) {
        fprintf(stderr, "bench: fib(%ld) = %ld, expected %ld\n", n, v, bench_fib_expected(n));
        exit(1);
    }
    *events = finalize_counting();
    unlink(path);
    return (double)(t1 - t0);
}

/* The ratio and the cost per event of traced against plain medians. */
static void report_cost(const char *clock, long n, long workers, const char *param, double plain,
                        double traced, double events)
{
    printf("RESULT bench=trace_cost impl=weft workers=%ld param=%s clock=%s ratio=%.3f "
           "ns_per_event=%.2f events=%.0f commit=%s\n",
           workers, param, clock, traced / plain, (traced - plain) / events, events, BENCH_COMMIT);
    printf("  fib(%ld) on %ld workers, %-4s time: traced/untraced %.3f, %.2f ns per event "
           "(%.0f events, %.2f per spawn)\n",
           n, workers, clock, traced / plain, (traced - plain) / events, events,
           events / (double)(bench_fib_expected(n + 1) - 1));
}

static void run(const bench_opts *o, long n, long workers)
{
    double plain[BENCH_MAX_RUNS], traced[BENCH_MAX_RUNS], ev[BENCH_MAX_RUNS];
    double plain_cpu[BENCH_MAX_RUNS], traced_cpu[BENCH_MAX_RUNS];
    int want_plain = bench_wants(o, "untraced"), want_traced = bench_wants(o, "traced");
    char param[32];
    snprintf(param, sizeof param, "%ld", n);
    for (int r = 0; r < o->reps; r++) {
        unsigned long long events;
        for (int k = 0; k < 2; k++) {
            int tr = (k + r) % 2; /* the first of each pair alternates */
            if (tr && want_traced) {
                traced[r] = run_once(n, workers, 1, &traced_cpu[r], &events);
                ev[r] = (double)events;
            } else if (!tr && want_plain) {
                plain[r] = run_once(n, workers, 0, &plain_cpu[r], &events);
            }
        }
    }
    bench_stats sp = { 0 }, st = { 0 }, cp = { 0 }, ct = { 0 };
    if (want_plain) {
        sp = bench_report(o, "trace_fib", "untraced", workers, param, plain, o->reps, "ns");
        cp = bench_report(o, "trace_fib_cpu", "untraced", workers, param, plain_cpu, o->reps, "ns");
    }
    if (!want_traced)
        return;
    st = bench_report(o, "trace_fib", "traced", workers, param, traced, o->reps, "ns");
    ct = bench_report(o, "trace_fib_cpu", "traced", workers, param, traced_cpu, o->reps, "ns");
    double events = bench_summarize(ev, o->reps).median;
    printf("RESULT bench=trace_events impl=traced workers=%ld param=%s events=%.0f commit=%s\n",
           workers, param, events, BENCH_COMMIT);
    if (want_plain && events > 0) {
        report_cost("wall", n, workers, param, sp.median, st.median, events);
        report_cost("cpu", n, workers, param, cp.median, ct.median, events);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -i all|untraced|traced (default all); default -n 30 -r 11 -w 1,0\n");
    bench_default_n(&o, 30);
    int reps_given = 0;
    for (int i = 1; i < argc; i++)
        reps_given |= strncmp(argv[i], "-r", 2) == 0;
    if (!o.callgrind && !reps_given) /* more pairs than bench.h's default */
        o.reps = 11;
    snprintf(trace_dir, sizeof trace_dir, "/tmp/weft-bench-trace-XXXXXX");
    if (!mkdtemp(trace_dir))
        bench_die("mkdtemp", errno);
    for (int ni = 0; ni < o.n.len; ni++)
        for (int wi = 0; wi < o.workers.len; wi++)
            run(&o, o.n.v[ni], o.workers.v[wi]);
    rmdir(trace_dir);
    return 0;
}
