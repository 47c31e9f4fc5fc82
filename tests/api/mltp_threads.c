/* Tests mltp thread creation and join: argument errors (NULL and errno),
 * vcreate's copy of its arguments (owned by the thread, alive across
 * yields), bound threads (own kernel thread, started at once, stack size,
 * term called with the result on the same kernel thread, may block and use
 * the other calls), join results and errors, joins from a plain kernel
 * thread and from a bound thread, and many threads. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <mltp.h>

#include "check.h"
#include "mltp_test.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define MANY 4000 /* TSan keeps at most 8128 threads (fibers) alive */
#else
#define MANY 20000
#endif

/* ---- vcreate ------------------------------------------------------------------ */

static atomic_int vdone;
static void **first_args;

static void vcheck(int nargs, void **args)
{
    CHECK(args != NULL);
    first_args = args;
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < nargs; i++)
            CHECK(args[i] == (void *)(intptr_t)(1000 + i));
        for (int i = 0; i < nargs; i++)
            args[i] = (void *)(intptr_t)(1000 + i); /* the copy is ours to write */
        mltp_yield();
    }
    atomic_fetch_add(&vdone, nargs + 1);
}

static void vmixed(int nargs, void **args)
{
    CHECK_EQ(nargs, 4);
    CHECK(args[0] == NULL);
    CHECK(!strcmp(args[1], "two"));
    CHECK(args[2] == (void *)&vdone);
    CHECK((intptr_t)args[3] == -1);
    atomic_fetch_add(&vdone, 100);
}

/* ---- bound threads -------------------------------------------------------------- */

static atomic_int bound_flag;
static pthread_t bound_pt;
static void *term_got;
static atomic_int term_calls;

static void *spinner_bound(void *arg)
{
    bound_pt = pthread_self();
    atomic_store(&bound_flag, 1); /* the initial thread spins without yielding on it */
    return (char *)arg + 1;
}

static void *term(void *result)
{
    CHECK(pthread_equal(pthread_self(), bound_pt));
    term_got = result;
    atomic_fetch_add(&term_calls, 1);
    return NULL;
}

static void *deep_stack(void *arg)
{
    size_t n = (size_t)(uintptr_t)arg;
    volatile char buf[n];
    for (size_t i = 0; i < n; i += 4096)
        buf[i] = (char)i;
    buf[n - 1] = 1;
    return (void *)(uintptr_t)buf[n - 1];
}

static atomic_int child_ran;

static void child(void *arg)
{
    (void)arg;
    mltp_yield();
    atomic_fetch_add(&child_ran, 1);
}

/* A bound thread may sleep, yield, create unbound threads and join them. */
static void *busy_bound(void *arg)
{
    (void)arg;
    usleep(1000);
    mltp_yield();
    mltp_yield_to_first();
    mltp_thread_t *c[4];
    for (int i = 0; i < 4; i++)
        CHECK((c[i] = mltp_create(child, NULL)) != NULL);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(mltp_join(c[i]), 0);
    return NULL;
}

/* ---- join ------------------------------------------------------------------------- */

static mltp_thread_t *volatile self_handle;
static atomic_int self_join_rc;

static void join_self(void *arg)
{
    (void)arg;
    atomic_store(&self_join_rc, mltp_join(self_handle));
}

static atomic_int slow_done;

static void slow(void *arg)
{
    for (int i = 0; i < 20; i++)
        mltp_yield();
    atomic_fetch_add(&slow_done, 1);
    (void)arg;
}

static atomic_int kernel_joined;

static void *kernel_joiner(void *arg)
{
    CHECK_EQ(mltp_join(arg), 0);
    CHECK_EQ(atomic_load(&slow_done), 1);
    atomic_store(&kernel_joined, 1);
    return NULL;
}

static void join_it(void *t)
{
    CHECK_EQ(mltp_join(t), 0);
}

static atomic_long many_ran;

static void count(void *arg)
{
    atomic_fetch_add(&many_ran, (long)(intptr_t)arg);
}

int main(void)
{
    CHECK_EQ(mltp_init(1), 0);

    /* argument errors */
    errno = 0;
    CHECK(mltp_create(NULL, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK(mltp_vcreate(NULL, 0) == NULL);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK(mltp_vcreate(mt_vnothing, -1) == NULL);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK(mltp_create_bound(NULL, NULL, 0, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK(mltp_create_bound(mt_bnothing, NULL, -1, NULL) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(mltp_join(NULL), EINVAL);

    /* vcreate: 0, 3 and 100 arguments; mixed pointer-sized values */
    mltp_thread_t *v0 = mltp_vcreate(vcheck, 0);
    mltp_thread_t *v3 = mltp_vcreate(vcheck, 3, (void *)1000, (void *)1001, (void *)1002);
    CHECK(v0 && v3);
    mltp_thread_t *vm =
        mltp_vcreate(vmixed, 4, (void *)NULL, (void *)"two", (void *)&vdone, (void *)(intptr_t)-1);
    CHECK(vm != NULL);
#define A10(b)                                                                                     \
    (void *)(b + 0), (void *)(b + 1), (void *)(b + 2), (void *)(b + 3), (void *)(b + 4),           \
        (void *)(b + 5), (void *)(b + 6), (void *)(b + 7), (void *)(b + 8), (void *)(b + 9)
    mltp_thread_t *v100 =
        mltp_vcreate(vcheck, 100, A10(1000), A10(1010), A10(1020), A10(1030), A10(1040), A10(1050),
                     A10(1060), A10(1070), A10(1080), A10(1090));
#undef A10
    CHECK(v100 != NULL);
    CHECK_EQ(mltp_join(v0), 0);
    CHECK_EQ(mltp_join(v3), 0);
    CHECK_EQ(mltp_join(vm), 0);
    CHECK_EQ(mltp_join(v100), 0);
    CHECK_EQ(atomic_load(&vdone), 1 + 4 + 100 + 101);

    /* bound: runs at once on its own kernel thread (the initial thread never
     * yields while it waits), then term(result) on the same kernel thread */
    static char base[4];
    mltp_thread_t *b = mltp_create_bound(spinner_bound, base, 0, term);
    CHECK(b != NULL);
    while (!atomic_load(&bound_flag))
        ;
    mltp_thread_t *jb = mltp_create(join_it, b); /* see mltp_wake_initial */
    CHECK(jb != NULL);
    CHECK_EQ(mltp_join(jb), 0);
    CHECK_EQ(atomic_load(&term_calls), 1);
    CHECK(term_got == base + 1);

    /* stack sizes: 1 MiB used of 4 MiB (sanitizers take room on kernel
     * threads stacks too); a tiny request is raised; no term */
    b = mltp_create_bound(deep_stack, (void *)(uintptr_t)(1 << 20), 4 << 20, NULL);
    CHECK(b != NULL);
    mltp_thread_t *b2 = mltp_create_bound(deep_stack, (void *)(uintptr_t)2048, 4096, NULL);
    CHECK(b2 != NULL);
    mltp_thread_t *b3 = mltp_create_bound(busy_bound, NULL, 0, NULL);
    CHECK(b3 != NULL);
    mltp_thread_t *j1 = mltp_create(join_it, b);
    mltp_thread_t *j2 = mltp_create(join_it, b2);
    mltp_thread_t *j3 = mltp_create(join_it, b3);
    CHECK(j1 && j2 && j3);
    CHECK_EQ(mltp_join(j1), 0);
    CHECK_EQ(mltp_join(j2), 0);
    CHECK_EQ(mltp_join(j3), 0);
    CHECK_EQ(atomic_load(&child_ran), 4);

    /* join: self is EDEADLK; a running thread; from a plain kernel thread */
    self_handle = mltp_create(join_self, NULL);
    CHECK(self_handle != NULL);
    CHECK_EQ(mltp_join(self_handle), 0);
    CHECK_EQ(atomic_load(&self_join_rc), EDEADLK);
    mltp_thread_t *s = mltp_create(slow, NULL);
    CHECK(s != NULL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, kernel_joiner, s), 0);
    while (!atomic_load(&kernel_joined))
        mltp_yield(); /* the only virtual processor must run s */
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK(mltp_create(mt_nothing, NULL) != NULL); /* never joined: finalize reclaims it */
    CHECK_EQ(mltp_finalize(), 0);

    /* many threads on two virtual processors, created by several threads */
    CHECK_EQ(mltp_init(2), 0);
    static mltp_thread_t *ts[MANY];
    for (int i = 0; i < MANY; i++)
        CHECK((ts[i] = mltp_create(count, (void *)(intptr_t)(i + 1))) != NULL);
    for (int i = 0; i < MANY; i++)
        CHECK_EQ(mltp_join(ts[i]), 0);
    CHECK_EQ(atomic_load(&many_ran), (long)MANY * (MANY + 1) / 2);
    CHECK_EQ(mltp_finalize(), 0);
    printf("mltp_threads: ok\n");
    return 0;
}
