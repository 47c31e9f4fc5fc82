/* api.c: the error rules of weft_dist_*: before init, a second init,
 * several runs in a row with the result on every rank, the calls a run
 * refuses (ENOTSUP), and after finalize. */
#include <stdint.h>

#include "dist_test.h"

static void *child(void *arg)
{
    return (void *)((intptr_t)arg + 1);
}

static void *refusals(void *arg)
{
    (void)arg;
    weft_thread *t = NULL;
    weft_attr attr = WEFT_ATTR_INIT;
    attr.detached = 1;
    CHECK_EQ(weft_spawn(&t, child, NULL, &attr), ENOTSUP);
    attr.detached = 0;
    attr.bound = 1;
    CHECK_EQ(weft_spawn(&t, child, NULL, &attr), ENOTSUP);
    CHECK_EQ(weft_spawn(&t, NULL, NULL, NULL), EINVAL);
    CHECK_EQ(weft_spawn(NULL, child, NULL, NULL), EINVAL);

    weft_mutex m = WEFT_MUTEX_INIT;
    CHECK_EQ(weft_mutex_lock(&m), ENOTSUP);
    weft_group g = WEFT_GROUP_INIT;
    CHECK_EQ(weft_group_wait(&g), ENOTSUP);
    CHECK_EQ(weft_init(NULL), ENOTSUP);
    CHECK_EQ(weft_task_create(NULL, NULL, NULL, 0), ENOTSUP);
    CHECK_EQ(weft_dump(2), ENOTSUP);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_HIGH), ENOTSUP);
    weft_thread_info info;
    CHECK_EQ(weft_thread_info_get(NULL, &info), ENOTSUP);
    CHECK_EQ(weft_finalize(), ENOTSUP);
    CHECK_EQ(weft_dist_init(NULL, NULL), ENOTSUP);
    CHECK_EQ(weft_dist_run(child, NULL, NULL), ENOTSUP);
    CHECK_EQ(weft_dist_finalize(), ENOTSUP);
    errno = 0;
    CHECK_EQ(weft_sleep_ns(1000), -1);
    CHECK_EQ(errno, ENOTSUP);
    char buf[4];
    errno = 0;
    CHECK_EQ(weft_read(0, buf, sizeof buf), -1);
    CHECK_EQ(errno, ENOTSUP);

    CHECK_EQ(weft_spawn(&t, child, (void *)41, NULL), 0);
    CHECK_EQ(weft_detach(t), ENOTSUP);
    void *r = NULL;
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK_EQ((intptr_t)r, 42);
    CHECK_EQ(weft_join(NULL, &r), EINVAL);
    CHECK_EQ(weft_join(weft_self(), &r), EDEADLK);
    CHECK(weft_dist_rank() >= 0 && weft_dist_rank() < weft_dist_size());
    return (void *)7;
}

static void *self_handle(void *arg)
{
    (void)arg;
    return weft_self();
}

static void *value(void *arg)
{
    return (void *)((intptr_t)arg * 3);
}

int main(int argc, char **argv)
{
    CHECK_EQ(weft_dist_rank(), -1);
    CHECK_EQ(weft_dist_size(), 0);
    CHECK_EQ(weft_dist_run(value, NULL, NULL), EINVAL);
    CHECK_EQ(weft_dist_finalize(), EINVAL);
    dist_test_init(&argc, &argv);
    CHECK_EQ(weft_dist_init(&argc, &argv), EBUSY);
    CHECK(weft_dist_size() >= 1);
    CHECK(weft_dist_rank() >= 0 && weft_dist_rank() < weft_dist_size());
    for (intptr_t i = 1; i <= 5; i++) { /* several runs in a row */
        void *r = NULL;
        CHECK_EQ(weft_dist_run(value, (void *)i, &r), 0);
        CHECK_EQ((intptr_t)r, 3 * i); /* on every rank */
    }
    CHECK_EQ(weft_dist_run(value, (void *)1, NULL), 0); /* result may be NULL */
    void *r = NULL;
    CHECK_EQ(weft_dist_run(refusals, NULL, &r), 0);
    CHECK_EQ((intptr_t)r, 7);
    /* a run's thread handle is no single-process thread, run or not */
    CHECK_EQ(weft_dist_run(self_handle, NULL, &r), 0);
    CHECK(r != NULL);
    CHECK(weft_thread_id(r) != 0);
    CHECK_EQ(weft_detach(r), ENOTSUP);
    /* outside a run, libweft_dist is single-process weft */
    CHECK_EQ(weft_worker_id(), -1);
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_dist_finalize(), 0);
    CHECK_EQ(weft_dist_rank(), -1);
    CHECK_EQ(weft_dist_size(), 0);
    CHECK_EQ(weft_dist_finalize(), EINVAL);
    CHECK_EQ(weft_dist_run(value, NULL, NULL), EINVAL);
    return 0;
}
