/* Tests weft_group: nested groups (fib), members spawning into their own
 * group, reuse after a wait, destroy while a member runs or a thread waits
 * (EBUSY) and after unwaited members finished (0), spawns and waits from
 * plain kernel threads and bound threads, many waiters at once, a wait
 * that finds every member finished whatever their stacks (bound, odd-sized,
 * more than a few), the argument checks (detached EINVAL), on 1 and 2
 * workers under both spawn policies. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

/* ---- nested: fib with a group per call --------------------------------------- */

struct fib_arg {
    long n;
    long *result;
};

static void *fib(void *arg)
{
    struct fib_arg *p = arg;
    if (p->n < 2) {
        *p->result = p->n;
        return NULL;
    }
    weft_group g;
    CHECK_EQ(weft_group_init(&g), 0);
    long a = -1, b = -1;
    struct fib_arg ca = { p->n - 1, &a }, cb = { p->n - 2, &b };
    /* one by copy, one by pointer */
    CHECK_EQ(weft_group_spawn(&g, fib, &ca, sizeof ca, NULL), 0);
    CHECK_EQ(weft_group_spawn(&g, fib, &cb, 0, NULL), 0);
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(weft_group_destroy(&g), 0);
    *p->result = a + b;
    return NULL;
}

static long run_fib(long n)
{
    long r = -1;
    struct fib_arg a = { n, &r };
    fib(&a);
    return r;
}

/* ---- members spawning into their own group -------------------------------- */

static weft_group tree_g = WEFT_GROUP_INIT;
static atomic_long tree_nodes;

/* Every node of depth < 5 spawns 3 children into the same group, later
 * than it was spawned itself: one wait must cover all 364 nodes. */
static void *tree_node(void *arg)
{
    long depth = (long)(intptr_t)arg;
    if (depth % 2)
        weft_yield(); /* let the waiter see a partial tree */
    if (depth < 5)
        for (int i = 0; i < 3; i++)
            CHECK_EQ(weft_group_spawn(&tree_g, tree_node, (void *)(intptr_t)(depth + 1), 0, NULL),
                     0);
    atomic_fetch_add(&tree_nodes, 1);
    return NULL;
}

static const long tree_total = 1 + 3 + 9 + 27 + 81 + 243;

static void tree(void)
{
    atomic_store(&tree_nodes, 0);
    CHECK_EQ(weft_group_spawn(&tree_g, tree_node, (void *)(intptr_t)0, 0, NULL), 0);
    CHECK_EQ(weft_group_wait(&tree_g), 0);
    CHECK_EQ(atomic_load(&tree_nodes), tree_total);
    CHECK_EQ(weft_group_destroy(&tree_g), 0);
}

/* ---- reuse, destroy, waiters ---------------------------------------------- */

static atomic_long ran;

static void *count(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
    return (void *)1;
}

static void reuse(void)
{
    weft_group g = WEFT_GROUP_INIT;
    for (int round = 0; round < 50; round++) {
        atomic_store(&ran, 0);
        for (int i = 0; i <= round % 7; i++)
            CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, NULL), 0);
        CHECK_EQ(weft_group_wait(&g), 0);
        CHECK_EQ(atomic_load(&ran), round % 7 + 1);
        CHECK_EQ(weft_group_wait(&g), 0); /* empty: returns at once */
    }
    CHECK_EQ(weft_group_destroy(&g), 0);
    CHECK_EQ(weft_group_init(&g), 0);
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(weft_group_destroy(&g), 0);
}

static weft_sem gate;
static weft_group busy_g;
static atomic_int members_done, waiters_done;
static int nmembers;

static void *gated(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&gate), 0);
    atomic_fetch_add(&members_done, 1);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_group_wait(&busy_g), 0);
    /* every member has finished once any wait returns */
    CHECK_EQ(atomic_load(&members_done), nmembers);
    atomic_fetch_add(&waiters_done, 1);
    return NULL;
}

static void *pthread_waiter(void *arg)
{
    return waiter(arg);
}

/* Members held on a semaphore; destroy says EBUSY while they run and while
 * user threads and plain kernel threads wait; all waiters return once the
 * members finish. */
static void busy_and_waiters(int nuser, int nplain)
{
    nmembers = 4;
    atomic_store(&members_done, 0);
    atomic_store(&waiters_done, 0);
    CHECK_EQ(weft_sem_init(&gate, 0), 0);
    CHECK_EQ(weft_group_init(&busy_g), 0);
    for (int i = 0; i < nmembers; i++)
        CHECK_EQ(weft_group_spawn(&busy_g, gated, NULL, 0, NULL), 0);
    CHECK_EQ(weft_group_destroy(&busy_g), EBUSY); /* members run */
    weft_thread *w[16];
    pthread_t p[4];
    for (int i = 0; i < nuser; i++)
        w[i] = st_spawn(waiter, NULL);
    for (int i = 0; i < nplain; i++)
        p[i] = st_pthread(pthread_waiter, NULL);
    st_yield_ms(20); /* let the waiters get in */
    CHECK_EQ(atomic_load(&waiters_done), 0);
    CHECK_EQ(weft_group_destroy(&busy_g), EBUSY); /* members run, threads wait */
    for (int i = 0; i < nmembers; i++)
        CHECK_EQ(weft_sem_post(&gate), 0);
    for (int i = 0; i < nuser; i++)
        st_join(w[i]);
    for (int i = 0; i < nplain; i++)
        CHECK_EQ(test_pthread_join(p[i], NULL), 0);
    CHECK_EQ(atomic_load(&waiters_done), nuser + nplain);
    CHECK_EQ(weft_group_destroy(&busy_g), 0);
    CHECK_EQ(weft_sem_destroy(&gate), 0);
}

/* Members that finished without anybody waiting for them: destroy returns
 * 0 (EBUSY only until every one has counted itself out). */
static void destroy_unwaited(void)
{
    weft_group g = WEFT_GROUP_INIT;
    atomic_store(&ran, 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, NULL), 0);
    while (atomic_load(&ran) < 5)
        weft_yield();
    /* finished, maybe not yet marked so: EBUSY until they are */
    int rc;
    while ((rc = weft_group_destroy(&g)) == EBUSY)
        weft_yield();
    CHECK_EQ(rc, 0);
    CHECK_EQ(weft_group_wait(&g), 0);
}

/* Members that finished before the wait are freed, those the stack cache
 * refuses (bound, odd-sized) as well (ASan reports a leak otherwise), and
 * the group is usable again afterwards. */
static void finished_members(void)
{
    weft_attr bound = WEFT_ATTR_INIT, odd = WEFT_ATTR_INIT;
    bound.bound = 1;
    odd.stack_size = 3 * 65536;
    weft_group g = WEFT_GROUP_INIT;
    for (int n = 1; n <= 20; n += 3) {
        atomic_store(&ran, 0);
        for (int i = 0; i < n; i++) {
            const weft_attr *a = i % 3 == 1 ? &bound : i % 3 == 2 ? &odd : NULL;
            CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, a), 0);
        }
        while (atomic_load(&ran) < n)
            weft_yield();
        CHECK_EQ(weft_group_wait(&g), 0);
        CHECK_EQ(weft_group_wait(&g), 0);
        CHECK_EQ(weft_group_destroy(&g), 0);
    }
}

/* ---- plain kernel threads and bound threads ------------------------------- */

static void *plain_spawner(void *arg)
{
    (void)arg;
    weft_group g = WEFT_GROUP_INIT;
    for (int i = 0; i < 20; i++)
        CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, NULL), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.bound = 1;
    CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, &a), 0);
    CHECK_EQ(weft_group_wait(&g), 0);
    CHECK_EQ(weft_group_destroy(&g), 0);
    CHECK_EQ(run_fib(8), 21); /* nested groups from a kernel thread */
    return NULL;
}

static void plain_threads(void)
{
    atomic_store(&ran, 0);
    pthread_t p[2];
    for (int i = 0; i < 2; i++)
        p[i] = st_pthread(plain_spawner, NULL);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(test_pthread_join(p[i], NULL), 0);
    CHECK(atomic_load(&ran) >= 2 * 21);
}

static void *bound_fib(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)run_fib(9);
}

/* ---- errors ---------------------------------------------------------------- */

static void errors(void)
{
    weft_group g = WEFT_GROUP_INIT;
    weft_attr det = WEFT_ATTR_INIT;
    det.detached = 1;
    char big[4097] = { 0 };
    CHECK_EQ(weft_group_init(NULL), EINVAL);
    CHECK_EQ(weft_group_wait(NULL), EINVAL);
    CHECK_EQ(weft_group_destroy(NULL), EINVAL);
    CHECK_EQ(weft_group_spawn(NULL, count, NULL, 0, NULL), EINVAL);
    CHECK_EQ(weft_group_spawn(&g, NULL, NULL, 0, NULL), EINVAL);
    CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, &det), EINVAL);
    CHECK_EQ(weft_group_spawn(&g, count, NULL, 8, NULL), EINVAL);
    CHECK_EQ(weft_group_spawn(&g, count, big, sizeof big, NULL), EINVAL);
    CHECK_EQ(weft_group_wait(&g), 0); /* nothing was spawned */
    CHECK_EQ(weft_group_destroy(&g), 0);
}

static void run_all(int workers, int policy)
{
    test_init(workers, policy);
    errors();
    CHECK_EQ(run_fib(TEST_TSAN ? 11 : 16), TEST_TSAN ? 89 : 987);
    tree();
    reuse();
    busy_and_waiters(6, 2);
    destroy_unwaited();
    finished_members();
    plain_threads();
    weft_attr a = WEFT_ATTR_INIT;
    a.bound = 1;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, bound_fib, NULL, &a), 0);
    CHECK_EQ((long)(intptr_t)st_join(t), 34);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    st_watchdog(60);
    test_clear_env();
    /* before weft_init: EAGAIN, as weft_spawn */
    weft_group g = WEFT_GROUP_INIT;
    CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, NULL), EAGAIN);
    CHECK_EQ(weft_group_wait(&g), 0);
    for (int workers = 1; workers <= 2; workers++)
        for (int policy = 0; policy < 2; policy++)
            run_all(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
    CHECK_EQ(weft_group_spawn(&g, count, NULL, 0, NULL), EAGAIN);
    puts("ok");
    return 0;
}
