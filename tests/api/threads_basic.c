/* Tests weft_spawn/weft_join/weft_detach/weft_exit/weft_self: result passing,
 * every error the contract defines (EINVAL, EDEADLK), weft_exit from a nested
 * call, joining a thread from a thread other than its creator, and the
 * handle returned by weft_spawn being the thread's weft_self(). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *ret_arg(void *arg)
{
    return arg;
}

static void *square(void *arg)
{
    intptr_t v = (intptr_t)arg;
    return (void *)(v * v);
}

static void __attribute__((noinline)) exit_deep(int depth, void *result)
{
    if (depth < 0)
        return;
    if (depth == 0)
        weft_exit(result);
    exit_deep(depth - 1, result);
    CHECK(!"weft_exit returned");
}

static atomic_int after_exit;

static void *exits_nested(void *arg)
{
    exit_deep(10, arg);
    atomic_store(&after_exit, 1);
    return (void *)0xbad;
}

/* Reports its own handle and worker through *arg. */
typedef struct whoami {
    weft_thread *self;
    int worker;
    uint64_t id;
} whoami;

static void *report_self(void *arg)
{
    whoami *w = arg;
    w->self = weft_self();
    w->worker = weft_worker_id();
    w->id = weft_thread_id(w->self);
    return w;
}

/* Joins itself: EDEADLK, and the thread carries on. */
static void *join_self(void *arg)
{
    (void)arg;
    void *res;
    CHECK_EQ(weft_join(weft_self(), &res), EDEADLK);
    CHECK_EQ(weft_join(weft_self(), NULL), EDEADLK);
    return (void *)0x5e1f;
}

/* Waits until released; lets a test use its handle while it surely lives. */
static atomic_int gate;

static void *wait_gate(void *arg)
{
    while (!atomic_load(&gate))
        weft_yield();
    if (arg)
        atomic_fetch_add((atomic_int *)arg, 1);
    return arg;
}

/* Joins the thread whose handle is passed (spawned by someone else). */
static atomic_int joining;

static void *joiner(void *arg)
{
    void *res = NULL;
    atomic_store(&joining, 1);
    CHECK_EQ(weft_join((weft_thread *)arg, &res), 0);
    return res;
}

/* Spawns a grandchild, returns its handle unjoined. */
static void *spawn_and_return(void *arg)
{
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, square, arg, NULL), 0);
    return t;
}

static void run(int workers, int policy)
{
    test_init(workers, policy);

    weft_thread *t = NULL;
    void *res = NULL;

    /* Result passing. */
    for (intptr_t i = 0; i < 100; i++) {
        CHECK_EQ(weft_spawn(&t, square, (void *)i, NULL), 0);
        CHECK(t != NULL);
        res = (void *)-1;
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((intptr_t)res, i * i);
    }
    /* Many at once, joined in reverse order. */
    enum { M = 200 };
    weft_thread *ts[M];
    for (intptr_t i = 0; i < M; i++)
        CHECK_EQ(weft_spawn(&ts[i], square, (void *)i, NULL), 0);
    for (intptr_t i = M - 1; i >= 0; i--) {
        CHECK_EQ(weft_join(ts[i], &res), 0);
        CHECK_EQ((intptr_t)res, i * i);
    }
    /* result NULL is allowed. */
    CHECK_EQ(weft_spawn(&t, ret_arg, (void *)1, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    /* A NULL attr and WEFT_ATTR_INIT mean the same. */
    weft_attr plain = WEFT_ATTR_INIT;
    CHECK_EQ(weft_spawn(&t, ret_arg, (void *)2, &plain), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)2);

    /* weft_exit from a nested call returns its result to the joiner and
     * nothing after it runs. */
    atomic_store(&after_exit, 0);
    CHECK_EQ(weft_spawn(&t, exits_nested, (void *)0xe417, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0xe417);
    CHECK_EQ(atomic_load(&after_exit), 0);

    /* weft_self in the thread is the handle weft_spawn gave; ids match. */
    whoami w = { NULL, -2, 0 };
    CHECK_EQ(weft_spawn(&t, report_self, &w, NULL), 0);
    uint64_t id_before = weft_thread_id(t);
    CHECK(id_before != 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == &w);
    CHECK(w.self == t);
    CHECK_EQ(w.id, id_before);
    CHECK(w.worker >= 0 && w.worker < workers);
    CHECK(weft_thread_id(weft_self()) != id_before);

    /* Argument errors. */
    CHECK_EQ(weft_spawn(&t, NULL, NULL, NULL), EINVAL);
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, NULL), EINVAL);
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, &plain), EINVAL);
    weft_attr small = WEFT_ATTR_INIT;
    small.stack_size = 4096;
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, &small), EINVAL);
    small.stack_size = 16 * 1024 - 1;
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, &small), EINVAL);
    CHECK_EQ(weft_join(NULL, &res), EINVAL);
    CHECK_EQ(weft_join(NULL, NULL), EINVAL);
    CHECK_EQ(weft_detach(NULL), EINVAL);

    /* Joining oneself: EDEADLK, from the initial and from another thread. */
    CHECK_EQ(weft_join(weft_self(), &res), EDEADLK);
    CHECK_EQ(weft_spawn(&t, join_self, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0x5e1f);

    /* Detach: twice is EINVAL, join of a detached thread is EINVAL. The
     * thread waits at the gate so the handle is surely still alive. */
    atomic_int ran = 0;
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&t, wait_gate, &ran, NULL), 0);
    CHECK_EQ(weft_detach(t), 0);
    CHECK_EQ(weft_detach(t), EINVAL);
    CHECK_EQ(weft_join(t, &res), EINVAL);
    CHECK_EQ(weft_join(t, NULL), EINVAL);
    atomic_store(&gate, 1);
    while (atomic_load(&ran) != 1)
        weft_yield();

    /* Spawned detached: join and detach are EINVAL while it lives. A
     * detached thread may be spawned with out != NULL. */
    atomic_store(&gate, 0);
    weft_attr det = WEFT_ATTR_INIT;
    det.detached = 1;
    CHECK_EQ(weft_spawn(&t, wait_gate, &ran, &det), 0);
    CHECK(t != NULL);
    CHECK_EQ(weft_join(t, &res), EINVAL);
    CHECK_EQ(weft_detach(t), EINVAL);
    atomic_store(&gate, 1);
    while (atomic_load(&ran) != 2)
        weft_yield();
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, &det), 0);

    /* Detach of a thread that has already finished frees it. */
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, NULL), 0);
    for (int i = 0; i < 100; i++)
        weft_yield();
    CHECK_EQ(weft_detach(t), 0);

    /* A thread being joined cannot be joined again or detached. */
    atomic_store(&gate, 0);
    weft_thread *target, *j;
    CHECK_EQ(weft_spawn(&target, wait_gate, (void *)&ran, NULL), 0);
    atomic_store(&joining, 0);
    CHECK_EQ(weft_spawn(&j, joiner, target, NULL), 0);
    /* Give the joiner time to block in weft_join (it may run on another
     * worker). */
    while (!atomic_load(&joining))
        weft_yield();
    double until = check_now() + 0.02;
    while (check_now() < until)
        weft_yield();
    CHECK_EQ(weft_join(target, &res), EINVAL);
    CHECK_EQ(weft_detach(target), EINVAL);
    atomic_store(&gate, 1);
    CHECK_EQ(weft_join(j, &res), 0);
    CHECK(res == (void *)&ran);
    CHECK_EQ(atomic_load(&ran), 3);

    /* A thread joined by a thread other than its creator. */
    CHECK_EQ(weft_spawn(&t, spawn_and_return, (void *)(intptr_t)9, NULL), 0);
    weft_thread *grandchild;
    CHECK_EQ(weft_join(t, &res), 0);
    grandchild = res;
    CHECK_EQ(weft_join(grandchild, &res), 0);
    CHECK_EQ((intptr_t)res, 81);
    CHECK_EQ(weft_spawn(&t, square, (void *)(intptr_t)7, NULL), 0);
    CHECK_EQ(weft_spawn(&j, joiner, t, NULL), 0);
    CHECK_EQ(weft_join(j, &res), 0);
    CHECK_EQ((intptr_t)res, 49);

    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    for (int workers = 1; workers <= 3; workers++) {
        run(workers, WEFT_WORK_FIRST);
        run(workers, WEFT_HELP_FIRST);
    }
    return 0;
}
