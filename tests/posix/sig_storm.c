/* sig_storm.c: handlers that call sem_post (async-signal-safe) while
 * signals rain on a thread that is itself in the drop-in's calls. Two
 * senders block SIGUSR1/SIGUSR2, wait on their semaphore and then kill the
 * process; the handlers post the semaphores; a third thread loops on
 * pthread_kill(self, SIGUSR1). A signal that interrupted the drop-in while
 * it held a park.c lock ran a handler that took the same lock: everything
 * parked, in about one run in three (Open POSIX pthread_kill/8-1). */
#define _GNU_SOURCE
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>

#include "pcheck.h"

static sem_t sem1, sem2;
static atomic_int go = 1;
static atomic_long sent, looped;
static sigset_t user;

static void on_usr1(int sig)
{
    (void)sig;
    sem_post(&sem1);
}

static void on_usr2(int sig)
{
    (void)sig;
    sem_post(&sem2);
}

static void *sender(void *arg)
{
    long which = (long)arg;
    CHECK(pthread_sigmask(SIG_BLOCK, &user, NULL) == 0);
    while (atomic_load(&go)) {
        CHECK(sem_wait(which == 1 ? &sem1 : &sem2) == 0);
        CHECK(kill(getpid(), which == 1 ? SIGUSR1 : SIGUSR2) == 0);
        atomic_fetch_add(&sent, 1);
    }
    return NULL;
}

static void *target(void *arg)
{
    (void)arg;
    CHECK(pthread_sigmask(SIG_UNBLOCK, &user, NULL) == 0);
    while (atomic_load(&go)) {
        CHECK(pthread_kill(pthread_self(), 0) == 0);
        CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);
        atomic_fetch_add(&looped, 1);
    }
    return NULL;
}

int main(void)
{
    alarm(60); /* a hang ends the test (SIGALRM's default) */
    sigemptyset(&user);
    sigaddset(&user, SIGUSR1);
    sigaddset(&user, SIGUSR2);
    struct sigaction sa = { 0 };
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    sa.sa_handler = on_usr2;
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    CHECK(pthread_sigmask(SIG_BLOCK, &user, NULL) == 0);
    for (int round = 0; round < 4; round++) {
        CHECK(sem_init(&sem1, 0, 1) == 0 && sem_init(&sem2, 0, 1) == 0);
        atomic_store(&go, 1);
        pthread_t s1, s2, t;
        CHECK(pthread_create(&t, NULL, target, NULL) == 0);
        CHECK(pthread_create(&s1, NULL, sender, (void *)1L) == 0);
        CHECK(pthread_create(&s2, NULL, sender, (void *)2L) == 0);
        usleep(250 * 1000);
        atomic_store(&go, 0);
        CHECK(pthread_join(t, NULL) == 0);
        /* the senders may wait for one more post: give it */
        sem_post(&sem1);
        sem_post(&sem2);
        CHECK(pthread_join(s1, NULL) == 0);
        CHECK(pthread_join(s2, NULL) == 0);
    }
    CHECK(atomic_load(&sent) > 0 && atomic_load(&looped) > 0);
    return 0;
}
