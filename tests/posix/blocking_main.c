/* blocking_main.c: the initial thread and other threads in overlapping
 * blocking calls (handed off) on one worker. Under the
 * drop-in, the main kernel thread, back from another thread's call, used
 * the initial thread's glibc block while the initial thread ran in it on
 * another kernel thread: "worker 0 has no home to return to" (abort). */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/epoll.h>

#include "pcheck.h"

static void nap(int ms)
{
    /* epoll_pwait with a signal mask waits in the hand-off (the worker
     * goes on on another kernel thread); natively, a plain wait */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0);
    sigset_t none;
    sigemptyset(&none);
    struct epoll_event ev;
    CHECK(epoll_pwait(ep, &ev, 1, ms, &none) == 0);
    close(ep);
}

static void *napper(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++)
        nap(20 + i % 10);
    return NULL;
}

int main(void)
{
    setenv("WEFT_WORKERS", "1", 0); /* read at the first thread, under the drop-in */
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&t[i], NULL, napper, NULL) == 0);
    for (int i = 0; i < 50; i++)
        nap(25 + i % 7);
    for (int i = 0; i < 3; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    return 0;
}
