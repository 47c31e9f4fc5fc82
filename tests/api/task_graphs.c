/* Tests zero-wait tasks: every task runs exactly once and only after all
 * its predecessors (a diamond, a wavefront, random DAGs checked against the
 * order they ran in); count 0 runs at once; continuations from tasks, user
 * threads and plain kernel threads; weft_self() is NULL and weft_worker_id()
 * a worker inside a task; a task spawns a thread and a thread feeds tasks;
 * a user thread that yields until a task it readied has run (beside another
 * thread that keeps yielding); the argument checks (EINVAL) and EAGAIN
 * before weft_init and after weft_finalize; weft_finalize runs the ready tasks and releases the
 * unfired ones; the counters; on 1 to 4 workers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "testutil.h"

static weft_sem done;

/* ---- a random DAG ------------------------------------------------------------ */

#define MAXN   2000
#define MAXDEG 4

struct node {
    weft_task *t;
    int succ[MAXDEG], nsucc;
    int npred;
    atomic_int runs;
    atomic_long when; /* position in the order tasks ran */
};

static struct node nodes[MAXN];
static int nnodes;
static atomic_long clock_;
static atomic_int remaining;

static void node_fn(void *arg)
{
    struct node *n = arg;
    CHECK(weft_self() == NULL);
    CHECK(weft_worker_id() >= 0 && weft_worker_id() < weft_num_workers());
    atomic_fetch_add(&n->runs, 1);
    atomic_store(&n->when, atomic_fetch_add(&clock_, 1));
    for (int i = 0; i < n->nsucc; i++)
        CHECK_EQ(weft_task_continue(nodes[n->succ[i]].t), 0);
    if (atomic_fetch_sub(&remaining, 1) == 1)
        CHECK_EQ(weft_sem_post(&done), 0);
}

static unsigned rng_state;
static unsigned rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* Edges go from lower to higher indices: a DAG. */
static void build(int n, unsigned seed)
{
    rng_state = seed;
    nnodes = n;
    for (int i = 0; i < n; i++) {
        nodes[i].nsucc = 0;
        nodes[i].npred = 0;
        atomic_store(&nodes[i].runs, 0);
        atomic_store(&nodes[i].when, -1);
    }
    for (int i = 0; i < n - 1; i++) {
        int k = (int)(rnd() % MAXDEG);
        for (int e = 0; e < k; e++) {
            int j = i + 1 + (int)(rnd() % (unsigned)((n - i - 1) < 16 ? (n - i - 1) : 16));
            int dup = 0;
            for (int x = 0; x < nodes[i].nsucc; x++)
                dup |= nodes[i].succ[x] == j;
            if (!dup) {
                nodes[i].succ[nodes[i].nsucc++] = j;
                nodes[j].npred++;
            }
        }
    }
}

static void check_order(void)
{
    for (int i = 0; i < nnodes; i++) {
        CHECK_EQ(atomic_load(&nodes[i].runs), 1);
        for (int x = 0; x < nodes[i].nsucc; x++)
            CHECK(atomic_load(&nodes[i].when) < atomic_load(&nodes[nodes[i].succ[x]].when));
    }
}

/* Creates the tasks in reverse (successors exist before their
 * predecessors can run), the sources last with count 0. */
static void run_dag(int n, unsigned seed)
{
    build(n, seed);
    atomic_store(&remaining, n);
    atomic_store(&clock_, 0);
    for (int i = n - 1; i >= 0; i--)
        CHECK_EQ(weft_task_create(&nodes[i].t, node_fn, &nodes[i], (unsigned)nodes[i].npred), 0);
    CHECK_EQ(weft_sem_wait(&done), 0);
    check_order();
}

/* ---- diamond, with the sources' continuations from a kernel thread --------- */

/* a -> {b, c} -> d; a waits for one continuation from a plain pthread. */
static void *kernel_continue(void *arg)
{
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_task_continue(arg), 0);
    return NULL;
}

static void diamond(void)
{
    build(4, 1);
    nodes[0].nsucc = 2;
    nodes[0].succ[0] = 1;
    nodes[0].succ[1] = 2;
    nodes[1].nsucc = 1;
    nodes[1].succ[0] = 3;
    nodes[2].nsucc = 1;
    nodes[2].succ[0] = 3;
    nodes[3].nsucc = 0;
    atomic_store(&remaining, 4);
    CHECK_EQ(weft_task_create(&nodes[3].t, node_fn, &nodes[3], 2), 0);
    CHECK_EQ(weft_task_create(&nodes[2].t, node_fn, &nodes[2], 1), 0);
    CHECK_EQ(weft_task_create(&nodes[1].t, node_fn, &nodes[1], 1), 0);
    CHECK_EQ(weft_task_create(&nodes[0].t, node_fn, &nodes[0], 1), 0);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, kernel_continue, nodes[0].t), 0);
    CHECK_EQ(weft_sem_wait(&done), 0);
    CHECK_EQ(pthread_join(k, NULL), 0);
    check_order();
}

/* ---- wavefront ------------------------------------------------------------------ */

#define WF 40
static weft_task *wf[WF][WF];
static atomic_int wf_runs[WF][WF];
static atomic_int wf_left;

static void wf_fn(void *arg)
{
    int k = (int)(intptr_t)arg, i = k / WF, j = k % WF;
    CHECK_EQ(atomic_fetch_add(&wf_runs[i][j], 1), 0);
    /* both predecessors ran before */
    if (i > 0)
        CHECK_EQ(atomic_load(&wf_runs[i - 1][j]), 1);
    if (j > 0)
        CHECK_EQ(atomic_load(&wf_runs[i][j - 1]), 1);
    if (i + 1 < WF)
        weft_task_continue(wf[i + 1][j]);
    if (j + 1 < WF)
        weft_task_continue(wf[i][j + 1]);
    if (atomic_fetch_sub(&wf_left, 1) == 1)
        weft_sem_post(&done);
}

static void wavefront(void)
{
    atomic_store(&wf_left, WF * WF);
    for (int i = WF - 1; i >= 0; i--)
        for (int j = WF - 1; j >= 0; j--) {
            atomic_store(&wf_runs[i][j], 0);
            CHECK_EQ(weft_task_create(&wf[i][j], wf_fn, (void *)(intptr_t)(i * WF + j),
                                      (unsigned)((i > 0) + (j > 0))),
                     0);
        }
    CHECK_EQ(weft_sem_wait(&done), 0);
}

/* ---- tasks and threads feeding each other ------------------------------------ */

static atomic_int mixed;
static weft_task *mixed_sink;

static void *thread_feeds(void *arg)
{
    (void)arg;
    CHECK(weft_self() != NULL);
    atomic_fetch_add(&mixed, 10);
    CHECK_EQ(weft_task_continue(mixed_sink), 0);
    return NULL;
}

static void task_spawns(void *arg)
{
    (void)arg;
    /* a detached thread from a task; the NULL out of a joinable one is EINVAL */
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    atomic_fetch_add(&mixed, 1); /* before the thread that continues the sink */
    CHECK_EQ(weft_spawn(NULL, thread_feeds, NULL, &a), 0);
}

static void mixed_sink_fn(void *arg)
{
    (void)arg;
    CHECK_EQ(atomic_load(&mixed), 11);
    weft_sem_post(&done);
}

static void mixed_run(void)
{
    atomic_store(&mixed, 0);
    CHECK_EQ(weft_task_create(&mixed_sink, mixed_sink_fn, NULL, 1), 0);
    CHECK_EQ(weft_task_create(NULL, task_spawns, NULL, 0), 0);
    CHECK_EQ(weft_sem_wait(&done), 0);
}

/* ---- a thread that yields until a task ran ------------------------------------- */

static atomic_int flag, stop_spinner;

static void set_flag(void *arg)
{
    (void)arg;
    atomic_store(&flag, 1);
}

static void *kernel_creates(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_task_create(NULL, set_flag, NULL, 0), 0);
    return NULL;
}

/* The task comes from this thread, or (from_kernel) from a plain pthread. */
static void yield_until_ran(int from_kernel)
{
    atomic_store(&flag, 0);
    atomic_store(&stop_spinner, 0);
    weft_thread *sp;
    /* another thread that keeps yielding: the waiter never finds its
     * worker without a ready thread */
    CHECK_EQ(weft_spawn(&sp, test_yield_until_set, &stop_spinner, NULL), 0);
    pthread_t k;
    if (from_kernel)
        CHECK_EQ(pthread_create(&k, NULL, kernel_creates, NULL), 0);
    else
        CHECK_EQ(weft_task_create(NULL, set_flag, NULL, 0), 0);
    while (!atomic_load(&flag))
        weft_yield();
    atomic_store(&stop_spinner, 1);
    CHECK_EQ(weft_join(sp, NULL), 0);
    if (from_kernel)
        CHECK_EQ(test_pthread_join(k, NULL), 0);
}

/* ---- finalize ------------------------------------------------------------------- */

static atomic_int fin_ran;

static void fin_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add(&fin_ran, 1);
}

static void fin_chain(void *arg)
{
    long k = (long)(intptr_t)arg;
    atomic_fetch_add(&fin_ran, 1);
    if (k > 0)
        CHECK_EQ(weft_task_create(NULL, fin_chain, (void *)(intptr_t)(k - 1), 0), 0);
}

static void dummy(void *arg)
{
    (void)arg;
}

static void finalize_case(int workers)
{
    test_init(workers, TEST_POLICY_ENV);
    atomic_store(&fin_ran, 0);
    weft_task *unfired[100];
    for (int i = 0; i < 100; i++)
        CHECK_EQ(weft_task_create(&unfired[i], fin_fn, NULL, 1 + (unsigned)(i % 3)), 0);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(weft_task_create(NULL, fin_fn, NULL, 0), 0);
    CHECK_EQ(weft_task_create(NULL, fin_chain, (void *)(intptr_t)1000, 0), 0);
    /* one continuation short of firing */
    CHECK_EQ(weft_task_continue(unfired[1]), 0);
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(atomic_load(&fin_ran), 50 + 1001);
    /* after finalize */
    CHECK_EQ(weft_task_create(NULL, dummy, NULL, 0), EAGAIN);
}

/* ---- driver ------------------------------------------------------------------- */

static void run_all(int workers)
{
    test_init(workers, TEST_POLICY_ENV);
    CHECK_EQ(weft_sem_init(&done, 0), 0);
    CHECK_EQ(weft_task_create(NULL, NULL, NULL, 0), EINVAL);
    CHECK_EQ(weft_task_create(NULL, dummy, NULL, 1), EINVAL);
    CHECK_EQ(weft_task_continue(NULL), EINVAL);
    weft_stats s0, s1;
    CHECK_EQ(weft_stats_get(&s0), 0);
    yield_until_ran(0);
    yield_until_ran(1);
    diamond();
    wavefront();
    mixed_run();
    for (unsigned seed = 1; seed <= 20; seed++)
        run_dag(10 + (int)(rnd() % (MAXN - 10)), seed);
    CHECK_EQ(weft_stats_get(&s1), 0);
    CHECK(s1.tasks_run - s0.tasks_run >= 4 + WF * WF + 2);
    CHECK_EQ(weft_sem_destroy(&done), 0);
    CHECK_EQ(weft_finalize(), 0);
    finalize_case(workers);
}

int main(void)
{
    test_clear_env();
    alarm(120);
    CHECK_EQ(weft_task_create(NULL, dummy, NULL, 0), EAGAIN); /* before init */
    weft_task *t = (weft_task *)&rng_state;
    CHECK_EQ(weft_task_continue(t), EAGAIN); /* never touched: not running */
    for (int w = 1; w <= 4; w++)
        run_all(w);
    return 0;
}
