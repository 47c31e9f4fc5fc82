/* rw.c: read, write, the socket transfers, accept and connect of a user
 * thread park only that thread (docs/posix.md, "Blocking calls").
 *
 * A user thread on a worker goes to weft's mirrors (weft_read, weft_recv,
 * weft_accept, ...: a system call that never waits first, then io_uring,
 * or the poller or the hand-off where the ring cannot serve), which keep
 * the call's meaning: an O_NONBLOCK descriptor fails with EAGAIN, a write
 * to a blocking descriptor returns when all of it went out. What the
 * mirrors do not express is built here from an attempt that never waits
 * (MSG_DONTWAIT) and weft_poll on the descriptor:
 *  - SO_RCVTIMEO / SO_SNDTIMEO: a socket with a timeout waits at most that
 *    long in weft_poll, then EAGAIN (a part already moved is returned);
 *  - calls with an address or a message (recvfrom, sendto, recvmsg,
 *    sendmsg) and readv/writev on sockets;
 *  - connect with SO_SNDTIMEO (made non-blocking for the call, then
 *    EINPROGRESS on the timeout, as Linux answers).
 * readv/writev on a pipe or terminal take the hand-off (weft_blocking);
 * on a regular file the call itself (the page cache; a disk wait holds the
 * worker until the rescue, as a plain read of a file would not with the
 * mirror: read/pread of files go to the mirror).
 * Each is a cancellation point acted on at the call (not while waiting),
 * and pending pthread_kill signals are raised at the call.
 *
 * Kernel threads the program made otherwise, threads in a child of fork,
 * and every thread before the runtime starts take glibc's call. So do
 * glibc's internal calls (stdio's reads), as they do not go through these
 * names.
 *
 * The _chk names that _FORTIFY_SOURCE programs call (Debian builds all
 * packages so) are defined too: glibc's own reach its internal read.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "posix/rw.h"

/* ---- glibc's own calls ---------------------------------------------------- */

#define RW_NAMES(X)                                                                                \
    X(read)                                                                                        \
    X(write)                                                                                       \
    X(readv)                                                                                       \
    X(writev)                                                                                      \
    X(pread)                                                                                       \
    X(pwrite)                                                                                      \
    X(pread64)                                                                                     \
    X(pwrite64)                                                                                    \
    X(recv)                                                                                        \
    X(send)                                                                                        \
    X(recvfrom)                                                                                    \
    X(sendto)                                                                                      \
    X(recvmsg)                                                                                     \
    X(sendmsg)                                                                                     \
    X(accept)                                                                                      \
    X(accept4)                                                                                     \
    X(connect)                                                                                     \
    X(syscall)

#define THUNK(name) WEFT__REAL_THUNK(weft__rw_ptr_, name)
RW_NAMES(THUNK)
#undef THUNK

int weft__posix_rw_resolved;

__attribute__((constructor(101))) void weft__posix_rw_resolve(void)
{
    if (__atomic_load_n(&weft__posix_rw_resolved, __ATOMIC_ACQUIRE))
        return;
#define RESOLVE(name) weft__rw_ptr_##name = weft__posix_real_sym(#name);
    RW_NAMES(RESOLVE)
#undef RESOLVE
    __atomic_store_n(&weft__posix_rw_resolved, 1, __ATOMIC_RELEASE);
}

extern __typeof__(pread64) weft__real_pread64;
extern __typeof__(pwrite64) weft__real_pwrite64;

/* ---- helpers -------------------------------------------------------------- */

#define NS_PER_MS 1000000ll
#define MS_PER_S  1000ll

/* At each call: pending pthread_kill signals run, a cancellation acts. */
static void enter(void)
{
    weft__posix_deliver();
    weft__posix_testcancel();
}

/* The socket's SO_RCVTIMEO or SO_SNDTIMEO (opt) in ms, rounded up: 0 none
 * (or not a socket: *sock = 0). */
static int64_t sock_timeout(int fd, int opt, int *sock)
{
    struct timeval tv = { 0, 0 };
    socklen_t len = sizeof tv;
    int err = errno;
    if (getsockopt(fd, SOL_SOCKET, opt, &tv, &len) != 0) {
        *sock = 0; /* ENOTSOCK, or EBADF for the call itself to report */
        errno = err;
        return 0;
    }
    *sock = 1;
    return (int64_t)tv.tv_sec * MS_PER_S + (tv.tv_usec + 999) / 1000;
}

/* enter(), then the timeout of fd in the direction out (sock_timeout);
 * sock may be NULL. */
static int64_t enter_timeout(int fd, int out, int *sock)
{
    int dummy;
    enter();
    return sock_timeout(fd, out ? SO_SNDTIMEO : SO_RCVTIMEO, sock ? sock : &dummy);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * MS_PER_S + ts.tv_nsec / NS_PER_MS;
}

static int nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK);
}

/* Waits in weft_poll until fd has ev, until deadline (ms on now_ms; -1
 * none). 1: ready (or an error to be found by the next attempt), 0: timed
 * out, -1: failed (errno). */
static int wait_fd(int fd, short ev, int64_t deadline)
{
    for (;;) {
        int ms = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return 0;
            ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        int r = weft_poll(fd, ev, ms);
        if (r > 0)
            return 1;
        if (r < 0 && errno != ECANCELED)
            return -1;
        if (r == 0 && (ms < 0 || deadline - now_ms() <= 0))
            return ms < 0 ? 1 : 0;
        /* broken off (ECANCELED, or 0 before the deadline): a socket call
         * restarts under SA_RESTART unless it has a timeout (signal(7)) */
        if (weft__posix_sig_broken(deadline < 0)) {
            errno = EINTR;
            return -1;
        }
    }
}

/* One message transfer: recvmsg or sendmsg that never waits. */
struct xfer {
    int fd, flags, out;
    struct msghdr *msg;
};

static ssize_t attempt(struct xfer *x)
{
    return x->out ? weft__real_sendmsg(x->fd, x->msg, x->flags | MSG_DONTWAIT)
                  : weft__real_recvmsg(x->fd, x->msg, x->flags | MSG_DONTWAIT);
}

/* Drops n bytes from the front of msg's iovecs (a copy the caller owns). */
static void advance(struct msghdr *msg, size_t n)
{
    while (n && msg->msg_iovlen) {
        struct iovec *v = msg->msg_iov;
        if (n < v->iov_len) {
            v->iov_base = (char *)v->iov_base + n;
            v->iov_len -= n;
            return;
        }
        n -= v->iov_len;
        msg->msg_iov++;
        msg->msg_iovlen--;
    }
}

static size_t msg_len(const struct msghdr *msg)
{
    size_t n = 0;
    for (size_t i = 0; i < msg->msg_iovlen; i++)
        n += msg->msg_iov[i].iov_len;
    return n;
}

/* A socket transfer of a user thread as the blocking call makes it, on a
 * socket (x->fd): attempts that never wait, weft_poll between them, until
 * done, the timeout tmo (ms, 0 none) or an error. A send on a stream
 * socket goes on until all went out (its iovecs are copied to be moved
 * on); datagrams and receives return after one success. */
static ssize_t sock_xfer(struct xfer *x, int64_t tmo)
{
    int64_t deadline = tmo > 0 ? now_ms() + tmo : -1;
    int dontwait = (x->flags & MSG_DONTWAIT) || nonblocking(x->fd);
    struct msghdr m = *x->msg;
    struct iovec small[16], *iov = small;
    int type = 0;
    socklen_t tl = sizeof type;
    /* a blocking send on a stream socket, or a MSG_WAITALL receive, moves
     * everything: its iovecs are copied and moved on */
    int whole = !dontwait && msg_len(x->msg) > 0 && (x->out || (x->flags & MSG_WAITALL)) &&
                getsockopt(x->fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM;
    if (whole && m.msg_iovlen > 16) {
        iov = malloc(m.msg_iovlen * sizeof *iov);
        if (!iov)
            whole = 0;
    }
    if (whole) {
        memcpy(iov, m.msg_iov, m.msg_iovlen * sizeof *iov);
        m.msg_iov = iov;
    }
    struct xfer y = *x;
    y.msg = &m;
    size_t done = 0;
    ssize_t r;
    for (;;) {
        r = attempt(&y);
        if (r >= 0 && whole) {
            done += (size_t)r;
            advance(&m, (size_t)r);
            if (msg_len(&m) == 0 || (r == 0 && !x->out)) {
                r = (ssize_t)done;
                break;
            }
            continue;
        }
        if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || dontwait)
            break;
        int w = wait_fd(x->fd, x->out ? POLLOUT : POLLIN, deadline);
        if (w <= 0) {
            if (w == 0)
                errno = EAGAIN; /* the socket's timeout */
            r = -1;
            break;
        }
    }
    if (r < 0 && done)
        r = (ssize_t)done;
    if (iov != small)
        free(iov);
    if (!x->out) { /* what recvmsg(2) writes back */
        x->msg->msg_namelen = m.msg_namelen;
        x->msg->msg_controllen = m.msg_controllen;
        x->msg->msg_flags = m.msg_flags;
    }
    return r;
}

static ssize_t sock_simple(int fd, void *buf, size_t n, int flags, int out, int64_t tmo)
{
    struct iovec v = { buf, n };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    struct xfer x = { fd, flags, out, &m };
    return sock_xfer(&x, tmo);
}

/* ---- sockets without a timeout ------------------------------------------- */

/* The mirrors' own first step, made here: a transfer that completes at
 * once returns without the scheduling point the mirror ends it with (a
 * yield per call: a thread-per-connection server makes several per
 * request, after poll said the socket is ready). What would wait goes to
 * the mirror, which tries once more, then waits (or fails with EAGAIN on
 * an O_NONBLOCK socket). Weft's quantum still preempts a thread that only
 * makes such calls. */
static ssize_t quick_recv(int fd, void *buf, size_t n, int flags)
{
    if (flags & MSG_WAITALL)
        return weft_recv(fd, buf, n, flags); /* the ring waits for all of it */
    int err = errno;
    ssize_t r = weft__real_recv(fd, buf, n, flags | MSG_DONTWAIT);
    if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || (flags & MSG_DONTWAIT))
        return r;
    errno = err;
    return weft_recv(fd, buf, n, flags);
}

static ssize_t quick_send(int fd, const void *buf, size_t n, int flags)
{
    int err = errno;
    ssize_t r = weft__real_send(fd, buf, n, flags | MSG_DONTWAIT);
    if ((r >= 0 && (size_t)r == n) || (flags & MSG_DONTWAIT) ||
        (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
        return r;
    errno = err;
    size_t done = r > 0 ? (size_t)r : 0;
    ssize_t rest = weft_send(fd, (const char *)buf + done, n - done, flags);
    if (rest < 0)
        return done ? (ssize_t)done : -1;
    return (ssize_t)done + rest;
}

/* ---- read and write ------------------------------------------------------- */

/* read (out 0) or write (out 1) on a user thread: a socket with a timeout
 * waits for it, one without sends or receives at once or parks; anything
 * else goes through weft's read/write. */
static ssize_t read_write(int fd, void *buf, size_t n, int out)
{
    int sock;
    int64_t tmo = enter_timeout(fd, out, &sock);
    if (tmo > 0)
        return sock_simple(fd, buf, n, 0, out, tmo);
    for (;;) {
        ssize_t r;
        if (out)
            r = sock ? quick_send(fd, buf, n, 0) : weft_write(fd, buf, n);
        else
            r = sock ? quick_recv(fd, buf, n, 0) : weft_read(fd, buf, n);
        if (r >= 0 || errno != ECANCELED)
            return r;
        /* broken off by a signal or a cancellation (park.c's interrupt):
         * read and write restart under SA_RESTART (signal(7)) */
        if (weft__posix_sig_broken(1)) {
            errno = EINTR;
            return -1;
        }
    }
}

PT_API ssize_t read(int fd, void *buf, size_t n)
{
    if (!weft__posix_rw_user())
        return weft__real_read(fd, buf, n);
    return read_write(fd, buf, n, 0);
}

PT_API ssize_t write(int fd, const void *buf, size_t n)
{
    if (!weft__posix_rw_user())
        return weft__real_write(fd, buf, n);
    return read_write(fd, (void *)buf, n, 1);
}

PT_API ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (!weft__posix_rw_user())
        return weft__real_pread(fd, buf, n, off);
    enter();
    return weft_pread(fd, buf, n, off);
}

PT_API ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (!weft__posix_rw_user())
        return weft__real_pwrite(fd, buf, n, off);
    enter();
    return weft_pwrite(fd, buf, n, off);
}

PT_API ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off);
}

PT_API ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite(fd, buf, n, off);
}

/* readv/writev: sockets as messages; a regular file or a block device the
 * call itself (the page cache); anything else (pipes, terminals) the
 * hand-off unless O_NONBLOCK. */
struct vcall {
    int fd, cnt, out;
    const struct iovec *iov;
    ssize_t r;
    int err;
};

static void run_v(void *arg)
{
    struct vcall *c = arg;
    c->r =
        c->out ? weft__real_writev(c->fd, c->iov, c->cnt) : weft__real_readv(c->fd, c->iov, c->cnt);
    c->err = errno;
}

static ssize_t vec(int fd, const struct iovec *iov, int cnt, int out)
{
    int sock;
    int64_t tmo = enter_timeout(fd, out, &sock);
    if (sock && cnt >= 0) {
        struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
        struct xfer x = { fd, 0, out, &m };
        return sock_xfer(&x, tmo);
    }
    struct vcall c = { fd, cnt, out, iov, -1, 0 };
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || nonblocking(fd) ||
        weft_blocking(run_v, &c) != 0)
        run_v(&c);
    errno = c.err;
    return c.r;
}

PT_API ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    if (!weft__posix_rw_user())
        return weft__real_readv(fd, iov, cnt);
    return vec(fd, iov, cnt, 0);
}

PT_API ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (!weft__posix_rw_user())
        return weft__real_writev(fd, iov, cnt);
    return vec(fd, iov, cnt, 1);
}

/* ---- sockets -------------------------------------------------------------- */

/* recv (out 0) or send (out 1) on a user thread: MSG_DONTWAIT or no
 * SO_RCVTIMEO/SO_SNDTIMEO, at once or parked; else bounded by the timeout. */
static ssize_t recv_send(int fd, void *buf, size_t n, int flags, int out)
{
    enter();
    if (flags & MSG_DONTWAIT)
        return out ? quick_send(fd, buf, n, flags) : quick_recv(fd, buf, n, flags);
    /* One attempt that never waits comes before the timeout is read: what
     * completes at once needs none, and reading it cost a getsockopt per
     * call (12 per civetweb request, a sixth of its system calls). */
    size_t done = 0;
    if (!(flags & MSG_WAITALL)) {
        int err = errno;
        ssize_t r = out ? weft__real_send(fd, buf, n, flags | MSG_DONTWAIT)
                        : weft__real_recv(fd, buf, n, flags | MSG_DONTWAIT);
        if ((r >= 0 && (!out || (size_t)r == n)) ||
            (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
            return r;
        errno = err;
        done = r > 0 ? (size_t)r : 0; /* the part of a send that went out */
    }
    int sock;
    int64_t tmo = sock_timeout(fd, out ? SO_SNDTIMEO : SO_RCVTIMEO, &sock);
    char *rest = (char *)buf + done;
    ssize_t r = tmo > 0 ? sock_simple(fd, rest, n - done, flags, out, tmo)
                : out   ? quick_send(fd, rest, n - done, flags)
                        : quick_recv(fd, rest, n - done, flags);
    if (r < 0)
        return done ? (ssize_t)done : -1;
    return (ssize_t)done + r;
}

PT_API ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    if (!weft__posix_rw_user())
        return weft__real_recv(fd, buf, n, flags);
    return recv_send(fd, buf, n, flags, 0);
}

PT_API ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (!weft__posix_rw_user())
        return weft__real_send(fd, buf, n, flags);
    return recv_send(fd, (void *)buf, n, flags, 1);
}

PT_API ssize_t recvfrom(int fd, void *restrict buf, size_t n, int flags, __SOCKADDR_ARG sa,
                        socklen_t *restrict alen)
{
    if (!weft__posix_rw_user())
        return weft__real_recvfrom(fd, buf, n, flags, sa, alen);
    struct sockaddr *addr = sa.__sockaddr__;
    if (!addr)
        return recv(fd, buf, n, flags);
    int64_t tmo = enter_timeout(fd, 0, NULL);
    struct iovec v = { buf, n };
    struct msghdr m = {
        .msg_name = addr, .msg_namelen = alen ? *alen : 0, .msg_iov = &v, .msg_iovlen = 1
    };
    struct xfer x = { fd, flags, 0, &m };
    ssize_t r = sock_xfer(&x, tmo);
    if (r >= 0 && alen)
        *alen = m.msg_namelen;
    return r;
}

PT_API ssize_t sendto(int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG sa,
                      socklen_t alen)
{
    if (!weft__posix_rw_user())
        return weft__real_sendto(fd, buf, n, flags, sa, alen);
    const struct sockaddr *addr = sa.__sockaddr__;
    if (!addr)
        return send(fd, buf, n, flags);
    int64_t tmo = enter_timeout(fd, 1, NULL);
    struct iovec v = { (void *)buf, n };
    struct msghdr m = {
        .msg_name = (void *)addr, .msg_namelen = alen, .msg_iov = &v, .msg_iovlen = 1
    };
    struct xfer x = { fd, flags, 1, &m };
    return sock_xfer(&x, tmo);
}

PT_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    if (!weft__posix_rw_user())
        return weft__real_recvmsg(fd, msg, flags);
    int64_t tmo = enter_timeout(fd, 0, NULL);
    struct xfer x = { fd, flags, 0, msg };
    return sock_xfer(&x, tmo);
}

PT_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    if (!weft__posix_rw_user())
        return weft__real_sendmsg(fd, msg, flags);
    int64_t tmo = enter_timeout(fd, 1, NULL);
    struct xfer x = { fd, flags, 1, (struct msghdr *)msg };
    return sock_xfer(&x, tmo);
}

/* accept4's flags on the descriptor weft_accept made: a fork+exec between
 * the two would see the descriptor without FD_CLOEXEC (docs/posix.md). */
static int accept_flags(int s, int flags)
{
    if (s >= 0 && (flags & SOCK_CLOEXEC))
        fcntl(s, F_SETFD, FD_CLOEXEC);
    if (s >= 0 && (flags & SOCK_NONBLOCK))
        fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
    return s;
}

static int do_accept(int fd, struct sockaddr *addr, socklen_t *alen, int flags)
{
    int64_t tmo = enter_timeout(fd, 0, NULL);
    if (tmo <= 0 || nonblocking(fd)) {
        if ((flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK)) != 0 || nonblocking(fd))
            return weft__real_accept4(fd, addr, alen, flags); /* EINVAL, or at once */
        int err = errno;
        int s;
        /* broken off by a signal or a cancellation: accept restarts under
         * SA_RESTART (signal(7)) */
        while ((s = weft_accept(fd, addr, alen)) < 0 && errno == ECANCELED)
            if (weft__posix_sig_broken(1)) {
                errno = EINTR;
                return -1;
            }
        if (s >= 0)
            errno = err;
        return accept_flags(s, flags);
    }
    int w = wait_fd(fd, POLLIN, now_ms() + tmo);
    if (w == 0)
        errno = EAGAIN;
    if (w <= 0)
        return -1;
    return weft__real_accept4(fd, addr, alen, flags);
}

PT_API int accept(int fd, __SOCKADDR_ARG addr, socklen_t *restrict alen)
{
    if (!weft__posix_rw_user())
        return weft__real_accept(fd, addr, alen);
    return do_accept(fd, addr.__sockaddr__, alen, 0);
}

PT_API int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *restrict alen, int flags)
{
    if (!weft__posix_rw_user())
        return weft__real_accept4(fd, addr, alen, flags);
    return do_accept(fd, addr.__sockaddr__, alen, flags);
}

PT_API int connect(int fd, __CONST_SOCKADDR_ARG sa, socklen_t alen)
{
    const struct sockaddr *addr = sa.__sockaddr__;
    if (!weft__posix_rw_user())
        return weft__real_connect(fd, addr, alen);
    int64_t tmo = enter_timeout(fd, 1, NULL);
    int fl = fcntl(fd, F_GETFL);
    if (tmo <= 0 || fl < 0 || (fl & O_NONBLOCK))
        return (fl >= 0 && (fl & O_NONBLOCK)) ? weft__real_connect(fd, addr, alen)
                                              : weft_connect(fd, addr, alen);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int r = weft__real_connect(fd, addr, alen);
    int err = errno;
    fcntl(fd, F_SETFL, fl);
    if (r == 0 || err != EINPROGRESS) {
        errno = err;
        return r;
    }
    int w = wait_fd(fd, POLLOUT, now_ms() + tmo);
    if (w <= 0) {
        if (w == 0)
            errno = EINPROGRESS; /* Linux's answer to a connect that timed out */
        return -1;
    }
    int soerr = 0;
    socklen_t len = sizeof soerr;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
    if (soerr) {
        errno = soerr;
        return -1;
    }
    return 0;
}

/* ---- _FORTIFY_SOURCE's checked names --------------------------------------- */

PT_API ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __builtin_trap(); /* glibc's __chk_fail aborts: the buffer overflows */
    return read(fd, buf, n);
}

PT_API ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        __builtin_trap();
    return pread(fd, buf, n, off);
}

PT_API ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        __builtin_trap();
    return pread(fd, buf, n, off);
}

PT_API ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        __builtin_trap();
    return recv(fd, buf, n, flags);
}

PT_API ssize_t __recvfrom_chk(int fd, void *restrict buf, size_t n, size_t buflen, int flags,
                              __SOCKADDR_ARG addr, socklen_t *restrict alen)
{
    if (n > buflen)
        __builtin_trap();
    return recvfrom(fd, buf, n, flags, addr, alen);
}
