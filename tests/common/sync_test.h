/* sync_test.h: helpers shared by the synchronisation tests: starting the runtime, user threads and plain pthreads side by side, deadlines and a watchdog.
 * Include after testutil.h (which wants _GNU_SOURCE first). */
#ifndef WEFT_TEST_SYNC_TEST_H
#define WEFT_TEST_SYNC_TEST_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* Kills the process (SIGALRM) if the test runs longer than s seconds
 * (doubled under a sanitizer): a hang is a failure, not a ctest timeout. */
static inline void st_watchdog(unsigned s)
{
    alarm(TEST_SANITIZED ? 4 * s : s);
}

/* Starts the runtime with the given number of workers (0 = CPUs). */
static inline void st_init(int workers)
{
    test_clear_env();
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    CHECK_EQ(weft_init(&cfg), 0);
}

static inline void st_finalize(void)
{
    CHECK_EQ(weft_finalize(), 0);
}

static inline weft_thread *st_spawn(void *(*fn)(void *), void *arg)
{
    weft_thread *t = NULL;
    CHECK_EQ(weft_spawn(&t, fn, arg, NULL), 0);
    return t;
}

static inline void *st_join(weft_thread *t)
{
    void *r = NULL;
    CHECK_EQ(weft_join(t, &r), 0);
    return r;
}

static inline pthread_t st_pthread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fn, arg), 0);
    return t;
}

/* ---- user threads and plain pthreads side by side --------------------------------- */

/* Starts n plain pthreads running fn, the i-th with the argument
 * first + i * step (step 0: the same argument for all). */
static inline void st_pthreads(pthread_t *p, int n, void *(*fn)(void *), intptr_t first,
                               intptr_t step)
{
    for (int i = 0; i < n; i++)
        p[i] = st_pthread(fn, (void *)(first + i * step));
}

/* Spawns n user threads running fn, the i-th with the argument
 * first + i * step (step 0: the same argument for all). */
static inline void st_spawns(weft_thread **u, int n, void *(*fn)(void *), intptr_t first,
                             intptr_t step)
{
    for (int i = 0; i < n; i++)
        u[i] = st_spawn(fn, (void *)(first + i * step));
}

static inline void st_join_n(weft_thread *const *u, int n)
{
    for (int i = 0; i < n; i++)
        st_join(u[i]);
}

/* Yields until *count reaches n: the plain threads of a mixed test count
 * themselves there as they end, so that a user thread joins them only
 * when pthread_join no longer blocks its worker. */
static inline void st_await(atomic_int *count, int n)
{
    while (atomic_load(count) < n)
        weft_yield();
}

static inline void st_pthread_join_n(const pthread_t *p, int n)
{
    for (int i = 0; i < n; i++)
        CHECK_EQ(pthread_join(p[i], NULL), 0);
}

/* The end of a mixed run: joins the nu user threads, waits until the np
 * plain threads counted themselves in *plain_done, then joins them. */
static inline void st_join_mixed(weft_thread *const *u, int nu, const pthread_t *p, int np,
                                 atomic_int *plain_done)
{
    st_join_n(u, nu);
    st_await(plain_done, np);
    st_pthread_join_n(p, np);
}

/* Counts the calling thread in *plain_done if it is a plain one (the last
 * act of a body that both kinds of thread run). */
static inline void st_plain_done(atomic_int *plain_done)
{
    if (!weft_self())
        atomic_fetch_add(plain_done, 1);
}

/* Takes the mutex with weft_mutex_lock or, where try_first is set, with
 * weft_mutex_trylock and weft_mutex_lock only if that found it held. */
static inline void st_mutex_take(weft_mutex *m, int try_first)
{
    int r = try_first ? weft_mutex_trylock(m) : EBUSY;
    if (r == EBUSY)
        r = weft_mutex_lock(m);
    CHECK_EQ(r, 0);
}

/* Takes one unit with weft_sem_wait or, where try_first is set, with
 * weft_sem_trywait and weft_sem_wait only if that found none. */
static inline void st_sem_take(weft_sem *s, int try_first)
{
    int r = try_first ? weft_sem_trywait(s) : EAGAIN;
    if (r == EAGAIN)
        r = weft_sem_wait(s);
    CHECK_EQ(r, 0);
}

/* Checks that each of the n counters is 1 (a barrier: one serial thread
 * per episode). */
static inline void st_check_all_one(atomic_int *count, int n)
{
    for (int i = 0; i < n; i++)
        CHECK_EQ(atomic_load(&count[i]), 1);
}

/* Runs a mixed test with 1 worker, one per CPU (0) and more workers than
 * CPUs (2 * CPUs + 1, so that the kernel preempts them), then says ok. */
static inline void st_run_worker_counts(void (*run)(int workers), const char *name)
{
    run(1);
    run(0);
    run(2 * test_affinity_cpus() + 1);
    printf("%s: ok\n", name);
}

/* Joins a pthread from a user thread without holding the worker hostage
 * while it still runs: poll with weft_yield until it has flagged done. */
static inline void st_pthread_join(pthread_t t, atomic_int *done)
{
    while (done && !atomic_load(done))
        weft_yield();
    CHECK_EQ(pthread_join(t, NULL), 0);
}

/* An absolute CLOCK_REALTIME deadline ms milliseconds from now (negative: past). */
static inline struct timespec st_deadline_ms(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    } else if (ts.tv_nsec < 0) {
        ts.tv_sec--;
        ts.tv_nsec += 1000000000L;
    }
    return ts;
}

static inline double st_realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleeps the calling kernel thread (use from pthreads, or briefly from the
 * initial thread when no user thread needs its worker). */
static inline void st_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Yields for about ms milliseconds (from a user thread: lets others run). */
static inline void st_yield_ms(long ms)
{
    double end = check_now() + (double)ms * 1e-3;
    while (check_now() < end)
        weft_yield();
}

#endif
