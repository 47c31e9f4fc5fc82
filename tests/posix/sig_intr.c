/* sig_intr: pthread_kill breaks a target's sleep off as under NPTL: the
 * handler runs on the target, nanosleep and clock_nanosleep return EINTR
 * with the time left, sleep returns the seconds left, usleep -1/EINTR
 * (Linux never restarts them, SA_RESTART or not); pthread_cancel ends a
 * thread asleep in nanosleep at once; a futex wait made through syscall()
 * returns EINTR after the handler ran. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static _Atomic int ran_on_target, asleep, finished;
static pthread_t target;
static _Atomic unsigned fword;

static void handler(int sig)
{
    (void)sig;
    ran_on_target = pthread_equal(pthread_self(), target);
}

static void *sleeper(void *arg)
{
    int kind = (int)(intptr_t)arg;
    asleep = 1;
    if (kind == 0) {
        struct timespec t = { 10, 0 }, rem = { 0, 0 };
        CHECK(nanosleep(&t, &rem) == -1 && errno == EINTR);
        CHECK(rem.tv_sec >= 5 && rem.tv_sec <= 10);
    } else if (kind == 1) {
        struct timespec t = { 10, 0 }, rem = { 0, 0 };
        CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &rem) == EINTR);
        CHECK(rem.tv_sec >= 5 && rem.tv_sec <= 10);
    } else if (kind == 2) {
        unsigned l = sleep(10);
        CHECK(l >= 5 && l <= 10);
    } else if (kind == 3) {
        CHECK(usleep(9000000) == -1 && errno == EINTR);
    } else if (kind == 4) {
        struct timespec t = { 10, 0 };
        long r = syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
        CHECK(r == -1 && errno == EINTR);
    }
    CHECK(ran_on_target);
    finished = 1;
    return NULL;
}

static void *cancelled(void *arg)
{
    (void)arg;
    asleep = 1;
    struct timespec t = { 30, 0 };
    nanosleep(&t, NULL);
    CHECK(0); /* not reached: cancelled */
    return NULL;
}

static void wait_asleep(void)
{
    while (!asleep)
        sched_yield();
    usleep(50000); /* let it reach its wait */
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART; /* these calls are never restarted */
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    time_t start = time(NULL);
    for (int kind = 0; kind < 5; kind++) {
        asleep = 0;
        ran_on_target = 0;
        CHECK(pthread_create(&target, NULL, sleeper, (void *)(intptr_t)kind) == 0);
        wait_asleep();
        finished = 0;
        CHECK(pthread_kill(target, SIGUSR1) == 0);
        /* again if it came before the sleep began (a loaded machine): the
         * sleep's own checks allow for it */
        for (int i = 0; !finished && i < 3; i++) {
            usleep(200000);
            if (!finished)
                CHECK(pthread_kill(target, SIGUSR1) == 0);
        }
        CHECK(pthread_join(target, NULL) == 0);
    }
    CHECK(time(NULL) - start < 30); /* none slept its full time */

    asleep = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, cancelled, NULL) == 0);
    wait_asleep();
    CHECK(pthread_cancel(t) == 0);
    void *res = NULL;
    CHECK(pthread_join(t, &res) == 0);
    CHECK(res == PTHREAD_CANCELED);
    CHECK(time(NULL) - start < 10);
    printf("ok\n");
    return 0;
}
