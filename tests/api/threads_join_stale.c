/* Tests that a handle whose thread was already joined, or was detached and
 * has finished, is refused (EINVAL or ESRCH) by weft_join and weft_detach,
 * from user threads, plain kernel threads and for bound threads, under both
 * spawn policies, and that such a refused call never hands the thread's
 * storage out twice: two threads spawned afterwards, alive at once, have
 * distinct handles and stacks. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* A hang (a join that waits for a thread that no longer exists) fails. */
#define TEST_ALARM_S 60

static int stale(int rc)
{
    return rc == EINVAL || rc == ESRCH;
}

static void *ret_arg(void *arg)
{
    return arg;
}

static atomic_int gate;

typedef struct live {
    atomic_int started;
    const void *stack; /* address of a local of the thread while it waits */
} live;

static void *wait_gate(void *arg)
{
    live *l = arg;
    int here = 0;
    l->stack = &here;
    atomic_store(&l->started, 1);
    while (!atomic_load(&gate))
        weft_yield();
    return (void *)(uintptr_t)(here + 1);
}

/* Two threads alive at once must not share a descriptor or a stack: the
 * symptom of a slot that went into the stack cache twice. */
static void two_alive(const weft_attr *attr)
{
    weft_thread *a, *b;
    live la = { 0 }, lb = { 0 };
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&a, wait_gate, &la, attr), 0);
    CHECK_EQ(weft_spawn(&b, wait_gate, &lb, attr), 0);
    while (!atomic_load(&la.started) || !atomic_load(&lb.started))
        weft_yield();
    CHECK(a != b);
    CHECK(la.stack != lb.stack);
    atomic_store(&gate, 1);
    CHECK_EQ(weft_join(a, NULL), 0);
    CHECK_EQ(weft_join(b, NULL), 0);
}

/* join, then join again and detach: both refused. */
static void join_twice(const weft_attr *attr)
{
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, ret_arg, (void *)0x51, attr), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0x51);
    res = NULL;
    CHECK(stale(weft_join(t, &res)));
    CHECK(res == NULL);
    CHECK(stale(weft_detach(t)));
    CHECK(stale(weft_join(t, NULL)));
    two_alive(attr);
}

static atomic_int finished;

static void *note_finish(void *arg)
{
    atomic_store(&finished, 1);
    return arg;
}

/* detach a thread that has (or nearly has) finished, then join and detach
 * it again: refused, whether the detach found it finished or not. */
static void detach_finished(const weft_attr *attr)
{
    weft_thread *t;
    atomic_store(&finished, 0);
    CHECK_EQ(weft_spawn(&t, note_finish, NULL, attr), 0);
    while (!atomic_load(&finished))
        weft_yield();
    for (int i = 0; i < 8; i++)
        weft_yield(); /* let the exit complete on the next context */
    CHECK_EQ(weft_detach(t), 0);
    CHECK(stale(weft_join(t, NULL)));
    CHECK(stale(weft_detach(t)));
    two_alive(attr);
}

/* The same misuse from a plain kernel thread. */
static void *plain_twice(void *arg)
{
    (void)arg;
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, ret_arg, (void *)0x52, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0x52);
    CHECK(stale(weft_join(t, NULL)));
    CHECK(stale(weft_detach(t)));
    return NULL;
}

static void run(int workers, int policy)
{
    test_init(workers, policy);
    join_twice(NULL);
    detach_finished(NULL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, plain_twice, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
    two_alive(NULL);
    weft_attr bound = WEFT_ATTR_INIT;
    bound.bound = 1;
    join_twice(&bound);
    detach_finished(&bound);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    alarm(TEST_ALARM_S);
    run(1, WEFT_WORK_FIRST);
    run(1, WEFT_HELP_FIRST);
    run(2, WEFT_WORK_FIRST);
    run(2, WEFT_HELP_FIRST);
    return 0;
}
