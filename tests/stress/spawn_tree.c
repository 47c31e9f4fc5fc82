/* Stress test: randomized spawn trees with yields, joins, detached subtrees
 * and handles handed to unrelated joiners (user threads and plain pthreads),
 * under 2 to 4 workers and both spawn policies, bounded by a deadline; every
 * node's count must be accounted for exactly once at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define TOTAL_SECONDS (TEST_SANITIZED ? 8.0 : 10.0)
#define MAX_DEPTH     (TEST_SANITIZED ? 5 : 7)
#define MAX_FANOUT    4
#define MAILBOX       256
#define PTHREADS      2
#define COLLECTORS    2

/* ---- the tree's shape, a pure function of (seed, depth) ---------------- */

enum { KIND_JOIN, KIND_DETACHED, KIND_DETACH_LATER, KIND_HANDOFF };

typedef struct plan {
    int fanout;
    int yields_before, yields_between;
    int kind[MAX_FANOUT];
    uint64_t child_seed[MAX_FANOUT];
    size_t stack_size[MAX_FANOUT];
} plan;

static void make_plan(uint64_t seed, int depth, plan *p)
{
    uint64_t s = seed;
    p->fanout = depth > 0 ? (int)(test_splitmix(&s) % (MAX_FANOUT + 1)) : 0;
    if (depth > 0 && p->fanout == 0 && depth > MAX_DEPTH - 2)
        p->fanout = 2; /* keep the top of the tree bushy */
    p->yields_before = (int)(test_splitmix(&s) % 3);
    p->yields_between = (int)(test_splitmix(&s) % 2);
    for (int i = 0; i < p->fanout; i++) {
        uint64_t r = test_splitmix(&s) % 16;
        p->kind[i] = r < 10   ? KIND_JOIN
                     : r < 12 ? KIND_DETACHED
                     : r < 13 ? KIND_DETACH_LATER
                              : KIND_HANDOFF;
        p->child_seed[i] = test_splitmix(&s);
        uint64_t st = test_splitmix(&s) % 4;
        p->stack_size[i] = st == 0 ? 32 * 1024 : st == 1 ? 256 * 1024 : 0;
    }
}

static long tree_size(uint64_t seed, int depth)
{
    plan p;
    make_plan(seed, depth, &p);
    long n = 1;
    for (int i = 0; i < p.fanout; i++)
        n += tree_size(p.child_seed[i], depth - 1);
    return n;
}

/* ---- shared accounting ------------------------------------------------- */

static atomic_long nodes_run;      /* every node, at its start */
static atomic_long expected_total; /* tree_size of every root spawned */
static atomic_long joined_total;   /* results of roots joined by their spawner */
static atomic_long detached_total; /* results of detached subtree roots */
static atomic_long handoff_total;  /* results of threads joined from the mailbox */
static atomic_int round_over;
static atomic_int pthreads_done;

static _Atomic(weft_thread *) mailbox[MAILBOX];

/* Puts t in the mailbox; 0 if full (the caller joins it itself). */
static int mail_put(weft_thread *t)
{
    for (int tries = 0; tries < 8; tries++) {
        int i = (int)(((uintptr_t)t / 64 + (uintptr_t)tries * 97) % MAILBOX);
        weft_thread *expect = NULL;
        if (atomic_compare_exchange_strong(&mailbox[i], &expect, t))
            return 1;
    }
    return 0;
}

/* Joins one handle from the mailbox, if any; returns whether it did. */
static int mail_join_one(uint64_t *rng)
{
    int start = (int)(test_splitmix(rng) % MAILBOX);
    for (int k = 0; k < MAILBOX; k++) {
        int i = (start + k) % MAILBOX;
        if (atomic_load_explicit(&mailbox[i], memory_order_relaxed) == NULL)
            continue;
        weft_thread *t = atomic_exchange(&mailbox[i], NULL);
        if (t == NULL)
            continue;
        void *res = NULL;
        CHECK_EQ(weft_join(t, &res), 0);
        atomic_fetch_add(&handoff_total, (long)(intptr_t)res);
        return 1;
    }
    return 0;
}

/* ---- the tree ---------------------------------------------------------- */

typedef struct node_arg {
    uint64_t seed;
    int depth;
    int detached;
} node_arg;

static const char *const names[] = { "tree-a", "tree-b", NULL };

static node_arg *new_arg(uint64_t seed, int depth, int detached)
{
    node_arg *a = malloc(sizeof *a);
    CHECK(a != NULL);
    a->seed = seed;
    a->depth = depth;
    a->detached = detached;
    return a;
}

static void *node(void *argp)
{
    node_arg arg = *(node_arg *)argp;
    free(argp);
    atomic_fetch_add_explicit(&nodes_run, 1, memory_order_relaxed);
    plan p;
    make_plan(arg.seed, arg.depth, &p);
    for (int i = 0; i < p.yields_before; i++)
        weft_yield();

    weft_thread *kids[MAX_FANOUT];
    long own = 1;
    for (int i = 0; i < p.fanout; i++) {
        weft_attr a = WEFT_ATTR_INIT;
        a.stack_size = p.stack_size[i];
        a.name = names[i % 3];
        a.detached = p.kind[i] == KIND_DETACHED;
        node_arg *ca = new_arg(p.child_seed[i], arg.depth - 1,
                               p.kind[i] == KIND_DETACHED || p.kind[i] == KIND_DETACH_LATER);
        kids[i] = NULL;
        int rc = weft_spawn(a.detached ? NULL : &kids[i], node, ca, &a);
        CHECK_EQ(rc, 0);
        if (p.kind[i] == KIND_DETACH_LATER)
            CHECK_EQ(weft_detach(kids[i]), 0);
        if (p.kind[i] == KIND_HANDOFF && !mail_put(kids[i]))
            p.kind[i] = KIND_JOIN;
        for (int y = 0; y < p.yields_between; y++)
            weft_yield();
    }
    for (int i = p.fanout - 1; i >= 0; i--) {
        if (p.kind[i] != KIND_JOIN)
            continue;
        void *res = NULL;
        CHECK_EQ(weft_join(kids[i], &res), 0);
        own += (long)(intptr_t)res;
    }
    if (arg.detached) {
        atomic_fetch_add(&detached_total, own);
        return NULL;
    }
    return (void *)(intptr_t)own;
}

/* Spawns one root, joins it, accounts for it. */
static void run_root(uint64_t seed, int depth)
{
    atomic_fetch_add(&expected_total, tree_size(seed, depth));
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, node, new_arg(seed, depth, 0), NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    atomic_fetch_add(&joined_total, (long)(intptr_t)res);
}

/* ---- mixed joiners ----------------------------------------------------- */

typedef struct joiner_arg {
    uint64_t seed;
    double until;
} joiner_arg;

/* A plain kernel thread: spawns roots and joins them, joins mailbox handles
 * (spawned by user threads), and hands its own threads to the mailbox. */
static void *pthread_joiner(void *argp)
{
    joiner_arg *ja = argp;
    uint64_t rng = ja->seed;
    CHECK(weft_self() == NULL);
    while (check_now() < ja->until) {
        run_root(test_splitmix(&rng), 1 + (int)(test_splitmix(&rng) % MAX_DEPTH));
        while (mail_join_one(&rng) && test_splitmix(&rng) % 4)
            ;
        /* A thread of ours for somebody else to join. */
        uint64_t s = test_splitmix(&rng);
        int depth = (int)(test_splitmix(&rng) % 3);
        atomic_fetch_add(&expected_total, tree_size(s, depth));
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, node, new_arg(s, depth, 0), NULL), 0);
        if (!mail_put(t)) {
            void *res;
            CHECK_EQ(weft_join(t, &res), 0);
            atomic_fetch_add(&handoff_total, (long)(intptr_t)res);
        }
    }
    atomic_fetch_add(&pthreads_done, 1);
    return NULL;
}

/* A user thread outside every tree, joining mailbox handles. */
static void *collector(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg;
    while (!atomic_load(&round_over)) {
        if (!mail_join_one(&rng))
            weft_yield();
    }
    return NULL;
}

static void run_config(int workers, int policy, double seconds, uint64_t seed)
{
    test_init(workers, policy);
    atomic_store(&nodes_run, 0);
    atomic_store(&expected_total, 0);
    atomic_store(&joined_total, 0);
    atomic_store(&detached_total, 0);
    atomic_store(&handoff_total, 0);
    atomic_store(&round_over, 0);
    atomic_store(&pthreads_done, 0);
    double until = check_now() + seconds;

    pthread_t pt[PTHREADS];
    joiner_arg ja[PTHREADS];
    for (int i = 0; i < PTHREADS; i++) {
        ja[i].seed = seed * 31 + (uint64_t)i;
        ja[i].until = until;
        CHECK_EQ(pthread_create(&pt[i], NULL, pthread_joiner, &ja[i]), 0);
    }
    weft_thread *col[COLLECTORS];
    for (int i = 0; i < COLLECTORS; i++)
        CHECK_EQ(weft_spawn(&col[i], collector, (void *)(uintptr_t)(seed + 7 + (uint64_t)i), NULL),
                 0);

    uint64_t rng = seed;
    long rounds = 0;
    while (check_now() < until) {
        /* A few roots at once, then join them. */
        enum { R = 4 };
        weft_thread *roots[R];
        for (int i = 0; i < R; i++) {
            uint64_t s = test_splitmix(&rng);
            int depth = 2 + (int)(test_splitmix(&rng) % (MAX_DEPTH - 1));
            atomic_fetch_add(&expected_total, tree_size(s, depth));
            int det = test_splitmix(&rng) % 4 == 0;
            weft_attr a = WEFT_ATTR_INIT;
            a.detached = det;
            CHECK_EQ(weft_spawn(det ? NULL : &roots[i], node, new_arg(s, depth, det), &a), 0);
            if (det)
                roots[i] = NULL;
        }
        for (int i = 0; i < R; i++) {
            if (!roots[i])
                continue;
            void *res = NULL;
            CHECK_EQ(weft_join(roots[i], &res), 0);
            atomic_fetch_add(&joined_total, (long)(intptr_t)res);
        }
        rounds++;
    }

    /* Wind down: plain threads first (without blocking worker 0 on them),
     * then collectors, then drain until every node is accounted for. */
    double hang = check_now() + 60;
    while (atomic_load(&pthreads_done) != PTHREADS) {
        CHECK(check_now() < hang);
        weft_yield();
    }
    for (int i = 0; i < PTHREADS; i++)
        CHECK_EQ(test_pthread_join(pt[i], NULL), 0);
    atomic_store(&round_over, 1);
    for (int i = 0; i < COLLECTORS; i++)
        CHECK_EQ(weft_join(col[i], NULL), 0);
    for (;;) {
        long acc =
            atomic_load(&joined_total) + atomic_load(&detached_total) + atomic_load(&handoff_total);
        if (acc == atomic_load(&expected_total))
            break;
        CHECK(acc < atomic_load(&expected_total));
        if (check_now() > hang) {
            fprintf(stderr, "hang: accounted %ld of %ld nodes (run %ld)\n", acc,
                    atomic_load(&expected_total), atomic_load(&nodes_run));
            CHECK(!"not every node finished");
        }
        if (!mail_join_one(&rng))
            weft_yield();
    }
    for (int i = 0; i < MAILBOX; i++)
        CHECK(atomic_load(&mailbox[i]) == NULL);
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(atomic_load(&nodes_run), atomic_load(&expected_total));
    printf("workers=%d %s: %ld nodes (%ld main rounds) joined %ld detached %ld handed off %ld\n",
           workers, policy ? "help-first" : "work-first", atomic_load(&nodes_run), rounds,
           atomic_load(&joined_total), atomic_load(&detached_total), atomic_load(&handoff_total));
}

int main(int argc, char **argv)
{
    test_clear_env();
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu (rerun with: %s %llu)\n", (unsigned long long)seed, argv[0],
           (unsigned long long)seed);
    fflush(stdout);
    const double slice = TOTAL_SECONDS / 6;
    for (int workers = 2; workers <= 4; workers++)
        for (int policy = 0; policy < 2; policy++)
            run_config(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST, slice,
                       seed + (uint64_t)(workers * 2 + policy));
    return 0;
}
