/* sync: every mutex type (static initialisers included), timed locks,
 * condition variables with a clock, rwlocks, spin locks, barriers,
 * semaphores, once and keys with destructors, between threads. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

enum { NT = 8, ITERS = 2000 };

static pthread_mutex_t m_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t m_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t m_adapt = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_barrier_t bar;
static sem_t sem;
static long counter[4], rcounter, scounter;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static pthread_key_t key;
static _Atomic int dtor_runs;

static void once_fn(void)
{
    once_runs++;
}

static void key_dtor(void *v)
{
    CHECK(v != NULL);
    dtor_runs++;
}

static void *worker(void *arg)
{
    (void)arg;
    CHECK(pthread_once(&once, once_fn) == 0);
    CHECK(pthread_setspecific(key, &scounter) == 0);
    CHECK(pthread_getspecific(key) == &scounter);
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_t *ms[] = { &m_normal, &m_rec, &m_err, &m_adapt };
        pthread_mutex_t *mx = ms[i % 4];
        CHECK(pthread_mutex_lock(mx) == 0);
        if (mx == &m_rec) {
            CHECK(pthread_mutex_lock(mx) == 0);
            CHECK(pthread_mutex_trylock(mx) == 0);
            CHECK(pthread_mutex_unlock(mx) == 0);
            CHECK(pthread_mutex_unlock(mx) == 0);
        }
        if (mx == &m_err)
            CHECK(pthread_mutex_lock(mx) == EDEADLK);
        long c = counter[i % 4];
        if (i % 64 == 0)
            sched_yield();
        counter[i % 4] = c + 1;
        CHECK(pthread_mutex_unlock(mx) == 0);
        if (i % 8 == 0) {
            CHECK(pthread_rwlock_wrlock(&rw) == 0);
            long r = rcounter;
            sched_yield();
            rcounter = r + 1;
            CHECK(pthread_rwlock_unlock(&rw) == 0);
        } else {
            CHECK(pthread_rwlock_rdlock(&rw) == 0);
            CHECK(pthread_rwlock_rdlock(&rw) == 0); /* recursive read */
            (void)rcounter;
            CHECK(pthread_rwlock_unlock(&rw) == 0);
            CHECK(pthread_rwlock_unlock(&rw) == 0);
        }
        CHECK(pthread_spin_lock(&spin) == 0);
        scounter++;
        CHECK(pthread_spin_unlock(&spin) == 0);
    }
    /* all (N + main) meet; one is the serial thread */
    int r = pthread_barrier_wait(&bar);
    CHECK(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK(sem_post(&sem) == 0);
    return NULL;
}

/* m_err is unlocked only by its owner; a mutex cannot be unlocked by
 * another thread (errorcheck). */
static void *try_unlock(void *arg)
{
    CHECK(pthread_mutex_unlock(arg) == EPERM);
    CHECK(pthread_mutex_trylock(arg) == EBUSY);
    return NULL;
}

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static int ready;

static void *signaller(void *arg)
{
    (void)arg;
    usleep(20000);
    pt_set_signal(&cm, &cv, &ready);
    return NULL;
}

int main(void)
{
    CHECK(pthread_key_create(&key, key_dtor) == 0);
    CHECK(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE) == 0);
    CHECK(pthread_barrier_init(&bar, NULL, NT + 1) == 0);
    CHECK(sem_init(&sem, 0, 0) == 0);
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);
    int r = pthread_barrier_wait(&bar);
    CHECK(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
    for (int i = 0; i < NT; i++)
        CHECK(sem_wait(&sem) == 0);
    for (int i = 0; i < NT; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(counter[i] == (long)NT * ITERS / 4);
    CHECK(rcounter == (long)NT * (ITERS / 8));
    CHECK(scounter == (long)NT * ITERS);
    CHECK(once_runs == 1);
    CHECK(dtor_runs == NT);

    /* errorcheck ownership from another thread (TSan reports the wrong
     * thread's unlock that this checks is refused) */
#ifndef __SANITIZE_THREAD__
    CHECK(pthread_mutex_lock(&m_err) == 0);
    pthread_t u;
    CHECK(pthread_create(&u, NULL, try_unlock, &m_err) == 0);
    CHECK(pthread_join(u, NULL) == 0);
    CHECK(pthread_mutex_unlock(&m_err) == 0);
#else
    (void)try_unlock;
#endif

    /* timed lock times out while another holds it */
    struct timespec ts;
    CHECK(pthread_mutex_lock(&m_normal) == 0);
    ts = pt_deadline_ns(CLOCK_REALTIME, 20000000);
    CHECK(pthread_mutex_unlock(&m_normal) == 0);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_t tm;
    CHECK(pthread_mutex_init(&tm, &ma) == 0);
    CHECK(pthread_mutex_timedlock(&tm, &ts) == 0);
    CHECK(pthread_mutex_timedlock(&tm, &ts) == EDEADLK);
    CHECK(pthread_mutex_unlock(&tm) == 0);
    CHECK(pthread_mutex_destroy(&tm) == 0);

    /* a condition variable on CLOCK_MONOTONIC: a timeout, then a signal */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    clockid_t clk;
    CHECK(pthread_condattr_getclock(&ca, &clk) == 0 && clk == CLOCK_MONOTONIC);
    CHECK(pthread_cond_init(&cv, &ca) == 0);
    pthread_mutex_lock(&cm);
    ts = pt_deadline_ns(CLOCK_MONOTONIC, 10000000);
    CHECK(pthread_cond_timedwait(&cv, &cm, &ts) == ETIMEDOUT);
    pthread_t s;
    CHECK(pthread_create(&s, NULL, signaller, NULL) == 0);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += 30;
    while (!ready)
        CHECK(pthread_cond_clockwait(&cv, &cm, CLOCK_MONOTONIC, &ts) == 0);
    pthread_mutex_unlock(&cm);
    CHECK(pthread_join(s, NULL) == 0);

    /* rwlock: try and timed variants against a writer */
    CHECK(pthread_rwlock_wrlock(&rw) == 0);
    CHECK(pthread_rwlock_wrlock(&rw) == EDEADLK);
    ts = pt_deadline_ns(CLOCK_REALTIME, 1000000);
    CHECK(pthread_rwlock_unlock(&rw) == 0);
    CHECK(pthread_rwlock_tryrdlock(&rw) == 0);
    CHECK(pthread_rwlock_trywrlock(&rw) == EBUSY);
    CHECK(pthread_rwlock_unlock(&rw) == 0);

    /* a semaphore's timed wait */
    ts = pt_deadline_ns(CLOCK_REALTIME, 5000000);
    CHECK(sem_timedwait(&sem, &ts) == -1 && errno == ETIMEDOUT);
    CHECK(sem_post(&sem) == 0);
    int v;
    CHECK(sem_getvalue(&sem, &v) == 0 && v == 1);
    CHECK(sem_trywait(&sem) == 0);
    CHECK(sem_trywait(&sem) == -1 && errno == EAGAIN);
    printf("ok\n");
    return 0;
}
