/* io.c: the waits on several descriptors (epoll_wait, epoll_pwait,
 * epoll_pwait2, select, pselect, ppoll, and poll of more than one
 * descriptor for pollfd.c) park only the user thread that makes them.
 *
 * An epoll descriptor is itself pollable: a user thread's epoll_wait looks
 * with a timeout of 0 first, and when nothing is ready waits in weft_poll
 * on the epoll descriptor (a ring poll with a linked timeout: the worker
 * runs other user threads meanwhile), then takes the events with another
 * look; a readiness that another thread consumed first waits again for
 * what is left of the timeout. select, pselect, ppoll and poll of several
 * descriptors wait the same way on a private epoll set made for the call
 * (each descriptor added with its events; one descriptor: weft_poll on it
 * directly) and answer with the call itself at timeout 0, so the fd_sets,
 * revents and counts are exactly the kernel's.
 *
 * Rejected: handing each wait to a kernel thread (weft_blocking), what
 * part 1 did: one kernel thread per waiting call, 1:1 again under a
 * thread-per-connection server, and a thread hand-off per wait (a
 * private set costs epoll_create1, one epoll_ctl per descriptor and a
 * close instead: docs/posix.md has the figures). A set kept per user
 * thread would save the create and close but must track descriptors
 * closed and reused between calls.
 *
 * With a signal mask (epoll_pwait, epoll_pwait2, pselect, ppoll with a
 * mask), descriptors past FD_SETSIZE, or a set the kernel refuses
 * (ENOMEM, ENOSPC from max_user_watches): the call itself inside
 * weft_blocking, as before, since a mask belongs to the kernel thread
 * that the worker's other user threads share. A timeout of 0, another
 * kernel thread, a child of fork: glibc's call.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "posix/calls.h"

#define NS_PER_MS 1000000ll
#define NS_PER_US 1000ll
#define NS_PER_S  1000000000ll

/* At each call: pending pthread_kill signals run, a cancellation acts. */
static void enter(void)
{
    weft__posix_deliver();
    weft__posix_testcancel();
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The deadline ns from now (-1: none, for ns < 0). */
static int64_t deadline_of(int64_t ns)
{
    if (ns < 0)
        return -1;
    int64_t now = now_ns();
    return ns > INT64_MAX - now ? -1 : now + ns;
}

/* What is left until deadline in ms, rounded up (-1: no deadline). */
static int left_ms(int64_t deadline)
{
    if (deadline < 0)
        return -1;
    int64_t left = deadline - now_ns();
    if (left <= 0)
        return 0;
    int64_t ms = (left + NS_PER_MS - 1) / NS_PER_MS;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* ---- waits that run in weft_blocking ---- */

struct call {
    int kind;
    int fd, n, timeout;
    void *a;
    const sigset_t *mask;
    const struct timespec *ts;
    fd_set *r, *w, *e;
    struct timeval *tv;
    long result;
    int err;
};
enum { C_EPWAIT, C_EPWAIT2, C_SELECT, C_PSELECT, C_POLL, C_PPOLL };

static void run(void *arg)
{
    struct call *c = arg;
    switch (c->kind) {
    case C_EPWAIT:
        c->result = weft__real_epoll_pwait(c->fd, c->a, c->n, c->timeout, c->mask);
        break;
    case C_EPWAIT2: c->result = weft__real_epoll_pwait2(c->fd, c->a, c->n, c->ts, c->mask); break;
    case C_SELECT: c->result = weft__real_select(c->n, c->r, c->w, c->e, c->tv); break;
    case C_PSELECT: c->result = weft__real_pselect(c->n, c->r, c->w, c->e, c->ts, c->mask); break;
    case C_POLL: c->result = weft__real_poll(c->a, (nfds_t)c->n, c->timeout); break;
    default: c->result = weft__real_ppoll(c->a, (nfds_t)c->n, c->ts, c->mask); break;
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

/* ---- a private epoll set ---- */

/* The descriptors a call waits on: none, one (waited on directly), or an
 * epoll set made at the second. */
struct wset {
    int n;    /* descriptors added */
    int fd;   /* the first one */
    short ev; /* its events */
    int ep;   /* the set from the second on, else -1 */
};

/* 0, or -1 when the set cannot be made (the caller hands the call off). */
static int ctl_add(int ep, int fd, short ev)
{
    struct epoll_event e = { .events = (uint32_t)(unsigned short)ev, .data.fd = fd };
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) == 0)
        return 0;
    switch (errno) {
    case EEXIST: /* the same descriptor twice: wake for anything (a spurious
                    readiness is looked at and waited for again) */
        e.events = EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLRDHUP;
        return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e) == 0 ? 0 : -1;
    case EPERM:           /* a regular file or directory: poll(2) says it is always
                   ready, so the look before found it; select's
                   exceptfds never are */
    case EBADF: return 0; /* closed since the look: the next look reports it */
    default: return -1;
    }
}

static int ws_add(struct wset *s, int fd, short ev)
{
    if (s->n++ == 0) {
        s->fd = fd;
        s->ev = ev;
        return 0;
    }
    if (s->ep < 0) {
        s->ep = epoll_create1(EPOLL_CLOEXEC);
        if (s->ep < 0 || ctl_add(s->ep, s->fd, s->ev) != 0)
            return -1;
    }
    return ctl_add(s->ep, fd, ev);
}

/* Parks until something in s may be ready or ms (< 0: none) passes:
 * >= 0, or -1 and errno. */
static int ws_wait(const struct wset *s, int ms)
{
    if (s->n == 0)
        return weft_poll(-1, 0, ms); /* nothing to wait for but the time */
    if (s->n == 1)
        return weft_poll(s->fd, s->ev, ms);
    return weft_poll(s->ep, POLLIN, ms);
}

static void ws_close(struct wset *s)
{
    if (s->ep >= 0) {
        int err = errno;
        close(s->ep);
        errno = err;
    }
}

/* ---- poll, ppoll ---- */

/* fds' wait until deadline once a look found nothing: poll(2)'s result,
 * or -2 when the set cannot be made. */
static int poll_wait(struct pollfd *fds, nfds_t n, int64_t deadline)
{
    struct wset s = { 0, -1, 0, -1 };
    int r = -2;
    for (nfds_t i = 0; i < n; i++)
        if (fds[i].fd >= 0 && ws_add(&s, fds[i].fd, fds[i].events) != 0)
            goto out;
    for (;;) {
        int ms = left_ms(deadline);
        if (ms != 0 && ws_wait(&s, ms) < 0) {
            r = -1;
            break;
        }
        r = weft__real_poll(fds, n, 0);
        if (r != 0 || left_ms(deadline) == 0)
            break;
    }
out:
    ws_close(&s);
    return r;
}

int weft__posix_poll_many(struct pollfd *fds, nfds_t n, int timeout)
{
    int r = poll_wait(fds, n, deadline_of(timeout < 0 ? -1 : timeout * NS_PER_MS));
    if (r != -2)
        return r;
    struct call c = { .kind = C_POLL, .a = fds, .n = (int)n, .timeout = timeout };
    return (int)blocking(&c);
}

static int bad_ts(const struct timespec *ts)
{
    return ts && (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= NS_PER_S);
}

static int64_t ts_ns(const struct timespec *ts)
{
    if (!ts)
        return -1;
    if (ts->tv_sec >= INT64_MAX / NS_PER_S)
        return -1;
    return (int64_t)ts->tv_sec * NS_PER_S + ts->tv_nsec;
}

PT_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
    if (!weft__posix_calls_user() || (ts && ts->tv_sec == 0 && ts->tv_nsec == 0) || bad_ts(ts))
        return weft__real_ppoll(fds, n, ts, mask);
    enter();
    static const struct timespec zero = { 0, 0 };
    int r = weft__real_ppoll(fds, n, &zero, mask);
    if (r != 0)
        return r;
    if (!mask && n <= INT_MAX) {
        r = poll_wait(fds, n, deadline_of(ts_ns(ts)));
        if (r != -2)
            return r;
    }
    struct call c = { .kind = C_PPOLL, .a = fds, .n = (int)n, .ts = ts, .mask = mask };
    return (int)blocking(&c);
}

PT_API int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                       const sigset_t *mask, size_t fdslen)
{
    if (fdslen / sizeof *fds < n)
        __builtin_trap(); /* glibc's __chk_fail aborts: the array overflows */
    return ppoll(fds, n, ts, mask);
}

/* ---- epoll ---- */

/* ep's wait until deadline once a look found nothing. */
static int epoll_park(int ep, struct epoll_event *ev, int n, int64_t deadline)
{
    for (;;) {
        int ms = left_ms(deadline);
        if (ms != 0 && weft_poll(ep, POLLIN, ms) < 0)
            return -1;
        int r = weft__real_epoll_wait(ep, ev, n, 0);
        if (r != 0 || left_ms(deadline) == 0)
            return r;
    }
}

PT_API int epoll_wait(int ep, struct epoll_event *ev, int n, int timeout)
{
    if (timeout == 0 || !weft__posix_calls_user())
        return weft__real_epoll_wait(ep, ev, n, timeout);
    enter();
    int r = weft__real_epoll_wait(ep, ev, n, 0);
    if (r != 0)
        return r;
    return epoll_park(ep, ev, n, deadline_of(timeout < 0 ? -1 : timeout * NS_PER_MS));
}

PT_API int epoll_pwait(int ep, struct epoll_event *ev, int n, int timeout, const sigset_t *mask)
{
    if (!mask)
        return epoll_wait(ep, ev, n, timeout);
    if (timeout == 0 || !weft__posix_calls_user())
        return weft__real_epoll_pwait(ep, ev, n, timeout, mask);
    enter();
    int r = weft__real_epoll_pwait(ep, ev, n, 0, mask);
    if (r != 0)
        return r;
    struct call c = {
        .kind = C_EPWAIT, .fd = ep, .n = n, .timeout = timeout, .a = ev, .mask = mask
    };
    return (int)blocking(&c);
}

PT_API int epoll_pwait2(int ep, struct epoll_event *ev, int n, const struct timespec *ts,
                        const sigset_t *mask)
{
    if (!weft__posix_calls_user() || (ts && ts->tv_sec == 0 && ts->tv_nsec == 0) || bad_ts(ts))
        return weft__real_epoll_pwait2(ep, ev, n, ts, mask);
    enter();
    static const struct timespec zero = { 0, 0 };
    int r = weft__real_epoll_pwait2(ep, ev, n, &zero, mask);
    if (r != 0)
        return r;
    if (!mask)
        return epoll_park(ep, ev, n, deadline_of(ts_ns(ts)));
    struct call c = { .kind = C_EPWAIT2, .fd = ep, .n = n, .ts = ts, .a = ev, .mask = mask };
    return (int)blocking(&c);
}

/* ---- select, pselect ---- */

struct sets {
    fd_set *r, *w, *e; /* the caller's */
    size_t len;        /* the bytes of each that select(2) reads: n bits, in fd_masks */
    fd_set r0, w0, e0; /* their contents at the call */
};

/* A program may size its sets for n (select(2) reads no further): copy
 * only that much. */
static void sets_init(struct sets *s, int n, fd_set *r, fd_set *w, fd_set *e)
{
    s->r = r;
    s->w = w;
    s->e = e;
    s->len = ((size_t)n + NFDBITS - 1) / NFDBITS * sizeof(fd_mask);
}

static void sets_save(struct sets *s)
{
    if (s->r)
        memcpy(&s->r0, s->r, s->len);
    if (s->w)
        memcpy(&s->w0, s->w, s->len);
    if (s->e)
        memcpy(&s->e0, s->e, s->len);
}

static void sets_restore(struct sets *s)
{
    if (s->r)
        memcpy(s->r, &s->r0, s->len);
    if (s->w)
        memcpy(s->w, &s->w0, s->len);
    if (s->e)
        memcpy(s->e, &s->e0, s->len);
}

/* The wait of select or pselect (n <= FD_SETSIZE, the sets saved, a look
 * found nothing) until deadline: select(2)'s result, or -2 when the set
 * cannot be made (the sets restored). */
static int select_wait(int n, struct sets *s, int64_t deadline)
{
    struct wset ws = { 0, -1, 0, -1 };
    int r = -2;
    for (int fd = 0; fd < n; fd++) {
        short ev = (short)((s->r && FD_ISSET(fd, &s->r0) ? POLLIN : 0) |
                           (s->w && FD_ISSET(fd, &s->w0) ? POLLOUT : 0) |
                           (s->e && FD_ISSET(fd, &s->e0) ? POLLPRI : 0));
        if (ev && ws_add(&ws, fd, ev) != 0)
            goto out;
    }
    for (;;) {
        int ms = left_ms(deadline);
        if (ms != 0 && ws_wait(&ws, ms) < 0) {
            r = -1;
            break;
        }
        sets_restore(s);
        struct timeval zero = { 0, 0 };
        r = weft__real_select(n, s->r, s->w, s->e, &zero);
        if (r != 0 || left_ms(deadline) == 0)
            break;
    }
out:
    if (r == -2)
        sets_restore(s);
    ws_close(&ws);
    return r;
}

/* A look with timeout 0 at the sets (saved first): select(2)'s result. */
static int select_look(int n, struct sets *s)
{
    struct timeval zero = { 0, 0 };
    sets_save(s);
    int k = weft__real_select(n, s->r, s->w, s->e, &zero);
    if (k == 0)
        sets_restore(s);
    return k;
}

PT_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    if ((tv && tv->tv_sec == 0 && tv->tv_usec == 0) ||
        (tv && (tv->tv_sec < 0 || tv->tv_usec < 0)) || n < 0 || !weft__posix_calls_user())
        return weft__real_select(n, r, w, e, tv);
    enter();
    if (n > FD_SETSIZE) { /* sets larger than fd_set: not copied here */
        struct call c = { .kind = C_SELECT, .n = n, .r = r, .w = w, .e = e, .tv = tv };
        return (int)blocking(&c);
    }
    struct sets s;
    sets_init(&s, n, r, w, e);
    int k = select_look(n, &s);
    if (k != 0)
        return k;
    int64_t ns = -1;
    if (tv) {
        ns = tv->tv_sec >= INT64_MAX / NS_PER_S - 1
                 ? -1
                 : (int64_t)tv->tv_sec * NS_PER_S + (int64_t)tv->tv_usec * NS_PER_US;
    }
    int64_t deadline = deadline_of(ns);
    k = select_wait(n, &s, deadline);
    if (k == -2) {
        struct call c = { .kind = C_SELECT, .n = n, .r = r, .w = w, .e = e, .tv = tv };
        return (int)blocking(&c);
    }
    if (tv && deadline >= 0) { /* Linux writes back the time left */
        int err = errno;
        int64_t left = deadline - now_ns();
        if (left < 0)
            left = 0;
        tv->tv_sec = (time_t)(left / NS_PER_S);
        tv->tv_usec = (suseconds_t)(left % NS_PER_S / NS_PER_US);
        errno = err;
    }
    return k;
}

PT_API int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                   const sigset_t *mask)
{
    if (!weft__posix_calls_user() || (ts && ts->tv_sec == 0 && ts->tv_nsec == 0) || bad_ts(ts) ||
        n < 0)
        return weft__real_pselect(n, r, w, e, ts, mask);
    enter();
    if (n <= FD_SETSIZE) {
        static const struct timespec zero = { 0, 0 };
        struct sets s;
        sets_init(&s, n, r, w, e);
        sets_save(&s);
        int k = weft__real_pselect(n, r, w, e, &zero, mask);
        if (k != 0)
            return k;
        sets_restore(&s);
        if (!mask) {
            k = select_wait(n, &s, deadline_of(ts_ns(ts)));
            if (k != -2)
                return k;
        }
    }
    struct call c = { .kind = C_PSELECT, .n = n, .r = r, .w = w, .e = e, .ts = ts, .mask = mask };
    return (int)blocking(&c);
}
