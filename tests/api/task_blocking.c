/* Tests blocking calls inside a task: each call that would wait fails with
 * EPERM (a syscall mirror with -1 and errno EPERM) instead of stalling the
 * worker: a held mutex, rwlock, an empty semaphore, cond wait, barrier,
 * joining a running thread, a group with a running member, weft_blocking,
 * a read of an empty pipe, a sleep, a poll with a timeout. Calls that need
 * no wait work (a free mutex, a posted semaphore, trylock, joining a
 * finished thread, sleep of 0). On one worker, so a stall is a hang (the
 * alarm turns it into a failure). */
#define _GNU_SOURCE
#include <poll.h>
#include <stdatomic.h>

#include "testutil.h"

static weft_mutex held = WEFT_MUTEX_INIT, free_m = WEFT_MUTEX_INIT;
static weft_rwlock rw = WEFT_RWLOCK_INIT;
static weft_cond cv = WEFT_COND_INIT;
static weft_sem sem, release_sem, done;
static weft_barrier bar;
static weft_group grp = WEFT_GROUP_INIT;
static weft_thread *running, *finished;
static int pipefd[2];
static atomic_int checks;

static void *waits_for_release(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&release_sem), 0);
    return NULL;
}

static void *returns_at_once(void *arg)
{
    return arg;
}

static void nothing(void *arg)
{
    (void)arg;
}

static void blocking_fn(void *arg)
{
    (void)arg;
    CHECK(weft_self() == NULL);
    /* would wait: EPERM */
    CHECK_EQ(weft_mutex_lock(&held), EPERM);
    CHECK_EQ(weft_mutex_trylock(&held), EBUSY);
    CHECK_EQ(weft_rwlock_rdlock(&rw), EPERM);
    CHECK_EQ(weft_rwlock_wrlock(&rw), EPERM);
    CHECK_EQ(weft_sem_wait(&sem), EPERM);
    CHECK_EQ(weft_sem_trywait(&sem), EAGAIN);
    CHECK_EQ(weft_barrier_wait(&bar), EPERM);
    CHECK_EQ(weft_join(running, NULL), EPERM);
    CHECK_EQ(weft_group_wait(&grp), EPERM);
    CHECK_EQ(weft_blocking(nothing, NULL), EPERM);
    char c;
    errno = 0;
    CHECK_EQ(weft_read(pipefd[0], &c, 1), -1);
    CHECK_EQ(errno, EPERM);
    errno = 0;
    CHECK_EQ(weft_sleep_ns(1000000), -1);
    CHECK_EQ(errno, EPERM);
    errno = 0;
    CHECK_EQ(weft_poll(pipefd[0], POLLIN, 100), -1);
    CHECK_EQ(errno, EPERM);
    /* needs no wait: works */
    CHECK_EQ(weft_mutex_lock(&free_m), 0);
    CHECK_EQ(weft_cond_wait(&cv, &free_m), EPERM);
    CHECK_EQ(weft_cond_signal(&cv), 0);
    CHECK_EQ(weft_mutex_unlock(&free_m), 0);
    CHECK_EQ(weft_sem_post(&sem), 0);
    CHECK_EQ(weft_sem_wait(&sem), 0);
    void *r = NULL;
    CHECK_EQ(weft_join(finished, &r), 0);
    CHECK(r == &checks);
    CHECK_EQ(weft_sleep_ns(0), 0);
    CHECK_EQ(weft_poll(pipefd[0], POLLIN, 0), 0);
    weft_yield();
    atomic_fetch_add(&checks, 1);
    CHECK_EQ(weft_sem_post(&done), 0);
}

int main(void)
{
    test_clear_env();
    alarm(30);
    test_init(1, TEST_POLICY_ENV);
    CHECK_EQ(pipe(pipefd), 0);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    CHECK_EQ(weft_sem_init(&release_sem, 0), 0);
    CHECK_EQ(weft_sem_init(&done, 0), 0);
    CHECK_EQ(weft_barrier_init(&bar, 2), 0);
    CHECK_EQ(weft_mutex_lock(&held), 0);
    CHECK_EQ(weft_rwlock_wrlock(&rw), 0);
    CHECK_EQ(weft_spawn(&running, waits_for_release, NULL, NULL), 0);
    CHECK_EQ(weft_group_spawn(&grp, waits_for_release, NULL, 0, NULL), 0);
    CHECK_EQ(weft_spawn(&finished, returns_at_once, &checks, NULL), 0);
    weft_yield(); /* let them start (and the last one finish) */
    CHECK_EQ(weft_task_create(NULL, blocking_fn, NULL, 0), 0);
    CHECK_EQ(weft_sem_wait(&done), 0);
    CHECK_EQ(atomic_load(&checks), 1);
    CHECK_EQ(weft_sem_post(&release_sem), 0);
    CHECK_EQ(weft_sem_post(&release_sem), 0);
    CHECK_EQ(weft_join(running, NULL), 0);
    CHECK_EQ(weft_group_wait(&grp), 0);
    CHECK_EQ(weft_mutex_unlock(&held), 0);
    CHECK_EQ(weft_rwlock_unlock(&rw), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
