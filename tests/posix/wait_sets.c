/* wait_sets: epoll_wait, epoll_pwait, epoll_pwait2, poll and ppoll of two
 * descriptors, select and pselect give the kernel's results and timeouts,
 * natively and under the drop-in. Under the drop-in the program runs on
 * one worker without preemption (so without the rescue of a held worker):
 * 120 threads wait at once while the initial thread runs and ends their
 * waits, and they hold no kernel thread each (/proc/self/task at most
 * 2 x CPUs + 16). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

enum { NT = 120, KINDS = 7 };
static int pipes[NT][2];
static int idle[2]; /* never written: the second descriptor of each wait */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;

static void *waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    int fd = pipes[i][0];
    int ep = -1;
    if (i % KINDS < 3) {
        ep = epoll_create1(0);
        CHECK(ep >= 0);
        struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
        CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) == 0);
        e.data.u32 = 1000;
        CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, idle[0], &e) == 0);
    }
    pt_count_signal(&m, &cv, &started);
    struct epoll_event ev[4];
    struct pollfd p[2] = { { idle[0], POLLIN, 0 }, { fd, POLLIN, 0 } };
    fd_set r;
    FD_ZERO(&r);
    FD_SET(idle[0], &r);
    FD_SET(fd, &r);
    int n = (fd > idle[0] ? fd : idle[0]) + 1;
    int k;
    switch (i % KINDS) {
    case 0: k = epoll_wait(ep, ev, 4, -1); break;
    case 1: k = epoll_pwait(ep, ev, 4, -1, NULL); break;
    case 2: k = epoll_pwait2(ep, ev, 4, NULL, NULL); break;
    case 3: k = poll(p, 2, -1); break;
    case 4: k = ppoll(p, 2, NULL, NULL); break;
    case 5: k = select(n, &r, NULL, NULL, NULL); break;
    default: k = pselect(n, &r, NULL, NULL, NULL, NULL); break;
    }
    CHECK(k == 1);
    if (ep >= 0) {
        CHECK(ev[0].data.u32 == (uint32_t)i && ev[0].events == EPOLLIN);
        close(ep);
    } else if (i % KINDS < 5) {
        CHECK(p[0].revents == 0 && p[1].revents == POLLIN);
    } else {
        CHECK(FD_ISSET(fd, &r) && !FD_ISSET(idle[0], &r));
    }
    char c;
    CHECK(read(fd, &c, 1) == 1 && c == (char)i);
    return NULL;
}

static double since(double t0)
{
    return pt_now_s(CLOCK_MONOTONIC) - t0;
}

/* Timeouts, a timeout of 0 and errors, in the calling thread. */
static void *timeouts(void *arg)
{
    (void)arg;
    int ep = epoll_create1(0);
    CHECK(ep >= 0);
    struct epoll_event e = { .events = EPOLLIN }, ev[2];
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, idle[0], &e) == 0);
    struct pollfd p[2] = { { idle[0], POLLIN, 0 }, { idle[0], POLLPRI, 0 } };
    fd_set r;
    double t0 = pt_now_s(CLOCK_MONOTONIC);
    CHECK(epoll_wait(ep, ev, 2, 30) == 0 && since(t0) >= 0.029);
    t0 = pt_now_s(CLOCK_MONOTONIC);
    struct timespec ts = { 0, 30 * 1000 * 1000 };
    CHECK(epoll_pwait2(ep, ev, 2, &ts, NULL) == 0 && since(t0) >= 0.029);
    t0 = pt_now_s(CLOCK_MONOTONIC);
    CHECK(poll(p, 2, 30) == 0 && since(t0) >= 0.029 && p[0].revents == 0);
    t0 = pt_now_s(CLOCK_MONOTONIC);
    CHECK(ppoll(p, 2, &ts, NULL) == 0 && since(t0) >= 0.029);
    t0 = pt_now_s(CLOCK_MONOTONIC);
    FD_ZERO(&r);
    FD_SET(idle[0], &r);
    struct timeval tv = { 0, 30 * 1000 };
    CHECK(select(idle[0] + 1, &r, NULL, NULL, &tv) == 0 && since(t0) >= 0.029);
    CHECK(!FD_ISSET(idle[0], &r) && tv.tv_sec == 0 && tv.tv_usec == 0); /* Linux: time left */
    FD_SET(idle[0], &r);
    t0 = pt_now_s(CLOCK_MONOTONIC);
    CHECK(pselect(idle[0] + 1, &r, NULL, NULL, &ts, NULL) == 0 && since(t0) >= 0.029);
    CHECK(ts.tv_nsec == 30 * 1000 * 1000); /* pselect leaves it */
    /* no descriptors: only the time */
    t0 = pt_now_s(CLOCK_MONOTONIC);
    CHECK(poll(NULL, 0, 30) == 0 && since(t0) >= 0.029);
    tv = (struct timeval){ 0, 30 * 1000 };
    CHECK(select(0, NULL, NULL, NULL, &tv) == 0 && since(t0) >= 0.058);
    /* a set sized for its n only (select reads no further), ending at an
     * inaccessible page */
    long pg = sysconf(_SC_PAGESIZE);
    char *map =
        mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED && mprotect(map + pg, (size_t)pg, PROT_NONE) == 0);
    CHECK(idle[0] < 64);
    fd_set *small = (fd_set *)(map + pg - sizeof(fd_mask));
    memset(small, 0, sizeof(fd_mask));
    FD_SET(idle[0], small);
    tv = (struct timeval){ 0, 20 * 1000 };
    CHECK(select(idle[0] + 1, small, NULL, NULL, &tv) == 0 && !FD_ISSET(idle[0], small));
    FD_SET(idle[1], small);
    CHECK(idle[1] < 64);
    CHECK(select(idle[1] + 1, NULL, small, NULL, NULL) == 1 && FD_ISSET(idle[1], small));
    munmap(map, (size_t)pg * 2);
    /* timeout 0 */
    CHECK(epoll_wait(ep, ev, 2, 0) == 0 && poll(p, 2, 0) == 0);
    /* ready at once: the write end, a closed descriptor, errors */
    struct pollfd q[2] = { { idle[1], POLLOUT, 0 }, { idle[0], POLLIN, 0 } };
    CHECK(poll(q, 2, -1) == 1 && q[0].revents == POLLOUT && q[1].revents == 0);
    int dead[2];
    CHECK(pipe(dead) == 0);
    close(dead[0]);
    struct pollfd d[2] = { { dead[0], POLLIN, 0 }, { idle[0], POLLIN, 0 } };
    CHECK(poll(d, 2, -1) == 1 && d[0].revents == POLLNVAL);
    /* a reader gone: the write end reports POLLERR with what was asked */
    struct pollfd h[2] = { { dead[1], POLLOUT, 0 }, { idle[0], POLLIN, 0 } };
    CHECK(poll(h, 2, -1) == 1 && (h[0].revents & POLLERR));
    close(dead[1]);
    errno = 0;
    CHECK(epoll_wait(-1, ev, 2, 10) == -1 && errno == EBADF);
    CHECK(epoll_wait(ep, ev, 0, 10) == -1 && errno == EINVAL);
    tv = (struct timeval){ -1, 0 };
    CHECK(select(1, NULL, NULL, NULL, &tv) == -1 && errno == EINVAL);
    ts = (struct timespec){ 0, 1000000000 };
    CHECK(ppoll(p, 2, &ts, NULL) == -1 && errno == EINVAL);
    FD_ZERO(&r);
    FD_SET(dead[0], &r);
    tv = (struct timeval){ 1, 0 };
    CHECK(select(dead[0] + 1, &r, NULL, NULL, &tv) == -1 && errno == EBADF);
    close(ep);
    return NULL;
}

int main(void)
{
    setenv("WEFT_WORKERS", "1", 1);
    setenv("WEFT_QUANTUM", "off", 1);
    alarm(60); /* a wait that held the only worker would hang */
    CHECK(pipe(idle) == 0);
    for (int i = 0; i < NT; i++)
        CHECK(pipe(pipes[i]) == 0);
    pthread_t t[NT], o;
    CHECK(pthread_create(&o, NULL, timeouts, NULL) == 0);
    CHECK(pthread_join(o, NULL) == 0);
    for (int i = 0; i < NT; i++)
        CHECK(pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)i) == 0);
    pt_wait_count(&m, &cv, &started, NT);
    usleep(100 * 1000); /* into their waits */
    pt_check_few_tasks(pt_tasks(), "threads waiting on several descriptors");
    for (int i = 0; i < NT; i++) {
        char c = (char)i;
        CHECK(write(pipes[i][1], &c, 1) == 1);
    }
    for (int i = 0; i < NT; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    return 0;
}
