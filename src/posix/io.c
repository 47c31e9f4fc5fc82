/* io.c: the blocking calls that wait on other parties (epoll_wait,
 * select) free their worker when a user thread makes them.
 *
 * A wait that is already over (a timeout of 0, or something ready) is the
 * system call itself. One that would wait runs inside weft_blocking: on
 * the caller's kernel thread and stack, while the worker goes to another
 * kernel thread and runs the other user threads (sched/machine.c). Kernel threads the
 * program made without the drop-in, and every thread in a child of fork,
 * make the plain system calls. Reads, writes and futexes made through
 * syscall() are not wrapped yet (docs/posix.md).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "posix/posix.h"

extern __typeof__(poll) weft__real_poll;
extern __typeof__(epoll_wait) weft__real_epoll_wait;
extern __typeof__(epoll_pwait) weft__real_epoll_pwait;
extern __typeof__(select) weft__real_select;

/* A user thread on a worker: not one inside weft_blocking or handed off
 * in a system call (sched/machine.c), which waits as a kernel thread. */
static inline int on_user(void)
{
    return !weft__posix_forked && weft_worker_id() >= 0 && weft_self() != NULL;
}

/* ---- waits that run in weft_blocking ---- */

struct call {
    int kind;
    int fd, n, timeout;
    void *a;
    const sigset_t *mask;
    fd_set *r, *w, *e;
    struct timeval *tv;
    long result;
    int err;
};
enum { C_POLL, C_EPOLL, C_EPWAIT, C_SELECT };

static void run(void *arg)
{
    struct call *c = arg;
    switch (c->kind) {
    case C_EPOLL: c->result = weft__real_epoll_wait(c->fd, c->a, c->n, c->timeout); break;
    case C_EPWAIT:
        c->result = weft__real_epoll_pwait(c->fd, c->a, c->n, c->timeout, c->mask);
        break;
    default: c->result = weft__real_select(c->n, c->r, c->w, c->e, c->tv); break;
    }
    c->err = errno;
}

static long blocking(struct call *c)
{
    if (weft_blocking(run, c) != 0)
        run(c);
    errno = c->err;
    return c->result;
}

PT_API int epoll_wait(int ep, struct epoll_event *ev, int n, int timeout)
{
    if (timeout == 0 || !on_user())
        return weft__real_epoll_wait(ep, ev, n, timeout);
    int r = weft__real_epoll_wait(ep, ev, n, 0);
    if (r != 0)
        return r;
    struct call c = { .kind = C_EPOLL, .fd = ep, .n = n, .timeout = timeout, .a = ev };
    return (int)blocking(&c);
}

PT_API int epoll_pwait(int ep, struct epoll_event *ev, int n, int timeout, const sigset_t *mask)
{
    if (timeout == 0 || !on_user())
        return weft__real_epoll_pwait(ep, ev, n, timeout, mask);
    int r = weft__real_epoll_pwait(ep, ev, n, 0, mask);
    if (r != 0)
        return r;
    struct call c = {
        .kind = C_EPWAIT, .fd = ep, .n = n, .timeout = timeout, .a = ev, .mask = mask
    };
    return (int)blocking(&c);
}

PT_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    if ((tv && tv->tv_sec == 0 && tv->tv_usec == 0) || !on_user())
        return weft__real_select(n, r, w, e, tv);
    /* a look without waiting needs copies: select overwrites the sets */
    fd_set r0, w0, e0;
    if (r)
        r0 = *r;
    if (w)
        w0 = *w;
    if (e)
        e0 = *e;
    struct timeval zero = { 0, 0 };
    int k = weft__real_select(n, r, w, e, &zero);
    if (k != 0)
        return k;
    if (r)
        *r = r0;
    if (w)
        *w = w0;
    if (e)
        *e = e0;
    struct call c = { .kind = C_SELECT, .n = n, .r = r, .w = w, .e = e, .tv = tv };
    return (int)blocking(&c);
}
