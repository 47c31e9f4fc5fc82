/* sig_compute: pthread_kill reaches a target that computes without ever
 * calling into libc or the drop-in (as the kernel delivers it under
 * NPTL): the handler runs on the target and ends its loop. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static volatile int stop;
static _Atomic int ran_on_target, spinning;
static pthread_t target;

static void handler(int sig)
{
    (void)sig;
    ran_on_target = pthread_equal(pthread_self(), target);
    stop = 1;
}

static void *spin(void *arg)
{
    (void)arg;
    spinning = 1;
    unsigned long n = 0;
    while (!stop)
        n++;
    return (void *)n;
}

/* Sends from a thread of its own: under the drop-in the initial thread
 * may share its worker with the spinner. */
static void *controller(void *arg)
{
    (void)arg;
    for (int round = 0; round < 3; round++) {
        stop = 0;
        spinning = 0;
        ran_on_target = 0;
        CHECK(pthread_create(&target, NULL, spin, NULL) == 0);
        while (!spinning)
            sched_yield();
        usleep(20000);
        CHECK(pthread_kill(target, SIGUSR1) == 0);
        time_t start = time(NULL);
        while (!stop) {
            CHECK(time(NULL) - start < 30);
            usleep(1000);
        }
        CHECK(pthread_join(target, NULL) == 0);
        CHECK(ran_on_target);
    }
    return NULL;
}

int main(void)
{
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer holds an asynchronous signal until the thread calls
     * a function it intercepts: a pure spin loop never gets it */
    printf("skip: ThreadSanitizer defers signals\n");
    return 77;
#endif
    pt_on_signal(SIGUSR1, handler, 0);
    pthread_t c;
    CHECK(pthread_create(&c, NULL, controller, NULL) == 0);
    CHECK(pthread_join(c, NULL) == 0);
    printf("ok\n");
    return 0;
}
