/* Tests mltp_init / mltp_finalize: calls before init fail with EAGAIN
 * (creation, errno) or EINVAL (finalize); a negative count is EINVAL; 0
 * means the CPUs of the affinity mask; a second init (mltp or weft) is
 * EBUSY; WEFT_WORKERS and WEFT_SPAWN_POLICY do not override the seed's
 * policy; finalize from another kernel thread is EPERM; finalize waits for
 * every thread, bound ones included; init and finalize cycle. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <mltp.h>

#include "check.h"
#include "mltp_test.h"

static atomic_int ran;

static void marker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        mltp_yield();
    atomic_fetch_add(&ran, 1);
}

static void *slow_bound(void *arg)
{
    usleep(20000);
    atomic_fetch_add(&ran, 1);
    return arg;
}

static atomic_int finalize_rc;

static void *finalizer(void *arg)
{
    (void)arg;
    atomic_store(&finalize_rc, mltp_finalize());
    return NULL;
}

static void join_it(void *t)
{
    CHECK_EQ(mltp_join(t), 0);
}

int main(void)
{
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_SPAWN_POLICY");
    unsetenv("WEFT_STACK_SIZE");

    /* before init */
    errno = 0;
    CHECK(mltp_create(mt_nothing, NULL) == NULL);
    CHECK_EQ(errno, EAGAIN);
    errno = 0;
    CHECK(mltp_vcreate(mt_vnothing, 2, (void *)1, (void *)2) == NULL);
    CHECK_EQ(errno, EAGAIN);
    errno = 0;
    CHECK(mltp_create_bound(mt_bnothing, NULL, 0, NULL) == NULL);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(mltp_finalize(), EINVAL);
    mltp_yield(); /* outside the runtime: returns */
    mltp_yield_to_first();
    CHECK_EQ(mltp_init(-1), EINVAL);

    /* 0 = the CPUs in the affinity mask */
    cpu_set_t set;
    CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    CHECK_EQ(mltp_init(0), 0);
    CHECK_EQ(weft_num_workers(), CPU_COUNT(&set));
    CHECK_EQ(mltp_init(1), EBUSY);
    CHECK_EQ(weft_init(NULL), EBUSY);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, finalizer, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(atomic_load(&finalize_rc), EPERM);
    CHECK_EQ(mltp_finalize(), 0);
    CHECK_EQ(weft_num_workers(), 0);

    /* the environment does not change the seed's policy */
    setenv("WEFT_WORKERS", "3", 1);
    setenv("WEFT_SPAWN_POLICY", "work-first", 1);
    CHECK_EQ(mltp_init(1), 0);
    CHECK_EQ(weft_num_workers(), 1);
    atomic_store(&ran, 0);
    mltp_thread_t *t = mltp_create(marker, NULL);
    CHECK(t != NULL);
    CHECK_EQ(atomic_load(&ran), 0); /* queued, not run at once */
    CHECK_EQ(mltp_join(t), 0);
    CHECK_EQ(atomic_load(&ran), 1);
    CHECK_EQ(mltp_finalize(), 0);
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_SPAWN_POLICY");

    /* cycles; finalize waits for threads nobody joined, bound ones too */
    for (int cycle = 0; cycle < 3; cycle++) {
        int vp = 1 + cycle % 2;
        CHECK_EQ(mltp_init(vp), 0);
        CHECK_EQ(weft_num_workers(), vp);
        atomic_store(&ran, 0);
        for (int i = 0; i < 50; i++)
            CHECK(mltp_create(marker, NULL) != NULL);
        mltp_thread_t *b = mltp_create_bound(slow_bound, NULL, 0, NULL);
        CHECK(b != NULL);
        /* Joined by a user thread: weft_finalize does not yet free the
         * descriptor of a bound thread nobody joined, and the initial thread
         * woken by a bound thread is mltp_wake_initial's case. */
        CHECK(mltp_create(join_it, b) != NULL);
        CHECK_EQ(mltp_finalize(), 0);
        CHECK_EQ(atomic_load(&ran), 51);
        errno = 0;
        CHECK(mltp_create(mt_nothing, NULL) == NULL);
        CHECK_EQ(errno, EAGAIN);
        CHECK_EQ(mltp_finalize(), EINVAL);
    }

    /* weft's own runtime after mltp's */
    CHECK_EQ(weft_init(NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    printf("mltp_lifecycle: ok\n");
    return 0;
}
