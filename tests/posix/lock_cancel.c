/* lock_cancel: a thread with asynchronous cancellation enabled that waits
 * in pthread_mutex_lock for another thread's mutex is cancelled there
 * (the Open POSIX suite's pthread_setcanceltype/1-1), for each type: its
 * cleanup handler runs, its join gives PTHREAD_CANCELED, and the mutex
 * stays the holder's. So is one waiting for a rwlock, at a barrier or on
 * a spin lock. A deferred cancellation does not break the lock
 * off (it is no cancellation point): the thread takes the mutex and is
 * cancelled at its next cancellation point. Such waiters still take the
 * mutex when it is freed by pthread_mutex_unlock or by a condition
 * variable's wait, and keep mutual exclusion with other lockers. The
 * asynchronous cases are left out under the sanitizers (a thread
 * cancelled asynchronously in their interceptors corrupts their thread
 * state, natively). Bounded by alarm(). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "pcheck.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define ASYNC_CASES 1
#endif

static pthread_mutex_t mu;
static _Atomic int stage; /* 1: the thread is about to lock */
static _Atomic int cleaned;
static _Atomic int locked; /* the thread got past pthread_mutex_lock */

static void on_cleanup(void *arg)
{
    (void)arg;
    atomic_store(&cleaned, 1);
}

/* arg: the cancellation type; locks mu, which main holds. */
static void *locker(void *arg)
{
    CHECK(pthread_setcanceltype((int)(intptr_t)arg, NULL) == 0);
    pthread_cleanup_push(on_cleanup, NULL);
    atomic_store(&stage, 1);
    CHECK(pthread_mutex_lock(&mu) == 0);
    atomic_store(&locked, 1);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    pthread_testcancel();
    pthread_cleanup_pop(0);
    return NULL;
}

static void init_type(int type)
{
    pthread_mutexattr_t a;
    CHECK(pthread_mutexattr_init(&a) == 0);
    CHECK(pthread_mutexattr_settype(&a, type) == 0);
    CHECK(pthread_mutex_init(&mu, &a) == 0);
    CHECK(pthread_mutexattr_destroy(&a) == 0);
}

/* Starts locker (type) while main holds mu, and lets it wait there. */
static pthread_t start_waiting(int cancel_type)
{
    atomic_store(&stage, 0);
    atomic_store(&cleaned, 0);
    atomic_store(&locked, 0);
    CHECK(pthread_mutex_lock(&mu) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, locker, (void *)(intptr_t)cancel_type) == 0);
    while (!atomic_load(&stage))
        usleep(1000);
    usleep(50 * 1000); /* in pthread_mutex_lock by now */
    return t;
}

#ifdef ASYNC_CASES
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void async_cancelled(int type)
{
    init_type(type);
    pthread_t t = start_waiting(PTHREAD_CANCEL_ASYNCHRONOUS);
    CHECK(pthread_cancel(t) == 0);
    void *r = NULL;
    CHECK(pthread_join(t, &r) == 0); /* before main unlocks */
    CHECK(r == PTHREAD_CANCELED);
    CHECK(atomic_load(&cleaned) && !atomic_load(&locked));
    CHECK(pthread_mutex_trylock(&mu) == (type == PTHREAD_MUTEX_RECURSIVE ? 0 : EBUSY));
    if (type == PTHREAD_MUTEX_RECURSIVE)
        CHECK(pthread_mutex_unlock(&mu) == 0);
    CHECK(pthread_mutex_unlock(&mu) == 0);
    CHECK(pthread_mutex_destroy(&mu) == 0);
}

/* An asynchronous waiter takes the mutex that main frees (how: 0 by
 * pthread_mutex_unlock, 1 by waiting on a condition variable). */
static void async_takes(int how)
{
    init_type(PTHREAD_MUTEX_DEFAULT);
    pthread_t t = start_waiting(PTHREAD_CANCEL_ASYNCHRONOUS);
    if (how == 0) {
        CHECK(pthread_mutex_unlock(&mu) == 0);
    } else {
        while (!atomic_load(&locked)) {
            struct timespec abs = pt_deadline_ns(CLOCK_REALTIME, 20 * 1000 * 1000);
            int r = pthread_cond_timedwait(&cv, &mu, &abs);
            CHECK(r == 0 || r == ETIMEDOUT);
        }
        CHECK(pthread_mutex_unlock(&mu) == 0);
    }
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(atomic_load(&locked) && !atomic_load(&cleaned));
    CHECK(pthread_mutex_destroy(&mu) == 0);
}

static pthread_rwlock_t rw;
static pthread_barrier_t bar;
static pthread_spinlock_t spin;

/* arg: 0 rdlock, 1 wrlock, 2 barrier, 3 spin lock: waits for ever. */
static void *other_waiter(void *arg)
{
    int how = (int)(intptr_t)arg;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    pthread_cleanup_push(on_cleanup, NULL);
    atomic_store(&stage, 1);
    if (how == 0)
        pthread_rwlock_rdlock(&rw);
    else if (how == 1)
        pthread_rwlock_wrlock(&rw);
    else if (how == 2)
        pthread_barrier_wait(&bar);
    else
        pthread_spin_lock(&spin);
    atomic_store(&locked, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

/* The other objects' waits, main holding what the thread waits for. */
static void other_cancelled(int how)
{
    atomic_store(&stage, 0);
    atomic_store(&cleaned, 0);
    atomic_store(&locked, 0);
    /* fresh objects: glibc's keep a cancelled waiter's marks */
    CHECK(pthread_rwlock_init(&rw, NULL) == 0);
    CHECK(pthread_rwlock_wrlock(&rw) == 0);
    CHECK(pthread_barrier_init(&bar, NULL, 2) == 0);
    CHECK(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE) == 0);
    CHECK(pthread_spin_lock(&spin) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_waiter, (void *)(intptr_t)how) == 0);
    while (!atomic_load(&stage))
        usleep(1000);
    usleep(50 * 1000);
    CHECK(pthread_cancel(t) == 0);
    void *r = NULL;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
    CHECK(atomic_load(&cleaned) && !atomic_load(&locked));
    CHECK(pthread_spin_unlock(&spin) == 0);
    CHECK(pthread_spin_destroy(&spin) == 0);
    /* bar is not destroyed: the cancelled thread's arrival stays counted
     * (glibc's destroy would wait for it for ever) */
    CHECK(pthread_rwlock_unlock(&rw) == 0);
}

/* Threads that alternate the cancellation types count under mu. */
enum { ROUNDS = 3000 };
static long counter;

static void *count_under(void *arg)
{
    intptr_t i = (intptr_t)arg;
    for (int k = 0; k < ROUNDS; k++) {
        int type = (k + i) % 2 ? PTHREAD_CANCEL_ASYNCHRONOUS : PTHREAD_CANCEL_DEFERRED;
        CHECK(pthread_setcanceltype(type, NULL) == 0);
        CHECK(pthread_mutex_lock(&mu) == 0);
        long c = counter;
        if (k % 64 == 0)
            sched_yield(); /* others queue meanwhile */
        counter = c + 1;
        CHECK(pthread_mutex_unlock(&mu) == 0);
    }
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL) == 0);
    return arg;
}
#endif

/* A deferred request leaves the lock's wait alone: the thread locks and
 * unlocks mu once main frees it, then is cancelled at testcancel. */
static void deferred_waits(void)
{
    init_type(PTHREAD_MUTEX_DEFAULT);
    pthread_t t = start_waiting(PTHREAD_CANCEL_DEFERRED);
    CHECK(pthread_cancel(t) == 0);
    usleep(50 * 1000);
    CHECK(!atomic_load(&locked) && !atomic_load(&cleaned));
    CHECK(pthread_mutex_unlock(&mu) == 0);
    void *r = NULL;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
    CHECK(atomic_load(&locked) && atomic_load(&cleaned));
    CHECK(pthread_mutex_destroy(&mu) == 0);
}

int main(void)
{
    alarm(60);
    deferred_waits();
#ifdef ASYNC_CASES
    const int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE,
                          PTHREAD_MUTEX_DEFAULT };
    for (int i = 0; i < 4; i++)
        async_cancelled(types[i]);
    async_takes(0);
    async_takes(1);
    for (int how = 0; how < 4; how++)
        other_cancelled(how);
    init_type(PTHREAD_MUTEX_DEFAULT);
    pt_run4(count_under, 1);
    CHECK(counter == 4 * ROUNDS);
    CHECK(pthread_mutex_destroy(&mu) == 0);
#endif
    return 0;
}
