/* sig_small_stack.c: threads on the smallest stacks POSIX allows
 * (PTHREAD_STACK_MIN) are made and joined while another thread floods the
 * process with a signal whose handler does nothing, for a bounded time.
 * Under glibc a thread's stack then holds at most one frame of that
 * signal (it is blocked while its handler runs). Under the drop-in a
 * thread whose end ran the pending handlers in the runtime's code got a
 * preemption signal refused there, whose retry timer fired again in the
 * refusing handler's own system calls, each time one more signal frame
 * (some 3 KB with AVX-512 state) deep, until the 16 KiB stack overflowed:
 * SIGSEGV in about one run of six (Open POSIX pthread_create/14-1). */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static atomic_int go = 1;
static atomic_long handled;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static void *sender(void *arg)
{
    (void)arg;
    pt_mask_one(SIG_BLOCK, SIGUSR1);
    pid_t me = getpid();
    while (atomic_load(&go)) {
        CHECK(kill(me, SIGUSR1) == 0);
        /* the drop-in's initial thread runs on one worker only, which a
         * thread that only makes system calls would keep: preemption
         * leaves a thread inside a system call of libc's alone */
        sched_yield();
    }
    return NULL;
}

static sem_t done;

static void *small(void *arg)
{
    while (sem_post(&done) != 0)
        ;
    return arg;
}

int main(void)
{
    pt_on_signal(SIGUSR1, on_usr1, 0);
    CHECK(sem_init(&done, 0, 0) == 0);
    pthread_t s;
    CHECK(pthread_create(&s, NULL, sender, NULL) == 0);
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN) == 0);
    long made = 0;
    double end = pt_now_s(CLOCK_MONOTONIC) + 3.0;
    while (pt_now_s(CLOCK_MONOTONIC) < end) {
        pthread_t t;
        CHECK(pthread_create(&t, &a, small, NULL) == 0);
        while (sem_wait(&done) != 0)
            ;
        CHECK(pthread_join(t, NULL) == 0);
        made++;
    }
    atomic_store(&go, 0);
    CHECK(pthread_join(s, NULL) == 0);
    pthread_attr_destroy(&a);
    printf("ok: %ld threads, %ld handlers\n", made, atomic_load(&handled));
    return 0;
}
