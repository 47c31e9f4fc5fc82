/* bound_named: WEFT_POSIX_BOUND=reader,raw (set here, before the first
 * thread, with WEFT_WORKERS=1): a thread that names itself "reader" has a
 * kernel thread of its own when pthread_setname_np returns (its gettid()
 * differs from a user thread's that runs meanwhile, and stays the same
 * across a blocking read on a pipe and yields), and while it blocks in
 * read() (then in a raw read system call) the other threads run and feed
 * the pipe; a thread named "plain", not in the list, stays a user thread
 * (under the drop-in its gettid() is the one worker's); a thread named
 * "reader" by main once it runs is bound from its next cancellation point;
 * a bound thread ends by pthread_exit with its result. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pcheck.h"

static int fds[2];
static _Atomic int named;   /* the reader named itself */
static _Atomic pid_t r_tid; /* its gettid() then */
static _Atomic pid_t c_tid; /* the other thread's, recorded after that */
static _Atomic int c_ready; /* c_tid is set */
static _Atomic long ticks;  /* the other thread's progress */

static pid_t tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static void *reader(void *arg)
{
    const char *name = arg;
    int rc = pthread_setname_np(pthread_self(), name);
    if (rc)
        fprintf(stderr, "setname: %s\n", strerror(rc));
    CHECK(rc == 0);
    char got[16];
    CHECK(pthread_getname_np(pthread_self(), got, sizeof got) == 0);
    CHECK(strcmp(got, name) == 0);
    pid_t me = tid();
    atomic_store(&r_tid, me);
    atomic_store(&named, 1);
    while (!atomic_load(&c_ready))
        sched_yield();
    char c;
    if (strcmp(name, "raw") == 0)
        CHECK(syscall(SYS_read, fds[0], &c, 1) == 1); /* blocks its kernel thread */
    else
        CHECK(read(fds[0], &c, 1) == 1);
    CHECK(c == 'x');
    CHECK(tid() == me);
    for (int i = 0; i < 10; i++) {
        sched_yield();
        CHECK(tid() == me);
    }
    return NULL;
}

/* Runs while the reader blocks: records its tid, makes progress, then
 * feeds the pipe. */
static void *other(void *arg)
{
    (void)arg;
    while (!atomic_load(&named))
        sched_yield();
    atomic_store(&c_tid, tid());
    atomic_store(&c_ready, 1);
    for (int i = 0; i < 1000; i++) {
        atomic_fetch_add(&ticks, 1);
        sched_yield();
    }
    usleep(20000); /* the reader is in read() by now, or soon */
    CHECK(write(fds[1], "x", 1) == 1);
    return NULL;
}

static void *plain(void *arg)
{
    CHECK(pthread_setname_np(pthread_self(), "plain") == 0);
    *(pid_t *)arg = tid();
    return NULL;
}

static _Atomic int go;
static _Atomic pid_t n_tid;
static _Atomic int checked; /* main compared its tid with n_tid */

/* Named by main once it runs: bound from its next cancellation point. */
static void *named_later(void *arg)
{
    (void)arg;
    while (!atomic_load(&go))
        usleep(1000);
    usleep(1); /* a cancellation point after the naming */
    pid_t me = tid();
    atomic_store(&n_tid, me);
    /* alive while main compares: once it ends, its kernel thread may
     * run the worker again */
    while (!atomic_load(&checked))
        usleep(1000);
    CHECK(tid() == me);
    return NULL;
}

/* Bound by its name, then ends by pthread_exit. */
static void *exits(void *arg)
{
    (void)arg;
    CHECK(pthread_setname_np(pthread_self(), "reader") == 0);
    pid_t me = tid();
    sched_yield();
    CHECK(tid() == me);
    pthread_exit((void *)(intptr_t)42);
}

static void round_of(const char *name)
{
    atomic_store(&named, 0);
    atomic_store(&c_ready, 0);
    atomic_store(&ticks, 0);
    CHECK(pipe(fds) == 0);
    pthread_t r, o;
    CHECK(pthread_create(&r, NULL, reader, (void *)name) == 0);
    CHECK(pthread_create(&o, NULL, other, NULL) == 0);
    CHECK(pthread_join(o, NULL) == 0);
    CHECK(pthread_join(r, NULL) == 0);
    CHECK(atomic_load(&ticks) == 1000);
    if (atomic_load(&r_tid) == atomic_load(&c_tid))
        fprintf(stderr, "%s: tid %d shared with a user thread\n", name, (int)atomic_load(&r_tid));
    CHECK(atomic_load(&r_tid) != atomic_load(&c_tid));
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    setenv("WEFT_POSIX_BOUND", "reader,raw", 1);
    setenv("WEFT_WORKERS", "1", 1);

    pid_t ptid = 0;
    pthread_t p;
    CHECK(pthread_create(&p, NULL, plain, &ptid) == 0);
    CHECK(pthread_join(p, NULL) == 0);
    /* one worker, on this kernel thread so far: a user thread runs here */
    if (pt_dropin())
        CHECK(ptid == tid());
    else
        CHECK(ptid != tid());

    round_of("reader");
    round_of("raw");

    pthread_t n;
    CHECK(pthread_create(&n, NULL, named_later, NULL) == 0);
    CHECK(pthread_setname_np(n, "reader") == 0);
    atomic_store(&go, 1);
    while (!atomic_load(&n_tid))
        usleep(1000);
    /* main is a user thread on the one worker, which left n's kernel thread */
    CHECK(atomic_load(&n_tid) != tid());
    atomic_store(&checked, 1);
    CHECK(pthread_join(n, NULL) == 0);

    pthread_t e;
    void *res = NULL;
    CHECK(pthread_create(&e, NULL, exits, NULL) == 0);
    CHECK(pthread_join(e, &res) == 0);
    CHECK(res == (void *)(intptr_t)42);
    puts("ok");
    return 0;
}
