/* sig_resume.c: a signal handler interrupts waits as POSIX says: a thread
 * waiting for a rwlock or at a barrier runs the handler and goes on
 * waiting. Under the drop-in the handler did not run until the wait
 * ended. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>

#include "pcheck.h"

static atomic_int handled, state;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t bar;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *rw_waiter(void *arg)
{
    (void)arg;
    atomic_store(&state, 1);
    CHECK(pthread_rwlock_wrlock(&rw) == 0);
    atomic_store(&state, 2);
    CHECK(pthread_rwlock_unlock(&rw) == 0);
    return NULL;
}

static void *bar_waiter(void *arg)
{
    (void)arg;
    atomic_store(&state, 1);
    int r = pthread_barrier_wait(&bar);
    CHECK(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
    atomic_store(&state, 2);
    return NULL;
}

/* t is waiting (state 1): signal it, see its handler run, see it still
 * waiting; then release it with release(). */
static void interrupt(pthread_t t, void (*release)(void))
{
    while (atomic_load(&state) != 1)
        sched_yield();
    usleep(50 * 1000);
    int before = atomic_load(&handled);
    CHECK(pthread_kill(t, SIGUSR1) == 0);
    for (int i = 0; i < 5000 && atomic_load(&handled) == before; i++)
        usleep(1000);
    CHECK(atomic_load(&handled) == before + 1);
    usleep(50 * 1000);
    CHECK(atomic_load(&state) == 1); /* still waiting */
    release();
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(atomic_load(&state) == 2);
}

static void unlock_rw(void)
{
    CHECK(pthread_rwlock_unlock(&rw) == 0);
}

static void meet_bar(void)
{
    int r = pthread_barrier_wait(&bar);
    CHECK(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77; /* ThreadSanitizer holds a handler back until the thread leaves its wait */
#endif
    struct sigaction sa = { 0 };
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);

    pthread_t t;
    CHECK(pthread_rwlock_wrlock(&rw) == 0);
    atomic_store(&state, 0);
    CHECK(pthread_create(&t, NULL, rw_waiter, NULL) == 0);
    interrupt(t, unlock_rw);

    CHECK(pthread_barrier_init(&bar, NULL, 2) == 0);
    atomic_store(&state, 0);
    CHECK(pthread_create(&t, NULL, bar_waiter, NULL) == 0);
    interrupt(t, meet_bar);
    CHECK(pthread_barrier_destroy(&bar) == 0);
    return 0;
}
