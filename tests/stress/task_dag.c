/* Stress test: random DAGs of zero-wait tasks, several at once, on 1 to 4
 * workers, bounded by a deadline per configuration. Besides its
 * predecessors, some nodes wait for one more continuation from a user
 * thread, from a plain kernel thread, or from a split-phase timer; a node
 * may spawn a thread or create and run a child task. Each node must run
 * exactly once and after every predecessor; the graph's last node wakes
 * its driver. weft_finalize then finds nothing left to run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define SECONDS_PER_CONFIG (TEST_SANITIZED ? 0.7 : 1.2)
#define DRIVERS            3
#define MAXN               300
#define MAXDEG             3

enum { EXTRA_NONE, EXTRA_THREAD, EXTRA_KERNEL, EXTRA_TIMER };

struct graph;

struct node {
    struct graph *g;
    weft_task *t;
    int succ[MAXDEG], nsucc, npred, extra;
    atomic_int runs;
    atomic_long when;
};

struct graph {
    struct node nodes[MAXN];
    int n;
    atomic_long clock;
    atomic_int left;
    weft_sem done;
    uint64_t rng;
};

static atomic_long children, kernel_sent;

static void child_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add(&children, 1);
}

static void *thread_sends(void *arg)
{
    CHECK_EQ(weft_task_continue(arg), 0);
    return NULL;
}

static void node_fn(void *arg)
{
    struct node *nd = arg;
    struct graph *g = nd->g;
    CHECK(weft_self() == NULL);
    CHECK_EQ(atomic_fetch_add(&nd->runs, 1), 0);
    atomic_store(&nd->when, atomic_fetch_add(&g->clock, 1));
    long idx = nd - g->nodes;
    if (idx % 7 == 0)
        CHECK_EQ(weft_task_create(NULL, child_fn, NULL, 0), 0);
    for (int i = 0; i < nd->nsucc; i++)
        CHECK_EQ(weft_task_continue(g->nodes[nd->succ[i]].t), 0);
    if (atomic_fetch_sub(&g->left, 1) == 1)
        CHECK_EQ(weft_sem_post(&g->done), 0);
}

/* The kernel thread's queue of tasks to continue. */
static pthread_mutex_t kq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kq_cond = PTHREAD_COND_INITIALIZER;
static weft_task *kq[DRIVERS * MAXN];
static int kq_n, kq_stop;

static void *kernel_sender(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&kq_lock);
    for (;;) {
        while (kq_n == 0 && !kq_stop)
            pthread_cond_wait(&kq_cond, &kq_lock);
        if (kq_n == 0 && kq_stop)
            break;
        weft_task *t = kq[--kq_n];
        pthread_mutex_unlock(&kq_lock);
        CHECK_EQ(weft_task_continue(t), 0);
        atomic_fetch_add(&kernel_sent, 1);
        pthread_mutex_lock(&kq_lock);
    }
    pthread_mutex_unlock(&kq_lock);
    return NULL;
}

static void run_graph(struct graph *g)
{
    int n = 2 + (int)(test_splitmix(&g->rng) % (MAXN - 2));
    g->n = n;
    for (int i = 0; i < n; i++) {
        struct node *nd = &g->nodes[i];
        nd->g = g;
        nd->nsucc = nd->npred = 0;
        nd->extra = (int)(test_splitmix(&g->rng) % 16);
        if (nd->extra > EXTRA_TIMER)
            nd->extra = EXTRA_NONE;
        atomic_store(&nd->runs, 0);
        atomic_store(&nd->when, -1);
    }
    for (int i = 0; i < n - 1; i++) {
        int k = (int)(test_splitmix(&g->rng) % (MAXDEG + 1));
        for (int e = 0; e < k; e++) {
            int span = n - i - 1 < 20 ? n - i - 1 : 20;
            int j = i + 1 + (int)(test_splitmix(&g->rng) % (uint64_t)span);
            int dup = 0;
            for (int x = 0; x < g->nodes[i].nsucc; x++)
                dup |= g->nodes[i].succ[x] == j;
            if (!dup) {
                g->nodes[i].succ[g->nodes[i].nsucc++] = j;
                g->nodes[j].npred++;
            }
        }
    }
    atomic_store(&g->left, n);
    atomic_store(&g->clock, 0);
    /* successors first; the external continuation is sent after all exist */
    for (int i = n - 1; i >= 0; i--) {
        struct node *nd = &g->nodes[i];
        unsigned count = (unsigned)nd->npred + (nd->extra != EXTRA_NONE);
        CHECK_EQ(weft_task_create(&nd->t, node_fn, nd, count), 0);
    }
    for (int i = 0; i < n; i++) {
        struct node *nd = &g->nodes[i];
        weft_attr a = WEFT_ATTR_INIT;
        a.detached = 1;
        switch (nd->extra) {
        case EXTRA_THREAD: CHECK_EQ(weft_spawn(NULL, thread_sends, nd->t, &a), 0); break;
        case EXTRA_KERNEL:
            pthread_mutex_lock(&kq_lock);
            kq[kq_n++] = nd->t;
            pthread_cond_signal(&kq_cond);
            pthread_mutex_unlock(&kq_lock);
            break;
        case EXTRA_TIMER: CHECK_EQ(weft_task_sleep_ns(nd->t, 1000 * (uint64_t)(i % 5)), 0); break;
        default: break;
        }
    }
    CHECK_EQ(weft_sem_wait(&g->done), 0);
    for (int i = 0; i < n; i++) {
        struct node *nd = &g->nodes[i];
        CHECK_EQ(atomic_load(&nd->runs), 1);
        for (int x = 0; x < nd->nsucc; x++)
            CHECK(atomic_load(&nd->when) < atomic_load(&g->nodes[nd->succ[x]].when));
    }
}

static double end;

static void *driver(void *arg)
{
    struct graph *g = arg;
    long graphs = 0;
    while (check_now() < end) {
        run_graph(g);
        graphs++;
    }
    return (void *)graphs;
}

int main(void)
{
    test_clear_env();
    alarm(120);
    static struct graph graphs[DRIVERS];
    for (int workers = 1; workers <= 4; workers++) {
        test_init(workers, TEST_POLICY_ENV);
        pthread_t k;
        kq_stop = 0;
        CHECK_EQ(pthread_create(&k, NULL, kernel_sender, NULL), 0);
        end = check_now() + SECONDS_PER_CONFIG;
        weft_thread *d[DRIVERS];
        for (int i = 0; i < DRIVERS; i++) {
            graphs[i].rng = (uint64_t)(workers * 100 + i);
            CHECK_EQ(weft_sem_init(&graphs[i].done, 0), 0);
            CHECK_EQ(weft_spawn(&d[i], driver, &graphs[i], NULL), 0);
        }
        long total = 0;
        for (int i = 0; i < DRIVERS; i++) {
            void *r;
            CHECK_EQ(weft_join(d[i], &r), 0);
            total += (long)r;
            CHECK_EQ(weft_sem_destroy(&graphs[i].done), 0);
        }
        pthread_mutex_lock(&kq_lock);
        kq_stop = 1;
        pthread_cond_signal(&kq_cond);
        pthread_mutex_unlock(&kq_lock);
        CHECK_EQ(test_pthread_join(k, NULL), 0);
        CHECK(total >= DRIVERS);
        weft_stats s;
        CHECK_EQ(weft_stats_get(&s), 0);
        CHECK(s.tasks_run > 0);
        CHECK_EQ(weft_finalize(), 0);
        printf("workers=%d graphs=%ld kernel continuations=%ld children=%ld\n", workers, total,
               atomic_load(&kernel_sent), atomic_load(&children));
    }
    return 0;
}
