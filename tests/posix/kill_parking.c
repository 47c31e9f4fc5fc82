/* kill_parking: pthread_kill reaches a thread that is just entering a
 * condition-variable wait. The target waits in a loop on a condition
 * variable nobody signals; each of 20,000 kills must run its handler on
 * the target (which breaks the wait off, a spurious wake-up) before the
 * next is sent. Under the drop-in a kill that came between the target's
 * look at its pending signals and its announcing itself parked was lost:
 * the target slept on with the signal pending, in most runs within the
 * first 2,000 kills. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "pcheck.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static atomic_int stop;
static atomic_long handled;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *target(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    while (!atomic_load(&stop))
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    enum { KILLS = 20000 };
    pt_on_signal(SIGUSR1, on_usr1, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, target, NULL) == 0);
    for (long i = 1; i <= KILLS; i++) {
        CHECK(pthread_kill(t, SIGUSR1) == 0);
        double end = pt_now_s(CLOCK_MONOTONIC) + 5.0;
        while (atomic_load(&handled) < i) {
            if (pt_now_s(CLOCK_MONOTONIC) > end) {
                fprintf(stderr, "kill %ld not handled in 5 s\n", i);
                CHECK(0);
            }
            sched_yield();
        }
    }
    atomic_store(&stop, 1);
    pthread_mutex_lock(&m);
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    CHECK(pthread_join(t, NULL) == 0);
    puts("ok");
    return 0;
}
