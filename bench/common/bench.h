/* bench.h: the harness every benchmark program shares: options, clock, statistics and the RESULT line.
 *
 * Header-only so that the C micro benchmarks and the C++ peer baselines (TBB,
 * Boost.Fiber) use the same code without a library of their own. Include it
 * first: it asks for _GNU_SOURCE (CPU affinity) before any system header.
 *
 * Options every program accepts (each uses the ones that make sense for it):
 *   -n LIST   size: iterations per run (create_join), yields per thread
 *             (yield), the argument of fib (fib); comma-separated list
 *   -r R      repetitions per result (default 5; the median is reported)
 *   -w LIST   workers / kernel threads, 0 = all CPUs (default "1,0")
 *   -k LIST   user threads (yield; default "2,100")
 *   -p POL    weft spawn policy: work-first | help-first | both
 *   -i IMPL   which implementation(s) a program with several runs: all | NAME
 *   --callgrind  one repetition, first worker count only, no human lines: for
 *             bench/scripts/instr.py, which takes the difference of the
 *             instruction totals of two sizes (the fixed warm-up cancels out)
 *
 * Output: one machine-readable line per result
 *   RESULT bench=B impl=I workers=W param=P median_ns=X min_ns=X max_ns=X runs=R commit=C
 * where the *_ns values are per operation (create_join, yield) or per whole
 * computation (fib) and C is the commit the program was built from
 * (BENCH_COMMIT), followed by a short human line starting with "  ".
 * Programs that print RESULT lines of their own end them with commit= too.
 */
#ifndef WEFT_BENCH_H
#define WEFT_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The commit of the build (short hash, "+dirty" when tracked files differ):
 * bench_commit.h is written at every build by bench/scripts/commit.cmake
 * (bench/CMakeLists.txt); a program compiled outside that build says
 * "unknown". */
#if defined(__has_include)
#if __has_include("bench_commit.h")
#include "bench_commit.h"
#endif
#endif
#ifndef BENCH_COMMIT
#define BENCH_COMMIT "unknown"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_MAX_LIST 16
#define BENCH_MAX_RUNS 1000
#define BENCH_NOINLINE __attribute__((noinline))

/* Keeps the compiler from deleting work whose result is otherwise unused. */
#define BENCH_SINK(x) __asm__ __volatile__("" : : "g"(x) : "memory")

typedef struct bench_list {
    long v[BENCH_MAX_LIST];
    int len;
} bench_list;

typedef struct bench_opts {
    bench_list n;       /* -n; empty = the program's default */
    bench_list workers; /* -w; 0 already replaced by the CPU count */
    int workers_given;  /* -w was on the command line */
    bench_list threads; /* -k */
    int threads_given;  /* -k was on the command line */
    int reps;           /* -r */
    const char *policy; /* -p: "work-first", "help-first" or "both" */
    const char *impl;   /* -i: "all" or one implementation name */
    int callgrind;      /* --callgrind */
} bench_opts;

typedef struct bench_stats {
    double median, min, max;
    int runs;
} bench_stats;

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPUs in the affinity mask of the calling thread: what "all workers" means. */
static inline int bench_ncpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Pins the calling thread (and threads it creates later) to one CPU of its
 * current mask, saving the old mask in *old. Returns 0 or an errno value. */
static inline int bench_pin_one_cpu(cpu_set_t *old)
{
    if (sched_getaffinity(0, sizeof *old, old) != 0)
        return errno;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, old)) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            return sched_setaffinity(0, sizeof one, &one) == 0 ? 0 : errno;
        }
    }
    return EINVAL;
}

static inline void bench_unpin(const cpu_set_t *old)
{
    (void)sched_setaffinity(0, sizeof *old, old);
}

static inline void bench_die(const char *what, int err)
{
    fprintf(stderr, "bench: %s: %s\n", what, strerror(err));
    exit(1);
}

/* Dies as bench_die does where rc, what a call returned, is an error. */
static inline void bench_ok(int rc, const char *what)
{
    if (rc != 0)
        bench_die(what, rc);
}

static inline int bench_parse_list(const char *s, bench_list *out)
{
    out->len = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno != 0 || v < 0 || out->len == BENCH_MAX_LIST)
            return -1;
        out->v[out->len++] = v;
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        s = end;
    }
    return out->len > 0 ? 0 : -1;
}

static inline void bench_usage(const char *prog, const char *extra)
{
    fprintf(stderr,
            "usage: %s [-n LIST] [-r REPS] [-w LIST] [-k LIST] [-p POLICY] [-i IMPL] "
            "[--callgrind]\n"
            "  -n size (iterations, yields per thread or fib argument)  -r repetitions (>= 1, "
            "default 5)\n"
            "  -w workers, 0 = all CPUs (default 1,0)  -k user threads for yield (default 2,100)\n"
            "  -p work-first|help-first|both  -i all|<impl>  --callgrind: 1 run, first -w only\n%s",
            prog, extra ? extra : "");
}

/* Parses argv into *o, exiting with a usage message on a bad option. */
static inline void bench_parse(int argc, char **argv, bench_opts *o, const char *extra_usage)
{
    static const struct option longs[] = {
        { "callgrind", no_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    memset(o, 0, sizeof *o);
    o->reps = 5;
    o->policy = "work-first";
    o->impl = "all";
    int c, bad = 0;
    while ((c = getopt_long(argc, argv, "n:r:w:k:p:i:h", longs, NULL)) != -1) {
        switch (c) {
        case 'n': bad |= bench_parse_list(optarg, &o->n); break;
        case 'w':
            bad |= bench_parse_list(optarg, &o->workers);
            o->workers_given = 1;
            break;
        case 'k':
            bad |= bench_parse_list(optarg, &o->threads);
            o->threads_given = 1;
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end != '\0' || v < 1 || v > BENCH_MAX_RUNS)
                bad = 1;
            o->reps = (int)v;
            break;
        }
        case 'p':
            o->policy = optarg;
            if (strcmp(optarg, "work-first") && strcmp(optarg, "help-first") &&
                strcmp(optarg, "both"))
                bad = 1;
            break;
        case 'i': o->impl = optarg; break;
        case 'C': o->callgrind = 1; break;
        case 'h': bench_usage(argv[0], extra_usage); exit(0);
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc) {
        bench_usage(argv[0], extra_usage);
        exit(2);
    }
    if (o->workers.len == 0) {
        o->workers.v[0] = 1;
        o->workers.v[1] = 0;
        o->workers.len = 2;
    }
    if (o->threads.len == 0) {
        o->threads.v[0] = 2;
        o->threads.v[1] = 100;
        o->threads.len = 2;
    }
    /* "all" = the CPU count; drop a repeat such as 1,all on a 1-CPU machine. */
    int ncpu = bench_ncpus(), len = 0;
    for (int i = 0; i < o->workers.len; i++) {
        long w = o->workers.v[i] == 0 ? ncpu : o->workers.v[i];
        int dup = 0;
        for (int j = 0; j < len; j++)
            dup |= o->workers.v[j] == w;
        if (!dup)
            o->workers.v[len++] = w;
    }
    o->workers.len = len;
    if (o->callgrind) {
        o->reps = 1;
        o->workers.len = 1;
    }
}

/* True when implementation name runs under -i. */
static inline int bench_wants(const bench_opts *o, const char *name)
{
    return strcmp(o->impl, "all") == 0 || strcmp(o->impl, name) == 0;
}

static inline long bench_size(const bench_opts *o, long dflt)
{
    return o->n.len > 0 ? o->n.v[0] : dflt;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline bench_stats bench_summarize(const double *samples, int runs)
{
    double tmp[BENCH_MAX_RUNS];
    bench_stats s;
    memcpy(tmp, samples, (size_t)runs * sizeof *tmp);
    qsort(tmp, (size_t)runs, sizeof *tmp, bench_cmp_double);
    s.runs = runs;
    s.min = tmp[0];
    s.max = tmp[runs - 1];
    s.median = runs % 2 ? tmp[runs / 2] : (tmp[runs / 2 - 1] + tmp[runs / 2]) / 2;
    return s;
}

/* Prints the RESULT line and the human line for one result; unit names what
 * one sample measures ("ns/op", "ns/yield", "ns"). Returns the statistics. */
static inline bench_stats bench_report(const bench_opts *o, const char *bench, const char *impl,
                                       long workers, const char *param, const double *samples,
                                       int runs, const char *unit)
{
    bench_stats s = bench_summarize(samples, runs);
    printf("RESULT bench=%s impl=%s workers=%ld param=%s median_ns=%.1f min_ns=%.1f max_ns=%.1f "
           "runs=%d "
           "commit=%s\n",
           bench, impl, workers, param, s.median, s.min, s.max, s.runs, BENCH_COMMIT);
    if (!o->callgrind) {
        if (s.median >= 1e6)
            printf("  %-16s %-10s workers=%-3ld %-6s %12.3f ms  (min %.3f, max %.3f, %d runs)\n",
                   bench, impl, workers, param, s.median / 1e6, s.min / 1e6, s.max / 1e6, s.runs);
        else
            printf("  %-16s %-10s workers=%-3ld %-6s %12.1f %s  (min %.1f, max %.1f, %d runs)\n",
                   bench, impl, workers, param, s.median, unit, s.min, s.max, s.runs);
    }
    fflush(stdout);
    return s;
}

/* Serial fib, the Ts of every fib benchmark written in C or C++. The volatile
 * argument keeps the compiler from computing the answer at compile time. */
static __attribute__((noinline, unused)) long bench_fib_serial(long n)
{
    return n < 2 ? n : bench_fib_serial(n - 1) + bench_fib_serial(n - 2);
}

static inline long bench_fib_expected(long n)
{
    long a = 0, b = 1;
    for (long i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* Times bench_fib_serial(n) reps times and reports it as bench=fib_serial. */
static inline bench_stats bench_fib_serial_report(const bench_opts *o, const char *impl, long n)
{
    double samples[BENCH_MAX_RUNS];
    volatile long arg = n;
    char param[32];
    BENCH_SINK(bench_fib_serial(arg < 20 ? arg : 20)); /* warm-up */
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        long v = bench_fib_serial(arg);
        uint64_t t1 = bench_now_ns();
        if (v != bench_fib_expected(n)) {
            fprintf(stderr, "bench: serial fib(%ld) = %ld, wrong\n", n, v);
            exit(1);
        }
        samples[r] = (double)(t1 - t0);
    }
    snprintf(param, sizeof param, "%ld", n);
    return bench_report(o, "fib_serial", impl, 1, param, samples, o->reps, "ns");
}

/* The human summary of one fib size: T1/Ts and the speedup on p workers. */
static inline void bench_fib_summary(const char *impl, long n, double ts, double t1, long p,
                                     double tp)
{
    printf("  fib(%ld) %s: T1/Ts = %.2f, speedup T1/T%ld = %.2f, Ts/T%ld = %.2f\n", n, impl,
           t1 / ts, p, t1 / tp, p, ts / tp);
    fflush(stdout);
}

/* A program's own default for a list the command line left out (given: it
 * did not); n values from v. */
static inline void bench_default_list(bench_list *l, int given, const long *v, int n)
{
    if (given)
        return;
    for (int i = 0; i < n; i++)
        l->v[i] = v[i];
    l->len = n;
}

/* Sets -n to n when the command line gave none. */
static inline void bench_default_n(bench_opts *o, long n)
{
    bench_default_list(&o->n, o->n.len > 0, &n, 1);
}

/* One fib implementation at size n: run(o, n, w, arg) returns its median
 * ns on w workers, for every -w; then the summary against the serial time
 * ts (when ts, 1 worker and a timed run are all there). */
typedef double (*bench_fib_run_fn)(const bench_opts *o, long n, long w, int arg);

static inline void bench_fib_sweep(const bench_opts *o, const char *impl, long n, double ts,
                                   bench_fib_run_fn run, int arg)
{
    double t1 = 0, tp = 0;
    long p = 1;
    for (int wi = 0; wi < o->workers.len; wi++) {
        double t = run(o, n, o->workers.v[wi], arg);
        if (o->workers.v[wi] == 1)
            t1 = t;
        if (o->workers.v[wi] >= p) {
            p = o->workers.v[wi];
            tp = t;
        }
    }
    if (ts > 0 && t1 > 0 && tp > 0 && !o->callgrind)
        bench_fib_summary(impl, n, ts, t1, p, tp);
}

/* Times fn(n) reps times into samples, after one warm-up call
 * fn(min(n, warm)); returns whether any result was wrong. A task-parallel
 * baseline calls it inside its runtime's parallel region. */
static inline int bench_fib_time(const bench_opts *o, long (*fn)(long), long n, long warm,
                                 double *samples)
{
    int bad = 0;
    BENCH_SINK(fn(n < warm ? n : warm));
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        long v = fn(n);
        samples[r] = (double)(bench_now_ns() - t0);
        bad |= v != bench_fib_expected(n);
    }
    return bad;
}

/* The end of one parallel fib run of impl on w workers: dies if a result
 * was wrong (bad), else reports the samples as bench=fib, param n, and
 * returns their median. */
static inline double bench_fib_report(const bench_opts *o, const char *impl, long w, long n,
                                      const double *samples, int bad)
{
    char param[32];
    if (bad) {
        fprintf(stderr, "bench: %s fib(%ld) wrong\n", impl, n);
        exit(1);
    }
    snprintf(param, sizeof param, "%ld", n);
    return bench_report(o, "fib", impl, w, param, samples, o->reps, "ns").median;
}

/* For every -n: the serial time, then bench_fib_sweep of run against it. */
static inline void bench_fib_sweeps(const bench_opts *o, const char *impl, bench_fib_run_fn run,
                                    int arg)
{
    for (int ni = 0; ni < o->n.len; ni++)
        bench_fib_sweep(o, impl, o->n.v[ni], bench_fib_serial_report(o, impl, o->n.v[ni]).median,
                        run, arg);
}

/* Times loop(n) reps times into samples, in ns per iteration. */
static inline void bench_time_per_op(const bench_opts *o, void (*loop)(long n), long n,
                                     double *samples)
{
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        loop(n);
        samples[r] = (double)(bench_now_ns() - t0) / (double)n;
    }
}

/* The create+join baselines: for every -w, run(o, w, n, samples) fills
 * samples with ns per create+join over n iterations (-n, default 100000),
 * reported as bench=create_join param=empty. */
typedef void (*bench_cj_run_fn)(const bench_opts *o, long w, long n, double *samples);

static inline void bench_cj_sweep(const bench_opts *o, const char *impl, bench_cj_run_fn run)
{
    long n = bench_size(o, 100000);
    if (n < 1)
        n = 1;
    for (int wi = 0; wi < o->workers.len; wi++) {
        double samples[BENCH_MAX_RUNS];
        long w = o->workers.v[wi];
        run(o, w, n, samples);
        bench_report(o, "create_join", impl, w, "empty", samples, o->reps, "ns/op");
    }
}

/* The main of a fib baseline with no options of its own: -n defaults to
 * dflt_n, and every -n is swept (bench_fib_sweeps). */
static inline int bench_fib_main(int argc, char **argv, const char *usage, long dflt_n,
                                 const char *impl, bench_fib_run_fn run)
{
    bench_opts o;
    bench_parse(argc, argv, &o, usage);
    bench_default_n(&o, dflt_n);
    bench_fib_sweeps(&o, impl, run, 0);
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* WEFT_BENCH_H */
