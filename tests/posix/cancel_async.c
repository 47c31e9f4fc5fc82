/* cancel_async: asynchronous cancellation of threads that compute without
 * any cancellation point (or any call): pthread_cancel ends them promptly,
 * their cleanup handlers run in order, and their join gives
 * PTHREAD_CANCELED. Two at once; one on a single worker, where the
 * canceller first has to get the worker from it (a child process run
 * with WEFT_WORKERS=1); one that turns asynchronous cancellation on and
 * off again (no cancellation while deferred); a request that was pending
 * when the type became asynchronous; cleanup handlers that compute while
 * another request comes (not cancelled again); setcanceltype's old values
 * and errors; the runtime's preemption signal never reaches the
 * program's handler; under the drop-in, threads that call libc in their
 * loops (cancelled in their own code only). The threads are cancelled only where they compute
 * or call the cancellation functions, never in a sanitizer's interceptor
 * (which conform_errors.c avoids natively), so it runs under them too.
 * Bounded by alarm(). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

static _Atomic int started;
static _Atomic int order[4]; /* cleanup handlers, in the order they ran */
static _Atomic int norder;
static volatile unsigned long sink[4];
static _Atomic int urg_seen;

static void note(void *arg)
{
    atomic_store(&order[atomic_fetch_add(&norder, 1)], (int)(intptr_t)arg);
}

static void go_async(void)
{
    int old = -1;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
}

/* Computes for ever with two cleanup handlers (arg: its sink). */
static void *spin_cleanup(void *arg)
{
    int i = (int)(intptr_t)arg;
    go_async();
    pthread_cleanup_push(note, (void *)1);
    pthread_cleanup_push(note, (void *)2);
    atomic_fetch_add(&started, 1);
    for (;;)
        sink[i]++; /* no call, no cancellation point */
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

/* Computes for ever, without cleanup handlers. */
static void *spin_bare(void *arg)
{
    int i = (int)(intptr_t)arg;
    go_async();
    atomic_fetch_add(&started, 1);
    for (;;)
        sink[i]++;
    return NULL;
}

/* Lets s seconds pass, yielding: the threads under test get the worker
 * at once (a sleeper would wait a quantum behind each that computes). */
static void pass(double s)
{
    double t0 = pt_now_s(CLOCK_MONOTONIC);
    while (pt_now_s(CLOCK_MONOTONIC) - t0 < s)
        sched_yield();
}

static void wait_started(int n)
{
    while (atomic_load(&started) < n)
        sched_yield();
    pass(0.02); /* they compute */
}

static void join_cancelled(pthread_t t)
{
    void *r = NULL;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
}

/* Two computing threads at once, one with cleanup handlers. */
static void two(void)
{
    pthread_t a, b;
    atomic_store(&started, 0);
    atomic_store(&norder, 0);
    CHECK(pthread_create(&a, NULL, spin_cleanup, (void *)0) == 0);
    CHECK(pthread_create(&b, NULL, spin_bare, (void *)1) == 0);
    wait_started(2);
    double t0 = pt_now_s(CLOCK_MONOTONIC);
    CHECK(pthread_cancel(a) == 0);
    CHECK(pthread_cancel(b) == 0);
    join_cancelled(a);
    join_cancelled(b);
    CHECK(pt_now_s(CLOCK_MONOTONIC) - t0 < 20.0); /* only stops a hung run */
    CHECK(atomic_load(&norder) == 2);
    CHECK(atomic_load(&order[0]) == 2 && atomic_load(&order[1]) == 1); /* innermost first */
}

/* The child's part: on one worker (under the drop-in) the spinner holds
 * it until the canceller's turn comes; one with handlers, one without. */
static void one_worker(void)
{
    for (int k = 0; k < 2; k++) {
        pthread_t a;
        atomic_store(&started, 0);
        atomic_store(&norder, 0);
        CHECK(pthread_create(&a, NULL, k ? spin_bare : spin_cleanup, (void *)2) == 0);
        wait_started(1);
        CHECK(pthread_cancel(a) == 0);
        join_cancelled(a);
        CHECK(atomic_load(&norder) == (k ? 0 : 2));
    }
}

static _Atomic int phase;
static _Atomic int reached;

/* Asynchronous, then deferred again: the request waits for the
 * pthread_testcancel the main thread lets it reach. */
static void *on_then_off(void *arg)
{
    (void)arg;
    int old = -1;
    go_async();
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ASYNCHRONOUS);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED);
    pthread_cleanup_push(note, (void *)3);
    atomic_store(&started, 1);
    while (atomic_load(&phase) == 0)
        sink[3]++; /* cancelled meanwhile: deferred, it goes on */
    atomic_store(&reached, 1);
    pthread_testcancel();
    atomic_store(&reached, 2);
    pthread_cleanup_pop(0);
    return NULL;
}

/* Starts fn with the phase and progress words reset, and cancels it once
 * it runs (it holds at phase 0). */
static pthread_t start_cancelled(void *(*fn)(void *))
{
    pthread_t t;
    atomic_store(&started, 0);
    atomic_store(&norder, 0);
    atomic_store(&phase, 0);
    atomic_store(&reached, 0);
    CHECK(pthread_create(&t, NULL, fn, NULL) == 0);
    wait_started(1);
    CHECK(pthread_cancel(t) == 0);
    return t;
}

static void deferred_again(void)
{
    pthread_t t = start_cancelled(on_then_off);
    pass(0.1);
    CHECK(atomic_load(&reached) == 0 && atomic_load(&norder) == 0);
    atomic_store(&phase, 1);
    join_cancelled(t);
    CHECK(atomic_load(&reached) == 1);
    CHECK(atomic_load(&norder) == 1 && atomic_load(&order[0]) == 3);
}

/* Cancelled while deferred; turning asynchronous cancellation on acts at
 * once (setcanceltype does not return). */
static void *pending_then_async(void *arg)
{
    (void)arg;
    atomic_store(&started, 1);
    while (atomic_load(&phase) == 0)
        sink[3]++;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    atomic_store(&reached, 1);
    for (;;)
        sink[3]++;
    return NULL;
}

static void pending_first(void)
{
    pthread_t t = start_cancelled(pending_then_async);
    atomic_store(&phase, 1);
    join_cancelled(t);
    CHECK(atomic_load(&reached) == 0);
}

/* A cleanup handler that computes while a second request comes: the
 * thread acts on its cancellation once. */
static _Atomic int in_cleanup, cleanup_go, cleanup_done;

static void long_cleanup(void *arg)
{
    (void)arg;
    atomic_store(&in_cleanup, 1);
    while (!atomic_load(&cleanup_go))
        sink[3]++;
    atomic_store(&cleanup_done, 1);
}

static void *spin_long_cleanup(void *arg)
{
    (void)arg;
    go_async();
    pthread_cleanup_push(long_cleanup, NULL);
    atomic_fetch_add(&started, 1);
    for (;;)
        sink[3]++;
    pthread_cleanup_pop(0);
    return NULL;
}

static void cleanup_not_cancelled(void)
{
    pthread_t t;
    atomic_store(&started, 0);
    CHECK(pthread_create(&t, NULL, spin_long_cleanup, NULL) == 0);
    wait_started(1);
    CHECK(pthread_cancel(t) == 0);
    while (!atomic_load(&in_cleanup))
        sched_yield();
    CHECK(pthread_cancel(t) == 0);
    pass(0.05);
    atomic_store(&cleanup_go, 1);
    join_cancelled(t);
    CHECK(atomic_load(&cleanup_done) == 1);
}

/* Under the drop-in only: threads that call malloc, snprintf, the clock
 * and sched_yield in their loops (not async-cancel-safe, so natively glibc may end
 * one inside malloc and deadlock the next caller) are cancelled in their
 * own code only, and malloc still works afterwards. */
#define LIBC_N 8
static volatile unsigned long libc_sink[LIBC_N];

static void *libc_loop(void *arg)
{
    int i = (int)(intptr_t)arg;
    go_async();
    atomic_fetch_add(&started, 1);
    for (;;) {
        if (i % 4 == 1) {
            char *m = malloc(64 + libc_sink[i]++ % 512);
            CHECK(m);
            memset(m, 1, 64);
            free(m);
        } else if (i % 4 == 2) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            libc_sink[i] += (unsigned long)ts.tv_nsec;
        } else if (i % 4 == 3) {
            char b[32];
            snprintf(b, sizeof b, "%lu", libc_sink[i]++);
        } else if (i == 4) {
            sched_yield(); /* in the runtime's code nearly all the time */
            libc_sink[i]++;
        } else {
            libc_sink[i]++;
        }
    }
    return NULL;
}

static void libc_callers(void)
{
    for (int r = 0; r < 3; r++) {
        pthread_t t[LIBC_N];
        atomic_store(&started, 0);
        for (int i = 0; i < LIBC_N; i++)
            CHECK(pthread_create(&t[i], NULL, libc_loop, (void *)(intptr_t)i) == 0);
        wait_started(LIBC_N);
        for (int i = 0; i < LIBC_N; i++)
            CHECK(pthread_cancel(t[i]) == 0);
        for (int i = 0; i < LIBC_N; i++)
            join_cancelled(t[i]);
        free(malloc(100));
    }
}

static void *type_values(void *arg)
{
    (void)arg;
    int old = -1;
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_DEFERRED); /* the default */
    CHECK(pthread_setcanceltype(12345, &old) == EINVAL);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL) == 0);
    CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0);
    CHECK(old == PTHREAD_CANCEL_ASYNCHRONOUS);
    return (void *)1;
}

static void on_urg(int sig)
{
    (void)sig;
    atomic_fetch_add(&urg_seen, 1);
}

int main(int argc, char **argv)
{
    alarm(100);
    if (argc > 1 && strcmp(argv[1], "one") == 0) {
        one_worker();
        return 0;
    }
    /* the single-worker part: a child with WEFT_WORKERS=1, made before
     * any thread (the drop-in's runtime starts at the first) */
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        setenv("WEFT_WORKERS", "1", 1);
        execl("/proc/self/exe", argv[0], "one", (char *)NULL);
        _exit(127);
    }

    pt_on_signal(SIGURG, on_urg, 0);

    pthread_t t;
    void *r = NULL;
    CHECK(pthread_create(&t, NULL, type_values, NULL) == 0);
    CHECK(pthread_join(t, &r) == 0 && r == (void *)1);

    two();
    deferred_again();
    pending_first();
    cleanup_not_cancelled();
    two();
    if (pt_dropin())
        libc_callers();
    CHECK(atomic_load(&urg_seen) == 0); /* the runtime's preemptions stay its own */

    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    puts("cancel_async ok");
    return 0;
}
