/* Tests that readying threads needs no memory that can run out: with every
 * malloc failing, a broadcast readies 2,000 waiters on one worker (far past
 * the run queue's initial 256 entries) and every one of them runs, on one
 * and on two workers. The failure comes from a malloc interposer in this
 * program (it forwards to glibc's allocator otherwise); under sanitizers,
 * which own malloc, the same run is made without failures. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* Past the run queue's initial 256 entries either way; fewer under the
 * sanitizers, which make each switch slow and do not fail malloc here. */
enum { WAITERS = TEST_SANITIZED ? 600 : 2000, BOUND_S = 60 };

static atomic_int fail_malloc; /* 1: every malloc returns NULL */
static atomic_long failed;     /* mallocs refused */

#if !TEST_SANITIZED
extern void *__libc_malloc(size_t n);

/* The allocator functions other than malloc stay glibc's: they share its
 * heap, so memory from here is freed, resized and measured as usual. */
void *malloc(size_t n)
{
    if (atomic_load_explicit(&fail_malloc, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&failed, 1, memory_order_relaxed);
        return NULL;
    }
    return __libc_malloc(n);
}
#endif

static weft_mutex mu = WEFT_MUTEX_INIT;
static weft_cond cv = WEFT_COND_INIT;
static int waiting, go; /* under mu */
static atomic_int ran;

static void *waiter(void *arg)
{
    weft_mutex_lock(&mu);
    waiting++;
    while (!go)
        weft_cond_wait(&cv, &mu);
    weft_mutex_unlock(&mu);
    atomic_fetch_add(&ran, 1);
    return arg;
}

static void run(int workers)
{
    static weft_thread *t[WAITERS];
    atomic_store(&ran, 0);
    waiting = go = 0;
    test_init(workers, WEFT_WORK_FIRST); /* each waiter parks at once: the deque stays small */
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(weft_spawn(&t[i], waiter, NULL, NULL), 0);
    for (;;) {
        weft_mutex_lock(&mu);
        int n = waiting;
        weft_mutex_unlock(&mu);
        if (n == WAITERS)
            break;
        weft_yield();
    }
    /* Every waiter is parked: the broadcast readies them all on this
     * worker before it returns. */
    weft_mutex_lock(&mu);
    go = 1;
    atomic_store(&fail_malloc, 1);
    weft_cond_broadcast(&cv);
    atomic_store(&fail_malloc, 0);
    weft_mutex_unlock(&mu);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&ran), WAITERS);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    alarm(BOUND_S); /* a lost thread would hang the joins */
    run(1);
    run(2);
#if !TEST_SANITIZED
    CHECK(atomic_load(&failed) > 0); /* the run queue did try to grow */
#endif
    printf("sched_ready_oom: ok (%ld mallocs refused)\n", atomic_load(&failed));
    return 0;
}
