/* kill_thread: pthread_kill to another thread runs the handler on that
 * thread (its pthread_self and its __thread variables), and interrupts
 * its sem_wait, which returns EINTR. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "pcheck.h"

static __thread int who;
static _Atomic int handled_by;
static _Atomic int handled_in_target;
static pthread_t target;
static sem_t sem;
static _Atomic int waiting;

static void handler(int sig)
{
    (void)sig;
    handled_by = who;
    handled_in_target = pthread_equal(pthread_self(), target);
}

static void *run(void *arg)
{
    (void)arg;
    who = 7;
    waiting = 1;
    int r = sem_wait(&sem);
    CHECK(r == -1 && errno == EINTR);
    CHECK(handled_by == 7 && handled_in_target);
    return NULL;
}

int main(void)
{
    pt_on_signal(SIGUSR1, handler, 0); /* no SA_RESTART: sem_wait returns EINTR */
    CHECK(sem_init(&sem, 0, 0) == 0);
    who = 1;
    CHECK(pthread_create(&target, NULL, run, NULL) == 0);
    while (!waiting)
        sched_yield();
    usleep(20000); /* let it reach its wait */
    CHECK(pthread_kill(target, 0) == 0);
    CHECK(pthread_kill(target, SIGUSR1) == 0);
    CHECK(pthread_join(target, NULL) == 0);
    CHECK(handled_by == 7);
    printf("ok\n");
    return 0;
}
