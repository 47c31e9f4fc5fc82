/* blocking_calls: threads that wait in poll, epoll_wait, select and
 * nanosleep (retrying on EINTR, as libuv does) leave the other threads
 * running, on one worker too: the initial thread, which must write the
 * pipe that ends their waits, runs meanwhile. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static int pfd[2];
static _Atomic int waiting;

static void *by_poll(void *arg)
{
    (void)arg;
    struct pollfd p = { pfd[0], POLLIN, 0 };
    waiting++;
    int r;
    while ((r = poll(&p, 1, -1)) < 0 && errno == EINTR)
        ;
    CHECK(r == 1 && (p.revents & POLLIN));
    return NULL;
}

static void *by_epoll(void *arg)
{
    (void)arg;
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN }, out;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev) == 0);
    waiting++;
    int r;
    while ((r = epoll_wait(ep, &out, 1, -1)) < 0 && errno == EINTR)
        ;
    CHECK(r == 1);
    close(ep);
    return NULL;
}

static void *by_select(void *arg)
{
    (void)arg;
    waiting++;
    int r;
    fd_set s;
    do {
        FD_ZERO(&s);
        FD_SET(pfd[0], &s);
    } while ((r = select(pfd[0] + 1, &s, NULL, NULL, NULL)) < 0 && errno == EINTR);
    CHECK(r == 1 && FD_ISSET(pfd[0], &s));
    return NULL;
}

static void *by_sleep(void *arg)
{
    (void)arg;
    waiting++;
    struct timespec ts = { 0, 50 * 1000 * 1000 }, rem;
    while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
        ts = rem;
    return NULL;
}

int main(void)
{
    CHECK(pipe(pfd) == 0);
    void *(*fns[])(void *) = { by_poll, by_epoll, by_select, by_sleep };
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, fns[i], NULL) == 0);
    while (waiting < 4)
        sched_yield();
    usleep(20000); /* they wait now */
    CHECK(write(pfd[1], "x", 1) == 1);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    printf("ok\n");
    return 0;
}
