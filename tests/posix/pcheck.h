/* pcheck.h: CHECK and small helpers shared by the plain POSIX tests (no
 * weft header: they run natively and under the drop-in). Plain C that
 * also compiles as C++ for the .cpp tests. */
#ifndef PCHECK_H
#define PCHECK_H
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The kernel threads listed in dir (a /proc/PID/task), or -1 if it cannot
 * be opened. */
static inline int pt_count_tasks(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* This process's kernel threads. */
static inline int pt_tasks(void)
{
    int n = pt_count_tasks("/proc/self/task");
    CHECK(n >= 0);
    return n;
}

/* Whether this run is under the drop-in (the test sets the variable). */
static inline int pt_dropin(void)
{
    return getenv("WEFT_POSIX_TEST_DROPIN") != NULL;
}

/* Under the drop-in, k kernel threads (for what) must be at most
 * 2 x CPUs + 16; natively each thread is one, which is not checked. */
static inline void pt_check_few_tasks(int k, const char *what)
{
    if (!pt_dropin())
        return;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (k > 2 * cpus + 16)
        fprintf(stderr, "%d kernel threads for %s\n", k, what);
    CHECK(k <= 2 * cpus + 16);
}

/* Clock c now, in seconds. */
static inline double pt_now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The absolute time ns nanoseconds (less than a second) from now on c. */
static inline struct timespec pt_deadline_ns(clockid_t c, long ns)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    ts.tv_nsec += ns;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

/* Runs fn in 4 threads with arguments 1 to 4 and checks each returns its
 * argument times mul. */
static inline void pt_run4(void *(*fn)(void *), intptr_t mul)
{
    pthread_t t[4];
    for (intptr_t i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, fn, (void *)(i + 1)) == 0);
    for (intptr_t i = 0; i < 4; i++) {
        void *r;
        CHECK(pthread_join(t[i], &r) == 0);
        CHECK(r == (void *)((i + 1) * mul));
    }
}

/* Sets *flag to 1 under mu and signals cv. */
static inline void pt_set_signal(pthread_mutex_t *mu, pthread_cond_t *cv, int *flag)
{
    pthread_mutex_lock(mu);
    *flag = 1;
    pthread_cond_signal(cv);
    pthread_mutex_unlock(mu);
}

/* Adds one to *count under mu and signals cv: a thread says it started. */
static inline void pt_count_signal(pthread_mutex_t *mu, pthread_cond_t *cv, int *count)
{
    pthread_mutex_lock(mu);
    (*count)++;
    pthread_cond_signal(cv);
    pthread_mutex_unlock(mu);
}

/* Waits on cv under mu until *count reaches n (see pt_count_signal). */
static inline void pt_wait_count(pthread_mutex_t *mu, pthread_cond_t *cv, const int *count, int n)
{
    pthread_mutex_lock(mu);
    while (*count < n)
        pthread_cond_wait(cv, mu);
    pthread_mutex_unlock(mu);
}

/* A thread that yields in a loop, counting its rounds, until stopped: it
 * shows that other threads run meanwhile. Its fields are accessed with
 * GCC's __atomic builtins (sequentially consistent), as this header also
 * compiles as C++, which has no _Atomic before C++23. */
struct pt_spinner {
    int stop;   /* set by pt_spinner_stop */
    long spins; /* rounds so far */
};

/* The spinner's thread body; arg is its struct pt_spinner. */
static inline void *pt_spinner_run(void *arg)
{
    struct pt_spinner *s = (struct pt_spinner *)arg;
    while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&s->spins, 1, __ATOMIC_SEQ_CST);
        sched_yield();
    }
    return NULL;
}

/* The rounds s has made so far. */
static inline long pt_spinner_spins(struct pt_spinner *s)
{
    return __atomic_load_n(&s->spins, __ATOMIC_SEQ_CST);
}

/* Ends s's loop (then join its thread). */
static inline void pt_spinner_stop(struct pt_spinner *s)
{
    __atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
}

/* pthread_sigmask(how, {sig}), checked: a thread blocks or opens one
 * signal. */
static inline void pt_mask_one(int how, int sig)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK(pthread_sigmask(how, &s, NULL) == 0);
}

/* sigaction(sig) with handler and flags, an empty mask, checked. */
static inline void pt_on_signal(int sig, void (*handler)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

#endif
