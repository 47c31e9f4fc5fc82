/* sig_kernel.c: pthread_kill with a signal the kernel keeps (SIGABRT,
 * SIGTRAP: not through the drop-in's dispatcher) reaches the target user
 * thread, whose handler runs on it; one the thread blocks stays pending
 * until it unblocks it. The old drop-in handed such a signal to glibc
 * with the user thread's block, and pthread_kill failed. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>

#include "pcheck.h"

static pthread_t target;
static atomic_int ran_on_target, ran_elsewhere, go;

static void on_abrt(int sig)
{
    (void)sig;
    if (pthread_equal(pthread_self(), target))
        atomic_fetch_add(&ran_on_target, 1);
    else
        atomic_fetch_add(&ran_elsewhere, 1);
}

static void *waiter(void *arg)
{
    (void)arg;
    while (!atomic_load(&go))
        usleep(1000);
    /* blocked: pending until unblocked, then it runs here */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTRAP);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    CHECK(raise(SIGTRAP) == 0);
    CHECK(atomic_load(&ran_on_target) == 1);
    sigset_t pend;
    CHECK(sigpending(&pend) == 0);
    CHECK(sigismember(&pend, SIGTRAP) == 1);
    CHECK(pthread_sigmask(SIG_UNBLOCK, &s, NULL) == 0);
    /* (ThreadSanitizer delays a handler to its next interception) */
    for (int i = 0; i < 1000 && atomic_load(&ran_on_target) < 2; i++)
        usleep(1000);
    CHECK(atomic_load(&ran_on_target) == 2);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_abrt;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGABRT, &sa, NULL) == 0);
    CHECK(sigaction(SIGTRAP, &sa, NULL) == 0);
    CHECK(pthread_create(&target, NULL, waiter, NULL) == 0);
    CHECK(pthread_kill(target, SIGABRT) == 0);
    for (int i = 0; i < 5000 && atomic_load(&ran_on_target) == 0; i++)
        usleep(1000);
    CHECK(atomic_load(&ran_on_target) == 1);
    atomic_store(&go, 1);
    CHECK(pthread_join(target, NULL) == 0);
    CHECK(atomic_load(&ran_elsewhere) == 0);
    return 0;
}
