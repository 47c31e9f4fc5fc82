/* uts.c: Unbalanced Tree Search with a weft thread per node, against serial recursion and OpenMP tasks.
 *
 * The tree (uts_tree.h) is implicit: a node's children are computed from its
 * SHA-1 digest, one digest per child. Every version visits every node and
 * returns the number of nodes; each run is checked against the known count
 * of UTS's sample trees (T1-T4) or, for other trees, against the first run.
 *   serial  depth-first recursion, one child's node on the stack at a time
 *   weft    a node with k children computes their k nodes into an array on
 *           its stack, weft_spawn's a thread for each, then joins them in
 *           order, summing their counts (the root is a spawned thread too)
 *   weft-group  a thread per node too, with a group per node: each child a
 *           member spawned with a copy of its node, one wait for them all
 *           (members give their stacks back as they finish)
 *   openmp  the same with one `omp task` per child and a taskwait (built
 *           when the compiler has OpenMP; it runs last so that libgomp's
 *           spinning threads do not share the CPUs with weft's workers)
 *
 *   bench_uts [-t TYPE] [-a SHAPE] [-d GEN_MX] [-b B0] [-s ROOT_SEED]
 *             [-q Q] [-m M] [-f SHIFT] [--tree T1|T2|T3|T4]
 *             [-r REPS] [-w LIST] [-p work-first|help-first|both]
 *             [-i all|serial|weft|weft-group|openmp] [--stack BYTES] [--callgrind]
 * The tree options are UTS's, but UTS's -r (root seed) is -s here: -r is the
 * repetitions, as in every weft benchmark. Default: T1 (-t 1 -a 3 -d 10 -b 4
 * -s 19), 4,130,071 nodes. Times are per whole search (median_ns); the human
 * lines add ns and CPU ns per node and the ratios T1/Ts and T1/Tp; on one
 * worker each weft repetition follows a serial one, and the line gives the
 * median of the pairs' ratios (wall and CPU time). The root
 * thread gets a stack that fits its arrays (T3's root has 2,000 children);
 * --stack gives every spawn a weft_attr with that stack size.
 */
#include "bench.h"
#include "bench_weft.h"

#include "uts_tree.h"
#include "weft.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* UTS's defaults for the options a tree's type does not use. */
#define UTS_DEFAULT_Q     (15.0 / 64.0)
#define UTS_DEFAULT_M     4
#define UTS_DEFAULT_SHIFT 0.5
/* The warm-up tree: T1's shape cut at depth 5 (3,987 nodes). */
#define WARM_GEN_MX 5

/* UTS's public sample trees and their node counts: every run of one of them
 * must find exactly that many nodes. */
static const struct {
    const char *name;
    uts_tree tree;
    long nodes;
} presets[] = {
    { "T1",
      { UTS_GEO, UTS_SHAPE_FIXED, 10, 4.0, 19, UTS_DEFAULT_Q, UTS_DEFAULT_M, UTS_DEFAULT_SHIFT },
      4130071L },
    { "T2",
      { UTS_GEO, UTS_SHAPE_CYCLIC, 16, 6.0, 502, UTS_DEFAULT_Q, UTS_DEFAULT_M, UTS_DEFAULT_SHIFT },
      4117769L },
    { "T3",
      { UTS_BIN, UTS_SHAPE_LINEAR, 6, 2000.0, 42, 0.124875, 8, UTS_DEFAULT_SHIFT },
      4112897L },
    { "T4",
      { UTS_HYBRID, UTS_SHAPE_LINEAR, 16, 6.0, 1, 0.234375, 4, UTS_DEFAULT_SHIFT },
      4132453L },
};
#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))
/* A root's frame holds a node and a handle per child (a binomial root may
 * have thousands); the rest of its stack is what any node needs. */
#define ROOT_STACK_BASE ((size_t)64 << 10)

/* The tree being searched; set before a run starts, read-only during it. */
static const uts_tree *g_tree;
/* Attributes of every weft spawn: NULL (the defaults) unless --stack asks
 * for a stack size per spawn, as a program with deep frames would. */
static const weft_attr *g_attr;

static long search_serial(const uts_node *n)
{
    int k = uts_num_children(g_tree, n);
    long count = 1;
    for (int i = 0; i < k; i++) {
        uts_node child;
        uts_child(n, i, &child);
        count += search_serial(&child);
    }
    return count;
}

static void *search_weft(void *arg)
{
    const uts_node *n = arg;
    int k = uts_num_children(g_tree, n);
    long count = 1;
    if (k > 0) {
        uts_node child[k];
        weft_thread *t[k];
        for (int i = 0; i < k; i++) {
            uts_child(n, i, &child[i]);
            int rc = weft_spawn(&t[i], search_weft, &child[i], g_attr);
            bench_ok(rc, "weft_spawn");
        }
        for (int i = 0; i < k; i++) {
            void *sub;
            int rc = weft_join(t[i], &sub);
            bench_ok(rc, "weft_join");
            count += (long)(intptr_t)sub;
        }
    }
    return (void *)(intptr_t)count;
}

/* A node for search_group, copied onto the member's stack by the spawn:
 * the member writes its subtree's count through out. */
struct group_arg {
    uts_node node;
    long *out;
};

/* The same search with a group per node: each child is a member spawned
 * with a copy of its node (weft_group_spawn with arg_size), so the parent
 * keeps no array of nodes or handles, and one wait replaces the joins, as
 * with OpenMP's taskwait. */
static void *search_group(void *arg)
{
    const struct group_arg *a = arg;
    int k = uts_num_children(g_tree, &a->node);
    long count = 1;
    if (k > 0) {
        long sub[k];
        weft_group g = WEFT_GROUP_INIT;
        for (int i = 0; i < k; i++) {
            struct group_arg c = { .out = &sub[i] };
            uts_child(&a->node, i, &c.node);
            int rc = weft_group_spawn(&g, search_group, &c, sizeof c, g_attr);
            bench_ok(rc, "weft_group_spawn");
        }
        int rc = weft_group_wait(&g);
        bench_ok(rc, "weft_group_wait");
        for (int i = 0; i < k; i++)
            count += sub[i];
    }
    *a->out = count;
    return NULL;
}

/* The root as a user thread of its own, as a program would start a search,
 * with a stack that fits its arrays of children; grouped: search_group's. */
static long search_weft_root(const uts_tree *tree, int grouped)
{
    uts_node root;
    weft_thread *t;
    void *count;
    g_tree = tree;
    uts_root(tree, &root);
    weft_attr attr = WEFT_ATTR_INIT;
    if (g_attr)
        attr = *g_attr;
    size_t need = ROOT_STACK_BASE + (size_t)uts_num_children(tree, &root) *
                                        (sizeof(uts_node) + sizeof(weft_thread *));
    if (need > (attr.stack_size ? attr.stack_size : ROOT_STACK_BASE))
        attr.stack_size = need;
    long nodes = 0;
    struct group_arg ga = { root, &nodes };
    int rc = grouped ? weft_spawn(&t, search_group, &ga, &attr)
                     : weft_spawn(&t, search_weft, &root, &attr);
    bench_ok(rc, "weft_spawn");
    rc = weft_join(t, &count);
    bench_ok(rc, "weft_join");
    return grouped ? nodes : (long)(intptr_t)count;
}

#ifdef _OPENMP
static long search_omp(const uts_node *n)
{
    int k = uts_num_children(g_tree, n);
    long count = 1;
    if (k > 0) {
        uts_node child[k];
        long sub[k];
        for (int i = 0; i < k; i++) {
            uts_child(n, i, &child[i]);
            const uts_node *c = &child[i];
            long *s = &sub[i];
#pragma omp task firstprivate(c, s)
            *s = search_omp(c);
        }
#pragma omp taskwait
        for (int i = 0; i < k; i++)
            count += sub[i];
    }
    return count;
}
#endif

/* CPU time of the whole process (all its kernel threads): on a loaded machine
 * the 1-worker ratios are read from it, wall time counting others' slices. */
static uint64_t cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct uts_run {
    const bench_opts *o;
    const uts_tree *tree;
    const uts_tree *warm;
    const char *param;
    long expect; /* the node count every run must give; 0 = take the first run's */
} uts_run;

static void check(uts_run *u, const char *impl, long workers, long nodes)
{
    if (u->expect == 0)
        u->expect = nodes;
    if (nodes != u->expect) {
        fprintf(stderr, "bench: uts %s on %ld workers: %ld nodes, expected %ld\n", impl, workers,
                nodes, u->expect);
        exit(1);
    }
}

static double report(uts_run *u, const char *impl, long workers, const double *samples,
                     const double *cpu, const char *extra)
{
    double med =
        bench_report(u->o, "uts", impl, workers, u->param, samples, u->o->reps, "ns").median;
    if (!u->o->callgrind)
        printf("  uts %s %s workers=%ld: %ld nodes, %.1f ns/node, CPU %.1f ns/node%s\n", u->param,
               impl, workers, u->expect, med / (double)u->expect,
               bench_summarize(cpu, u->o->reps).median / (double)u->expect, extra ? extra : "");
    return med;
}

static double run_serial(uts_run *u)
{
    double samples[BENCH_MAX_RUNS], cpu[BENCH_MAX_RUNS];
    uts_node root;
    g_tree = u->warm;
    uts_root(u->warm, &root);
    BENCH_SINK(search_serial(&root));
    g_tree = u->tree;
    uts_root(u->tree, &root);
    for (int r = 0; r < u->o->reps; r++) {
        uint64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
        long nodes = search_serial(&root);
        samples[r] = (double)(bench_now_ns() - t0);
        cpu[r] = (double)(cpu_now_ns() - c0);
        check(u, "serial", 1, nodes);
    }
    return report(u, "serial", 1, samples, cpu, NULL);
}

/* grouped: search_group instead of search_weft. paired: before each
 * repetition, one serial search in the same process, so that on a loaded
 * machine T1/Ts is read from pairs run side by side (the median of the
 * per-pair ratios, of wall and of CPU time) rather than from medians taken
 * minutes apart. */
static double run_weft(uts_run *u, long workers, int policy, int grouped, int paired)
{
    double samples[BENCH_MAX_RUNS], cpu[BENCH_MAX_RUNS], ratio[BENCH_MAX_RUNS],
        cpu_ratio[BENCH_MAX_RUNS];
    static const char *const names[2][2] = { { "weft", "weft-hf" },
                                             { "weft-group", "weft-group-hf" } };
    const char *impl = names[grouped][policy == WEFT_HELP_FIRST];
    bench_weft_init(workers, policy);
    BENCH_SINK(search_weft_root(u->warm, grouped));
    weft_stats s0, s1;
    if (weft_stats_get(&s0) != 0)
        memset(&s0, 0, sizeof s0);
    uts_node root;
    uts_root(u->tree, &root);
    for (int r = 0; r < u->o->reps; r++) {
        double ts = 0, cs = 0;
        if (paired) {
            g_tree = u->tree;
            uint64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
            check(u, "serial", 1, search_serial(&root));
            ts = (double)(bench_now_ns() - t0);
            cs = (double)(cpu_now_ns() - c0);
        }
        uint64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
        long nodes = search_weft_root(u->tree, grouped);
        samples[r] = (double)(bench_now_ns() - t0);
        cpu[r] = (double)(cpu_now_ns() - c0);
        ratio[r] = paired ? samples[r] / ts : 0;
        cpu_ratio[r] = paired ? cpu[r] / cs : 0;
        check(u, impl, workers, nodes);
    }
    if (weft_stats_get(&s1) != 0)
        s1 = s0;
    int rc = weft_finalize();
    bench_ok(rc, "weft_finalize");
    char extra[128];
    int n = snprintf(extra, sizeof extra, ", %.0f steals/run",
                     (double)(s1.steals - s0.steals) / u->o->reps);
    if (paired)
        snprintf(extra + n, sizeof extra - (size_t)n, ", T1/Ts paired = %.3f (CPU %.3f)",
                 bench_summarize(ratio, u->o->reps).median,
                 bench_summarize(cpu_ratio, u->o->reps).median);
    return report(u, impl, workers, samples, cpu, extra);
}

#ifdef _OPENMP
static double run_omp(uts_run *u, long workers)
{
    double samples[BENCH_MAX_RUNS], cpu[BENCH_MAX_RUNS];
    long nodes[BENCH_MAX_RUNS];
#pragma omp parallel num_threads(workers)
#pragma omp single
    {
        uts_node root;
        g_tree = u->warm;
        uts_root(u->warm, &root);
        BENCH_SINK(search_omp(&root));
        g_tree = u->tree;
        uts_root(u->tree, &root);
        for (int r = 0; r < u->o->reps; r++) {
            uint64_t c0 = cpu_now_ns(), t0 = bench_now_ns();
            nodes[r] = search_omp(&root);
            samples[r] = (double)(bench_now_ns() - t0);
            cpu[r] = (double)(cpu_now_ns() - c0);
        }
    }
    for (int r = 0; r < u->o->reps; r++)
        check(u, "openmp", workers, nodes[r]);
    return report(u, "openmp", workers, samples, cpu, NULL);
}
#endif

/* T1/Ts and the speedup on the most workers, for one implementation. */
static void summary(const uts_run *u, const char *impl, double ts, double t1, long p, double tp)
{
    if (u->o->callgrind || t1 <= 0 || (ts <= 0 && (p < 2 || tp <= 0)))
        return;
    printf("  uts %s %s:", u->param, impl);
    const char *sep = " ";
    if (ts > 0) {
        printf("%sT1/Ts = %.2f", sep, t1 / ts);
        sep = ", ";
    }
    if (p > 1 && tp > 0)
        printf("%sspeedup T1/T%ld = %.2f", sep, p, t1 / tp);
    if (ts > 0 && p > 1 && tp > 0)
        printf(", Ts/T%ld = %.2f", p, ts / tp);
    printf("\n");
    fflush(stdout);
}

static const char usage[] =
    "  tree (UTS's options; the root seed is -s): -t TYPE (0 binomial, 1 geometric, 2 hybrid,\n"
    "  3 balanced) -a SHAPE (0 linear, 1 expdec, 2 cyclic, 3 fixed) -d GEN_MX -b B0 -s SEED\n"
    "  -q Q -m M (binomial) -f SHIFT (hybrid); default T1: -t 1 -a 3 -d 10 -b 4 -s 19\n"
    "  --tree T1|T2|T3|T4: UTS's sample trees (later tree options change them)\n"
    "  -i all|serial|weft|weft-group|openmp (default all); -n is ignored\n"
    "  --stack BYTES: weft spawns with a weft_attr of that stack_size (64K, 1M, ...)\n";

/* "65536", "64K", "1M": bytes; 0 on a malformed size. */
static size_t parse_size(const char *v)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v)
        return 0;
    if (*end == 'K' || *end == 'k')
        n <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        n <<= 20, end++;
    return *end == '\0' ? n : 0;
}

/* Takes the tree options and --stack out of argv (the rest goes to
 * bench_parse). */
static int parse_tree(int *argc, char **argv, uts_tree *t)
{
    static weft_attr attr = WEFT_ATTR_INIT;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--tree") == 0) {
            int p = 0;
            while (i + 1 < *argc && p < NPRESETS && strcmp(argv[i + 1], presets[p].name) != 0)
                p++;
            if (p == NPRESETS)
                return -1;
            *t = presets[p].tree;
            i++;
            continue;
        }
        if (strcmp(a, "--stack") == 0) {
            if (i + 1 >= *argc || (attr.stack_size = parse_size(argv[++i])) == 0)
                return -1;
            g_attr = &attr;
            continue;
        }
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || !strchr("tadbsqmf", a[1])) {
            argv[out++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc)
            return -1;
        const char *v = argv[++i];
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (end == v || *end != '\0' || errno != 0)
            return -1;
        switch (a[1]) {
        case 't': t->type = (int)x; break;
        case 'a': t->shape = (int)x; break;
        case 'd': t->gen_mx = (int)x; break;
        case 'b': t->b0 = x; break;
        case 's': t->seed = (int)x; break;
        case 'q': t->q = x; break;
        case 'm': t->m = (int)x; break;
        case 'f': t->shift = x; break;
        }
    }
    *argc = out;
    argv[out] = NULL;
    if (t->type < UTS_BIN || t->type > UTS_BALANCED || t->shape < UTS_SHAPE_LINEAR ||
        t->shape > UTS_SHAPE_FIXED || t->gen_mx < 1 || t->b0 <= 0 || t->q < 0 || t->q > 1 ||
        t->m < 0 || t->shift < 0)
        return -1;
    return 0;
}

/* 1 when a and b are the same tree (the options their type uses agree). */
static int same_tree(const uts_tree *a, const uts_tree *b)
{
    if (a->type != b->type || a->b0 != b->b0 || a->seed != b->seed)
        return 0;
    int geo = a->type == UTS_GEO || a->type == UTS_HYBRID;
    int bin = a->type == UTS_BIN || a->type == UTS_HYBRID;
    if (a->type != UTS_BIN && a->gen_mx != b->gen_mx)
        return 0;
    if (geo && a->shape != b->shape)
        return 0;
    if (bin && (a->q != b->q || a->m != b->m))
        return 0;
    return a->type != UTS_HYBRID || a->shift == b->shift;
}

/* The tree as RESULT's param: a sample tree's name, or its type and
 * options. Returns the sample tree's node count, 0 for another tree. */
static long tree_name(const uts_tree *t, char *buf, size_t len)
{
    for (int p = 0; p < NPRESETS; p++) {
        if (same_tree(t, &presets[p].tree)) {
            snprintf(buf, len, "%s", presets[p].name);
            return presets[p].nodes;
        }
    }
    switch (t->type) {
    case UTS_BIN: snprintf(buf, len, "bin-b%g-q%g-m%d-s%d", t->b0, t->q, t->m, t->seed); break;
    case UTS_HYBRID:
        snprintf(buf, len, "hyb-a%d-d%d-b%g-q%g-m%d-f%g-s%d", t->shape, t->gen_mx, t->b0, t->q,
                 t->m, t->shift, t->seed);
        break;
    case UTS_BALANCED: snprintf(buf, len, "bal-d%d-b%g-s%d", t->gen_mx, t->b0, t->seed); break;
    default: snprintf(buf, len, "geo-a%d-d%d-b%g-s%d", t->shape, t->gen_mx, t->b0, t->seed); break;
    }
    return 0;
}

int main(int argc, char **argv)
{
    uts_tree tree = presets[0].tree; /* T1 */
    if (parse_tree(&argc, argv, &tree) != 0) {
        bench_usage(argv[0], usage);
        return 2;
    }
    bench_opts o;
    bench_parse(argc, argv, &o, usage);
    if (uts_sha1_selftest() != 0) {
        fprintf(stderr, "bench_uts: SHA-1 does not match the standard's test vectors\n");
        return 1;
    }
    uts_tree warm = presets[0].tree;
    warm.gen_mx = WARM_GEN_MX;
    char param[96];
    long nodes = tree_name(&tree, param, sizeof param);
    uts_run u = { &o, &tree, &warm, param, nodes };

    double ts = 0;
    if (bench_wants(&o, "serial"))
        ts = run_serial(&u);
    for (int grouped = 0; grouped < 2; grouped++) {
        const char *base = grouped ? "weft-group" : "weft";
        char hf_name[32];
        snprintf(hf_name, sizeof hf_name, "%s-hf", base);
        if (!bench_wants(&o, base) && !bench_wants(&o, hf_name))
            continue;
        for (int hf = 0; hf < 2; hf++) {
            const char *name = hf ? "help-first" : "work-first";
            if (strcmp(o.policy, "both") != 0 && strcmp(o.policy, name) != 0)
                continue;
            double t1 = 0, tp = 0;
            long p = 1;
            for (int wi = 0; wi < o.workers.len; wi++) {
                long w = o.workers.v[wi];
                double t = run_weft(&u, w, hf ? WEFT_HELP_FIRST : WEFT_WORK_FIRST, grouped,
                                    w == 1 && !o.callgrind);
                if (w == 1)
                    t1 = t;
                if (w >= p) {
                    p = w;
                    tp = t;
                }
            }
            summary(&u, hf ? hf_name : base, ts, t1, p, tp);
        }
    }
#ifdef _OPENMP
    if (bench_wants(&o, "openmp")) {
        double t1 = 0, tp = 0;
        long p = 1;
        for (int wi = 0; wi < o.workers.len; wi++) {
            long w = o.workers.v[wi];
            double t = run_omp(&u, w);
            if (w == 1)
                t1 = t;
            if (w >= p) {
                p = w;
                tp = t;
            }
        }
        summary(&u, "openmp", ts, t1, p, tp);
    }
#endif
    return 0;
}
