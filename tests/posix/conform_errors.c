/* conform_errors.c: the answers glibc gives where the Open POSIX Test
 * Suite looks (each check below failed under the drop-in before): a second
 * join is ESRCH; joining or detaching a detached thread is EINVAL;
 * PTHREAD_INHERIT_SCHED takes the creator's policy; priority ceilings
 * exist only for PTHREAD_PRIO_PROTECT; a rwlock write-locked before the
 * first thread is unlocked by its holder after it; a normal mutex may be
 * unlocked by another thread and relocking it deadlocks; a condition
 * variable may be destroyed right after a broadcast; a new thread's
 * CLOCK_THREAD_CPUTIME_ID starts near 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "pcheck.h"

static void *ret_null(void *arg)
{
    return arg;
}

static void *sleeper(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
    return NULL;
}

static void joins(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, ret_null, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_join(t, NULL) == ESRCH);

    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    CHECK(pthread_create(&t, &a, sleeper, NULL) == 0);
    CHECK(pthread_join(t, NULL) == EINVAL);
    CHECK(pthread_detach(t) == EINVAL);
    CHECK(pthread_attr_destroy(&a) == 0);
    usleep(300 * 1000); /* the detached thread ends */
}

static void *report_policy(void *arg)
{
    int *out = arg;
    struct sched_param sp;
    CHECK(pthread_getschedparam(pthread_self(), &out[0], &sp) == 0);
    out[1] = sp.sched_priority;
    return NULL;
}

static void inherit(void)
{
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    /* ignored: INHERIT_SCHED (the default) takes the creator's */
    CHECK(pthread_attr_setschedpolicy(&a, SCHED_RR) == 0);
    int got[2] = { -1, -1 };
    pthread_t t;
    CHECK(pthread_create(&t, &a, report_policy, got) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    int mine;
    struct sched_param sp;
    CHECK(pthread_getschedparam(pthread_self(), &mine, &sp) == 0);
    CHECK(got[0] == mine);
    CHECK(got[1] == sp.sched_priority);
    struct sched_param bad = { .sched_priority = 1000 };
    CHECK(pthread_setschedparam(pthread_self(), SCHED_FIFO, &bad) == EINVAL);
    CHECK(pthread_attr_destroy(&a) == 0);
}

static void ceilings(void)
{
    pthread_mutexattr_t ma;
    CHECK(pthread_mutexattr_init(&ma) == 0);
    int c = -1;
    CHECK(pthread_mutexattr_getprioceiling(&ma, &c) == 0);
    CHECK(c >= sched_get_priority_min(SCHED_FIFO) && c <= sched_get_priority_max(SCHED_FIFO));
    pthread_mutex_t m;
    CHECK(pthread_mutex_init(&m, &ma) == 0);
    CHECK(pthread_mutex_getprioceiling(&m, &c) == EINVAL);
    CHECK(pthread_mutex_destroy(&m) == 0);
    CHECK(pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_PROTECT) == 0);
    CHECK(pthread_mutexattr_setprioceiling(&ma, sched_get_priority_min(SCHED_FIFO) + 1) == 0);
    CHECK(pthread_mutex_init(&m, &ma) == 0);
    CHECK(pthread_mutex_getprioceiling(&m, &c) == 0);
    CHECK(c == sched_get_priority_min(SCHED_FIFO) + 1);
    int old = -1;
    CHECK(pthread_mutex_setprioceiling(&m, c + 1, &old) == 0);
    CHECK(old == c);
    CHECK(pthread_mutex_getprioceiling(&m, &c) == 0 && c == old + 1);
    CHECK(pthread_mutex_destroy(&m) == 0);
    CHECK(pthread_mutexattr_destroy(&ma) == 0);
}

static pthread_rwlock_t early = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int waiting_writer;

static void *late_writer(void *arg)
{
    (void)arg;
    atomic_store(&waiting_writer, 1);
    CHECK(pthread_rwlock_wrlock(&early) == 0);
    CHECK(pthread_rwlock_unlock(&early) == 0);
    return NULL;
}

static atomic_int relocked;

#ifndef __SANITIZE_THREAD__
static pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;

static void *take_normal(void *arg)
{
    (void)arg;
    CHECK(pthread_mutex_lock(&normal) == 0);
    return NULL; /* ends holding it */
}
#endif

static void *relock_normal(void *arg)
{
    (void)arg;
    pthread_mutex_t *m = malloc(sizeof *m);
    CHECK(m && pthread_mutex_init(m, NULL) == 0);
    CHECK(pthread_mutex_lock(m) == 0);
    pthread_mutex_lock(m); /* deadlocks, as under glibc */
    atomic_store(&relocked, 1);
    return NULL;
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
static void *relock_async(void *arg)
{
    pthread_mutex_t *m = arg;
    CHECK(pthread_mutex_lock(m) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    atomic_store(&relocked, 2);
    pthread_mutex_lock(m); /* deadlocks until cancelled */
    atomic_store(&relocked, 3);
    return NULL;
}
#endif

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t *cv;
static int go, in_wait, left;

static void *cond_waiter(void *arg)
{
    (void)arg;
    CHECK(pthread_mutex_lock(&cm) == 0);
    in_wait++;
    while (!go)
        CHECK(pthread_cond_wait(cv, &cm) == 0);
    left++;
    CHECK(pthread_mutex_unlock(&cm) == 0);
    return NULL;
}

static void cond_destroy_after_broadcast(void)
{
    for (int round = 0; round < 20; round++) {
        cv = malloc(sizeof *cv);
        CHECK(cv && pthread_cond_init(cv, NULL) == 0);
        go = in_wait = left = 0;
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            CHECK(pthread_create(&t[i], NULL, cond_waiter, NULL) == 0);
        for (;;) {
            CHECK(pthread_mutex_lock(&cm) == 0);
            int n = in_wait;
            if (n == 4)
                break;
            CHECK(pthread_mutex_unlock(&cm) == 0);
            sched_yield();
        }
        go = 1;
        CHECK(pthread_cond_broadcast(cv) == 0);
        CHECK(pthread_mutex_unlock(&cm) == 0);
        CHECK(pthread_cond_destroy(cv) == 0); /* nobody is blocked any more */
        memset(cv, 0xff, sizeof *cv);
        free(cv);
        for (int i = 0; i < 4; i++)
            CHECK(pthread_join(t[i], NULL) == 0);
        CHECK(left == 4);
    }
}

static void *cpu_time(void *arg)
{
    struct timespec *ts = arg;
    CHECK(clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts) == 0);
    return NULL;
}

static double cpu_now(void)
{
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    /* before any thread (under the drop-in: before the runtime starts) */
    CHECK(pthread_rwlock_wrlock(&early) == 0);
    double before = cpu_now();
    while (cpu_now() - before < 0.2)
        ; /* 200 ms of CPU for the initial thread */

    struct timespec child = { 9, 0 };
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cpu_time, &child) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(child.tv_sec == 0 && child.tv_nsec < 100 * 1000 * 1000);
    CHECK(cpu_now() >= before + 0.2); /* the initial thread's clock goes on */

    CHECK(pthread_create(&t, NULL, late_writer, NULL) == 0);
    while (!atomic_load(&waiting_writer))
        sched_yield();
    usleep(20 * 1000);
    CHECK(pthread_rwlock_unlock(&early) == 0);
    CHECK(pthread_join(t, NULL) == 0);

    joins();
    inherit();
    ceilings();

#ifndef __SANITIZE_THREAD__ /* which reports the unlock by another thread */
    CHECK(pthread_create(&t, NULL, take_normal, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(pthread_mutex_trylock(&normal) == EBUSY);
    CHECK(pthread_mutex_unlock(&normal) == 0); /* not ours: glibc allows it */
    CHECK(pthread_mutex_lock(&normal) == 0);
    CHECK(pthread_mutex_unlock(&normal) == 0);
#endif

    CHECK(pthread_create(&t, NULL, relock_normal, NULL) == 0);
    CHECK(pthread_detach(t) == 0);
    usleep(200 * 1000);
    CHECK(!atomic_load(&relocked));

    /* the way out of such a deadlock: an asynchronous cancellation (not
     * under the sanitizers: a thread cancelled asynchronously in their
     * interceptors corrupts their thread state, natively) */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
    atomic_store(&relocked, 0);
    CHECK(pthread_create(&t, NULL, relock_async, &m2) == 0);
    while (atomic_load(&relocked) != 2)
        sched_yield();
    usleep(50 * 1000);
    CHECK(pthread_cancel(t) == 0);
    void *res = NULL;
    CHECK(pthread_join(t, &res) == 0);
    CHECK(res == PTHREAD_CANCELED);
    CHECK(atomic_load(&relocked) == 2);
#endif

    cond_destroy_after_broadcast();
    return 0; /* ends the deadlocked thread */
}
