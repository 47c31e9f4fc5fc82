/* io_handoff.c: weft_blocking hands the worker's place to another kernel
 * thread; the call itself runs on the caller's kernel thread and stack.
 *
 * Rules checked, with 1 and 2 workers:
 *  - fn runs on the calling user thread's own kernel thread (same tid before,
 *    inside and after the call), with weft_self() still the caller;
 *  - the worker's other user threads run meanwhile, the initial thread
 *    included, even when it is what unblocks the call (1 worker);
 *  - the initial thread may block in weft_blocking itself; it resumes on the
 *    kernel thread that called weft_init, and weft_finalize returns there;
 *  - errno after the call is fn's; nested calls and calls from plain and
 *    bound kernel threads run directly; inside the call the caller may
 *    spawn, join, lock and sleep as a thread of its own;
 *  - 64 calls blocked at once all complete; 20,000 short calls from
 *    several threads (the lend is often cancelled before it is taken).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "weft.h"

static pid_t tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* ---- fn runs in place -------------------------------------------------- */

struct inplace {
    int fd;
    pid_t tid_inside;
    weft_thread *self_inside;
    char c;
};

static void read_one(void *arg)
{
    struct inplace *p = arg;
    p->tid_inside = tid();
    p->self_inside = weft_self();
    CHECK_EQ(read(p->fd, &p->c, 1), 1); /* a real blocking read(2) */
}

static pid_t main_kernel_tid; /* the kernel thread that called weft_init */

static void *blocker(void *arg)
{
    struct inplace *p = arg;
    pid_t before = tid();
    weft_thread *me = weft_self();
    CHECK_EQ(weft_blocking(read_one, p), 0);
    CHECK_EQ(p->tid_inside, before); /* the call ran on our kernel thread */
    CHECK(p->self_inside == me);
    /* The main kernel thread claims worker 0 back after its call, so a
     * thread that blocked there goes on there; elsewhere a thread whose
     * worker went on without it is resumed by whichever kernel thread runs
     * a worker next (the spawn from main may have queued it for any). */
    if (before == main_kernel_tid)
        CHECK_EQ(tid(), before);
    CHECK(weft_worker_id() >= 0);
    return NULL;
}

static void *feed_pipe(void *arg)
{
    int fd = *(int *)arg;
    for (int i = 0; i < 3; i++)
        weft_yield();
    CHECK_EQ(weft_write(fd, "f", 1), 1);
    return NULL;
}

static void in_place(int workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    CHECK_EQ(weft_init(&cfg), 0);
    pid_t main_tid = tid();
    main_kernel_tid = main_tid;

    /* the initial thread is what unblocks the child: it must run meanwhile */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct inplace a = { p[0], 0, NULL, 0 };
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, blocker, &a, NULL), 0);
    for (int i = 0; i < 3; i++)
        weft_yield();
    CHECK_EQ(weft_write(p[1], "q", 1), 1);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(a.c, 'q');
    CHECK_EQ(tid(), main_tid); /* worker 0 is back on the main kernel thread */

    /* the initial thread blocks itself; a child unblocks it */
    struct inplace b = { p[0], 0, NULL, 0 };
    weft_thread *feeder;
    int wfd = p[1];
    CHECK_EQ(weft_spawn(&feeder, feed_pipe, &wfd, NULL), 0);
    blocker(&b);
    CHECK_EQ(b.c, 'f');
    CHECK_EQ(b.tid_inside, main_tid);
    CHECK_EQ(weft_join(feeder, NULL), 0);
    CHECK_EQ(tid(), main_tid);

    close(p[0]);
    close(p[1]);
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(tid(), main_tid);
}

/* ---- errno, nesting, plain and bound kernel threads ---------------------- */

static void fail_ebadf(void *arg)
{
    *(long *)arg = read(-1, NULL, 0);
}

static void nested_inner(void *arg)
{
    *(pid_t *)arg = tid();
}

static void nested_outer(void *arg)
{
    pid_t *tids = arg;
    tids[0] = tid();
    CHECK_EQ(weft_blocking(nested_inner, &tids[1]), 0);
}

static void *errno_and_nesting(void *arg)
{
    (void)arg;
    long r = 0;
    errno = 0;
    CHECK_EQ(weft_blocking(fail_ebadf, &r), 0);
    int e = weft_errno();
    CHECK_EQ(r, -1);
    CHECK_EQ(e, EBADF);
    pid_t tids[2] = { 0, 0 };
    pid_t before = tid();
    CHECK_EQ(weft_blocking(nested_outer, tids), 0);
    CHECK_EQ(tids[0], before);
    CHECK_EQ(tids[1], before); /* the inner call ran directly */
    return NULL;
}

/* Inside the call the caller acts as a thread of its own: it may spawn and
 * join user threads (they run on the worker it lent), lock, sleep. */
static void *kid(void *arg)
{
    weft_yield();
    return (void *)((intptr_t)arg + 1);
}

static void uses_weft_inside(void *arg)
{
    weft_thread *t;
    void *r = NULL;
    CHECK_EQ(weft_spawn(&t, kid, (void *)(intptr_t)41, NULL), 0);
    CHECK_EQ(weft_join(t, &r), 0);
    CHECK_EQ((intptr_t)r, 42);
    weft_mutex m = WEFT_MUTEX_INIT;
    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    CHECK_EQ(weft_sleep_ns(1000000), 0);
    CHECK_EQ(weft_join(weft_self(), NULL), EDEADLK);
    *(int *)arg = 1;
}

static void *weft_inside(void *arg)
{
    int done = 0;
    CHECK_EQ(weft_blocking(uses_weft_inside, &done), 0);
    CHECK_EQ(done, 1);
    return arg;
}

static void *plain(void *arg)
{
    pid_t t = 0;
    CHECK_EQ(weft_blocking(nested_inner, &t), 0);
    CHECK_EQ(t, tid());
    return arg;
}

static void misc(void)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, errno_and_nesting, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_spawn(&t, weft_inside, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    weft_inside(NULL); /* from the initial thread too */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, plain, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.bound = 1;
    CHECK_EQ(weft_spawn(&t, plain, NULL, &a), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
}

/* ---- many at once, and many short ones ------------------------------------ */

#define NBLOCK 64
static int pipes[NBLOCK][2];
static atomic_int released;

static void wait_pipe(void *arg)
{
    int i = (int)(intptr_t)arg;
    char c;
    CHECK_EQ(read(pipes[i][0], &c, 1), 1);
    CHECK_EQ(c, (char)i);
}

static void *blocked(void *arg)
{
    CHECK_EQ(weft_blocking(wait_pipe, arg), 0);
    atomic_fetch_add(&released, 1);
    return NULL;
}

static void noop(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

static atomic_int nshort;

static void *shorts(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        CHECK_EQ(weft_blocking(noop, &nshort), 0);
        if (i % 7 == 0)
            weft_yield();
    }
    return NULL;
}

static void many(int workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_thread *t[NBLOCK];
    atomic_store(&released, 0);
    for (int i = 0; i < NBLOCK; i++) {
        CHECK_EQ(pipe(pipes[i]), 0);
        CHECK_EQ(weft_spawn(&t[i], blocked, (void *)(intptr_t)i, NULL), 0);
    }
    for (int i = 0; i < 5; i++)
        weft_yield();
    CHECK_EQ(atomic_load(&released), 0);
    for (int i = NBLOCK - 1; i >= 0; i--) {
        char c = (char)i;
        CHECK_EQ(weft_write(pipes[i][1], &c, 1), 1);
    }
    for (int i = 0; i < NBLOCK; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&released), NBLOCK);
    for (int i = 0; i < NBLOCK; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.io_handoffs >= NBLOCK);

    atomic_store(&nshort, 0);
    weft_thread *s[10];
    for (int i = 0; i < 10; i++)
        CHECK_EQ(weft_spawn(&s[i], shorts, NULL, NULL), 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(weft_join(s[i], NULL), 0);
    CHECK_EQ(atomic_load(&nshort), 10 * 2000);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    for (int w = 1; w <= 2; w++) {
        in_place(w);
        many(w);
    }
    misc();
    printf("ok\n");
    return 0;
}
