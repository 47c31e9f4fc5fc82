/* fib_group.c: fib(n) with a weft_group per call against fib(n) with weft_join: what a group costs over the joins it replaces.
 *
 * Every call with n >= 2 spawns fib(n-1) and computes fib(n-2) itself, then
 * waits: impl=join joins the child (bench_weft_fib); impl=group spawns it
 * into a group on the caller's stack, with an argument in the caller's
 * frame that holds n and then the child's result, and waits for the
 * group; impl=group-copy passes {n, result pointer} by value
 * (weft_group_spawn with arg_size, a copy on the child's stack). A member
 * needs a function of its own that stores the result, where a joined
 * thread returns it. Each variant is compiled as gcc -O3 sees fit (it
 * inlines each recursion into itself to a depth of its own), as a user's
 * would be. Same runtime, same run, interleaved repetitions, so the ratio
 * group/join is measured under the same conditions.
 *
 *   bench_fib_group [-n LIST] [-r REPS] [-w LIST] [-p work-first|help-first] [-i all|join|group|group-copy]
 * Default -n 30, -w 1.
 *
 * Instructions per spawn, the figure that load does not blur: callgrind
 * totals of `-i IMPL -n 24 --callgrind` less those of `-n 20` (from n = 20
 * up the warm-up is the same), divided by the spawns in between,
 * fib(25) - fib(21) = 64,079.
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"

/* impl=group: a member's argument, n in and fib(n) out, in the spawning
 * frame. impl=group-copy: {n, where the result goes}, copied to the
 * member's stack. */
struct fib_arg {
    long n;
    long result;
};
struct fib_copy {
    long n;
    long *result;
};

static long fib_group(long n);
static long fib_group_copy(long n);

static void *member(void *arg)
{
    struct fib_arg *p = arg;
    p->result = fib_group(p->n);
    return NULL;
}

static void *member_copy(void *arg)
{
    const struct fib_copy *p = arg;
    *p->result = fib_group_copy(p->n);
    return NULL;
}

/* fib(n) as bench_weft_fib computes it, with a group in place of the
 * join, in the form a user writes: fib(n-2) by value, fib(n-1) through
 * the member's argument. */
static long fib_group(long n)
{
    if (n < 2)
        return n;
    weft_group g = WEFT_GROUP_INIT;
    struct fib_arg a = { n - 1, 0 };
    int rc = weft_group_spawn(&g, member, &a, 0, NULL);
    bench_ok(rc, "weft_group_spawn");
    long b = fib_group(n - 2);
    rc = weft_group_wait(&g);
    bench_ok(rc, "weft_group_wait");
    return a.result + b;
}

static long fib_group_copy(long n)
{
    if (n < 2)
        return n;
    weft_group g = WEFT_GROUP_INIT;
    long a;
    struct fib_copy c = { n - 1, &a };
    int rc = weft_group_spawn(&g, member_copy, &c, sizeof c, NULL);
    bench_ok(rc, "weft_group_spawn");
    long b = fib_group_copy(n - 2);
    rc = weft_group_wait(&g);
    bench_ok(rc, "weft_group_wait");
    return a + b;
}

enum { IMPL_JOIN, IMPL_GROUP, IMPL_COPY, NIMPL };
static const char *const impl_names[NIMPL] = { "join", "group", "group-copy" };

/* fib(n) on the calling user thread, one way. */
static long fib_run(int impl, long n)
{
    if (impl == IMPL_JOIN)
        return (long)(intptr_t)bench_weft_fib((void *)(intptr_t)n);
    return impl == IMPL_GROUP ? fib_group(n) : fib_group_copy(n);
}

/* The root runs as a user thread other than main, as in real code (main
 * spawns help-first on several workers; see threads_spawn_main). */
struct root {
    int impl;
    long n;
    long result;
};

static void *root_fn(void *arg)
{
    struct root *r = arg;
    r->result = fib_run(r->impl, r->n);
    return NULL;
}

static long fib_timed(int impl, long n, double *ns)
{
    struct root r = { impl, n, -1 };
    weft_thread *t;
    uint64_t t0 = bench_now_ns();
    int rc = weft_spawn(&t, root_fn, &r, NULL);
    if (rc == 0)
        rc = weft_join(t, NULL);
    *ns = (double)(bench_now_ns() - t0);
    bench_ok(rc, "root");
    return r.result;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -i all|join|group|group-copy (default all); default -n 30, -w 1\n");
    bench_default_n(&o, 30);
    if (!o.workers_given) {
        o.workers.v[0] = 1;
        o.workers.len = 1;
    }
    int policy = strcmp(o.policy, "help-first") == 0 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
    for (int ni = 0; ni < o.n.len; ni++) {
        long n = o.n.v[ni];
        char param[32];
        snprintf(param, sizeof param, "%ld", n);
        for (int wi = 0; wi < o.workers.len; wi++) {
            long workers = o.workers.v[wi];
            bench_weft_init(workers, policy);
            static double samples[NIMPL][BENCH_MAX_RUNS];
            double warm;
            for (int i = 0; i < NIMPL; i++)
                fib_timed(i, n < 20 ? n : 20, &warm);
            for (int r = 0; r < o.reps; r++) {
                for (int i = 0; i < NIMPL; i++) {
                    if (!bench_wants(&o, impl_names[i]))
                        continue;
                    long v = fib_timed(i, n, &samples[i][r]);
                    if (v != bench_fib_expected(n)) {
                        fprintf(stderr, "bench: %s fib(%ld) = %ld\n", impl_names[i], n, v);
                        exit(1);
                    }
                }
            }
            int rc = weft_finalize();
            bench_ok(rc, "weft_finalize");
            double med[NIMPL] = { 0 };
            for (int i = 0; i < NIMPL; i++)
                if (bench_wants(&o, impl_names[i]))
                    med[i] = bench_report(&o, "fib_group", impl_names[i], workers, param,
                                          samples[i], o.reps, "ns")
                                 .median;
            if (med[IMPL_JOIN] > 0 && !o.callgrind) {
                /* paired: the median of each repetition's own ratio, its
                 * runs side by side, which a loaded machine blurs less
                 * than the ratio of medians */
                for (int i = IMPL_GROUP; i < NIMPL; i++) {
                    if (med[i] <= 0)
                        continue;
                    double ratio[BENCH_MAX_RUNS];
                    for (int r = 0; r < o.reps; r++)
                        ratio[r] = samples[i][r] / samples[IMPL_JOIN][r];
                    printf("  fib(%ld) %ld workers: %s / join = %.3f (paired %.3f)\n", n, workers,
                           impl_names[i], med[i] / med[IMPL_JOIN],
                           bench_summarize(ratio, o.reps).median);
                }
            }
        }
    }
    return 0;
}
