/* Tests the runtime's lifecycle rules: state before weft_init, weft_init(NULL)
 * making the caller the first user thread on worker 0, EBUSY on a second init,
 * EPERM for weft_finalize from another thread, EINVAL when not running, and
 * EAGAIN for weft_spawn before init and after finalize. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *ret_arg(void *arg)
{
    return arg;
}

static void *pthread_finalize(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_self(), NULL);
    CHECK_EQ(weft_worker_id(), -1);
    return (void *)(intptr_t)weft_finalize();
}

/* 0: starting, 1: runtime up, 2: main is done with it. */
static atomic_int owner_state;

static void *pthread_owner(void *arg)
{
    (void)arg;
    int rc = weft_init(NULL);
    if (rc != 0)
        return (void *)(intptr_t)(1000 + rc);
    CHECK(weft_self() != NULL);
    CHECK_EQ(weft_worker_id(), 0);
    atomic_store(&owner_state, 1);
    while (atomic_load(&owner_state) != 2)
        weft_yield();
    return (void *)(intptr_t)weft_finalize();
}

static void *pthread_init(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)weft_init(NULL);
}

/* A user thread other than the initial one may not finalize either. */
static void *user_finalize(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)weft_finalize();
}

static void *user_init(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)weft_init(NULL);
}

static void check_not_running(void)
{
    weft_thread *t = (weft_thread *)0x1;
    CHECK_EQ(weft_num_workers(), 0);
    CHECK_EQ(weft_worker_id(), -1);
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, NULL), EAGAIN);
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, &a), EAGAIN);
    CHECK_EQ(weft_finalize(), EINVAL);
}

int main(void)
{
    test_clear_env();

    /* Before weft_init. */
    check_not_running();

    /* weft_init(NULL): defaults + environment (cleared: CPUs in the mask). */
    CHECK_EQ(weft_init(NULL), 0);
    CHECK_EQ(weft_num_workers(), test_affinity_cpus());
    weft_thread *self = weft_self();
    CHECK(self != NULL);
    CHECK_EQ(weft_worker_id(), 0);
    CHECK(weft_thread_id(self) != 0);
    CHECK_EQ(weft_thread_id(NULL), 0);
    CHECK_EQ(weft_join(self, NULL), EDEADLK);

    /* Second init: EBUSY, from the same thread, another user thread and a
     * plain kernel thread; the running runtime is unaffected. */
    CHECK_EQ(weft_init(NULL), EBUSY);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    CHECK_EQ(weft_init(&cfg), EBUSY);
    CHECK_EQ(weft_num_workers(), test_affinity_cpus());
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, user_init, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, EBUSY);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, pthread_init, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK_EQ((intptr_t)res, EBUSY);

    /* weft_finalize from a plain kernel thread or another user thread: EPERM,
     * and the runtime keeps running. */
    CHECK_EQ(pthread_create(&pt, NULL, pthread_finalize, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK_EQ((intptr_t)res, EPERM);
    CHECK_EQ(weft_spawn(&t, user_finalize, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, EPERM);
    CHECK_EQ(weft_num_workers(), test_affinity_cpus());
    CHECK_EQ(weft_spawn(&t, ret_arg, (void *)0x1234, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0x1234);
    CHECK(weft_self() == self);
    CHECK_EQ(weft_worker_id(), 0);

    CHECK_EQ(weft_finalize(), 0);

    /* After finalize: back to "not running"; a second finalize is EINVAL. */
    check_not_running();

    /* The runtime may be started again, and by another kernel thread; then
     * only that thread may finalize it. */
    CHECK_EQ(pthread_create(&pt, NULL, pthread_owner, NULL), 0);
    while (atomic_load(&owner_state) == 0)
        sched_yield();
    CHECK_EQ(atomic_load(&owner_state), 1);
    CHECK(weft_num_workers() > 0);
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_worker_id(), -1);
    CHECK_EQ(weft_init(NULL), EBUSY);
    CHECK_EQ(weft_finalize(), EPERM);
    CHECK_EQ(weft_spawn(&t, ret_arg, (void *)0x77, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0x77);
    atomic_store(&owner_state, 2);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK_EQ((intptr_t)res, 0);
    check_not_running();
    return 0;
}
