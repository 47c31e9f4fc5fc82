/* syscalls.c: the weft_* mirrors of blocking system calls.
 *
 * From a user thread on a worker with a ring: a read, write, recv, send,
 * pread or pwrite is first made as a system call that does not wait; what
 * would wait goes through the ring: prepare the SQE, park, return the
 * completion's result (errno = -res on failure), exactly as the call
 * mirrored. Files the ring cannot serve, and the rest of a blocking pipe
 * write, take the hand-off path. Without a ring: the call itself, its
 * worker handed to another kernel thread meanwhile (policy/machine.c). From
 * a plain kernel thread: the call itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "io/io.h"
#include "io/poller.h"
#include "io/ring.h"
#include "sched/sched.h"

#define NS_PER_MS 1000000ull
#define MS_PER_S  1000
#define HOUR_NS   (3600 * WEFT_NS_PER_S) /* a sleep that is repeated for ever */

static long result(int res)
{
    if (res < 0) {
        weft__errno_set(-res);
        return -1;
    }
    return res;
}

/* The stream and positional transfers share one path; off == -1: the
 * file's current position. */
enum { RING_READ, RING_WRITE, RING_RECV, RING_SEND };

static int positional(int kind, uint64_t off)
{
    return (kind == RING_READ || kind == RING_WRITE) && off != (uint64_t)-1;
}

/* Counts: an SQE's length has 32 bits, so what goes into one is clamped
 * as the kernel clamps a count (weft__io_clamp): unclamped, n = 4 GiB would
 * be a read of 0 bytes. Only that is clamped: a system call checks the
 * caller's whole buffer (EFAULT) before it clamps, so it gets n as given. */

static long fallback_rw(int kind, int fd, void *buf, size_t n, uint64_t off, int flags);
static long handoff_rw(int kind, int fd, void *buf, size_t n, uint64_t off, int flags);

/* The calling user thread's worker if it has a ring, else NULL (always
 * without liburing: then every ring path below is dead code, compiled
 * against io/ring.h's stubs). */
static struct weft__worker *ring_worker(void)
{
    struct weft__worker *w = weft__tls_worker;
    if (WEFT__HAVE_URING && w && w->current && weft__io_ring(w))
        return w;
    return NULL;
}

/* How a request waits (ring_finish). */
enum {
    RING_BATCHED, /* submitted with the worker's next batch */
    RING_NOW,     /* submitted before the thread parks: the kernel has looked
                     the descriptor up (and holds its file) from the call on */
};

/* Starts a request of the calling user thread on w's ring, made of nsqe
 * linked SQEs (nsqe completions to wait for): returns the first SQE, the
 * caller's to prepare, with room for the others (weft__io_sqe); ring_finish
 * then waits for it. */
static struct io_uring_sqe *ring_start(struct weft__worker *w, struct weft__io_req *req, int nsqe)
{
    *req = (struct weft__io_req){ .self = w->current, .pending = nsqe };
    if (nsqe > 1)
        weft__io_room(w, (unsigned)nsqe);
    return weft__io_sqe(w);
}

/* Waits for the request ring_start began, its SQEs prepared (sqe: the
 * first, which carries req; liburing's prep functions may clear user_data,
 * so it is set here, after them): the thread parks until the request
 * completes. Returns the first CQE's result (a negative errno value on
 * failure). */
static int ring_finish(struct weft__worker *w, struct weft__io_req *req, struct io_uring_sqe *sqe,
                       int when)
{
    io_uring_sqe_set_data(sqe, req);
    return when == RING_NOW ? weft__io_wait_now(w, req, req->pending)
                            : weft__io_wait(w, req, req->pending);
}

/* A pending call stays on the file it started on, as a blocked system call
 * does, even when another thread closes the descriptor and the number names
 * another file before the call ends. io_uring looks a descriptor up when it
 * issues the SQE, and a queued SQE waits for the worker's next submission
 * while other user threads run (uring.c): so a stream call (read, write,
 * recv, send) is first made right away as a system call that never waits
 * (RWF_NOWAIT, MSG_DONTWAIT), which looks the descriptor up at the call;
 * only when that would block does it go to the ring, and that SQE is
 * submitted before its thread parks, so the kernel holds the file from
 * then on. The attempt also answers the O_NONBLOCK question: io_uring
 * waits for data even on O_NONBLOCK files, where the mirrored call fails
 * with EAGAIN, so a would-block result reads the file's flags. A call that
 * completes at once costs one system call and no switch.
 *
 * The caller's descriptor fails a would-block call with EAGAIN: it is
 * O_NONBLOCK, and not a regular file or block device, where O_NONBLOCK
 * means nothing (read(2) waits for the disk) and RWF_NOWAIT's EAGAIN only
 * says the data is not cached. */
static int never_waits(int kind, int fd)
{
    if (!weft__io_nonblocking(fd))
        return 0;
    struct stat st;
    if (kind == RING_RECV || kind == RING_SEND || fstat(fd, &st) != 0)
        return 1;
    return !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
}

/* A call that completed without waiting still ends at a scheduling point,
 * as one that went through the ring does: the caller goes behind the
 * worker's other ready threads, which a thread making only such calls
 * would otherwise keep from running. */
static long at_once(long r)
{
    int err = weft__errno_get();
    weft_yield();
    weft__errno_set(err);
    return r;
}

/* The attempt that never waits, at off (-1: the file's position) for a
 * read or write. A count past SSIZE_MAX, which an iovec cannot carry,
 * fails as read(2) fails it (EFAULT: no buffer is that long). */
static long try_now(int kind, int fd, void *buf, size_t n, uint64_t off, int flags)
{
    struct iovec iov = { buf, n > SSIZE_MAX ? (size_t)SSIZE_MAX : n };
    switch (kind) {
    case RING_READ: return preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
    case RING_WRITE: return pwritev2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
    case RING_RECV: return recv(fd, buf, n, flags | MSG_DONTWAIT);
    default: return send(fd, buf, n, flags | MSG_DONTWAIT);
    }
}

/* One transfer through the ring of the calling thread's worker w. when:
 * RING_NOW for a call that may wait on another party (the file is held
 * from the call on), RING_BATCHED for positional I/O, which never waits on
 * another party. */
static long ring_rw(struct weft__worker *w, int kind, int fd, void *buf, size_t n, uint64_t off,
                    int flags, int when)
{
    struct weft__io_req req;
    struct io_uring_sqe *sqe = ring_start(w, &req, 1);
    switch (kind) {
    case RING_READ: io_uring_prep_read(sqe, fd, buf, (unsigned)n, off); break;
    case RING_WRITE: io_uring_prep_write(sqe, fd, buf, (unsigned)n, off); break;
    case RING_RECV: io_uring_prep_recv(sqe, fd, buf, n, flags); break;
    default: io_uring_prep_send(sqe, fd, buf, n, flags); break;
    }
    return result(ring_finish(w, &req, sqe, when));
}

/* A file that cannot be read or written without waiting, or through
 * io_uring: RWF_NOWAIT is refused (EOPNOTSUPP) by tmpfs, /proc and /sys
 * files, directories, terminals and named pipes, and by buffered writes on
 * file systems without asynchronous ones; some files refuse it or a ring
 * request with EINVAL. The call itself then runs on the hand-off path, whose
 * result is the system call's own (the data, EISDIR, or a genuine EINVAL);
 * a named pipe waits on the poller instead (poller.c). */
static int ring_cannot(int err)
{
    return err == EOPNOTSUPP || err == EINVAL;
}

static long fallback_write_all(int fd, void *buf, size_t n, const struct stat *id);

/* A ring send that failed with EPIPE after waiting, made what send(2) and
 * write(2) make of it: a socket error the peer left (ECONNRESET: it closed
 * with data unread) comes first, as the blocking call's wait reports it;
 * otherwise SIGPIPE is raised on the calling thread unless MSG_NOSIGNAL
 * (the ring's sends never raise it). Sets errno. */
static void pipe_error(int fd, int flags)
{
    int soerr = weft__io_sock_error(fd);
    if (soerr != 0) {
        weft__errno_set(soerr);
        return;
    }
    if (!(flags & MSG_NOSIGNAL))
        raise(SIGPIPE);
    weft__errno_set(EPIPE);
}

/* The rest of a write or send on a blocking descriptor, all of it, as the
 * blocking call writes it: on a socket one ring send with MSG_WAITALL (the
 * kernel sends piece by piece as room appears, on the file it looked up at
 * the submission); on anything else (a pipe, a terminal) the hand-off
 * path's write(2), which loops in the kernel and holds its file. A failure
 * after some bytes went out returns their count, as the kernel does. */
static long write_rest(struct weft__worker *w, int kind, int fd, char *buf, size_t n, size_t done,
                       int flags)
{
    long r;
    struct stat id;
    if (kind != RING_SEND && fstat(fd, &id) != 0)
        return done ? (long)done : -1;
    if (kind == RING_SEND || S_ISSOCK(id.st_mode)) {
        r = ring_rw(w, RING_SEND, fd, buf + done, n - done, (uint64_t)-1, flags | MSG_WAITALL,
                    RING_NOW);
        if (r < 0 &&
            weft__errno_get() == EAGAIN) /* seen when the peer shuts down: the call decides */
            r = handoff_rw(RING_SEND, fd, buf + done, n - done, (uint64_t)-1, flags);
        else if (r < 0 && weft__errno_get() == EPIPE && !done)
            pipe_error(fd, flags);
    } else {
        /* A pipe: a duplicate made now holds the file, so the hand-off's
         * write(2), which may start only later (a machine to wake), goes to
         * this pipe whatever the number names by then. */
        int own = S_ISFIFO(id.st_mode) ? weft__io_dup_spare(fd) : -1;
        r = fallback_write_all(own >= 0 ? own : fd, buf + done, n - done, &id);
        if (own >= 0) {
            int err = weft__errno_get();
            close(own);
            weft__errno_set(err);
        }
    }
    if (r < 0)
        return done ? (long)done : -1;
    return (long)(done + (size_t)r);
}

/* Positional I/O from a user thread on w: first the system call that does
 * not wait (preadv2/pwritev2 at off with RWF_NOWAIT). It checks what the
 * ring does not: a descriptor that cannot seek gives ESPIPE (the ring
 * would read a pipe from its current position and consume the data). It
 * also completes what needs no waiting, such as reads from the page cache.
 * What would wait (uncached data, a buffered write on a file system
 * without asynchronous ones) goes to the ring with the worker's next batch:
 * files that seek do not wait on another party. A part done at once is
 * completed there, as a blocking pread or pwrite of a file does. */
static long positional_rw(struct weft__worker *w, int kind, int fd, void *buf, size_t n,
                          uint64_t off)
{
    long r = try_now(kind, fd, buf, n, off, 0);
    size_t want = weft__io_clamp(n);
    if (r == 0 || r == (long)want ||
        (r < 0 && weft__errno_get() != EAGAIN && !ring_cannot(weft__errno_get())))
        return at_once(r);
    size_t done = r > 0 ? (size_t)r : 0;
    long rest = ring_rw(w, kind, fd, (char *)buf + done, want - done, off + done, 0, RING_BATCHED);
    if (rest < 0 && !done && ring_cannot(weft__errno_get()))
        return fallback_rw(kind, fd, buf, n, off, 0);
    if (rest < 0)
        return done ? (long)done : -1;
    return (long)(done + (size_t)rest);
}

/* A stream transfer from a user thread on w: tried at once, then waited
 * for in the ring unless the caller asked not to wait. A write or send on
 * a blocking descriptor returns only when all n bytes went out (or an
 * error came); a recv with MSG_WAITALL waits in the ring at once (the
 * kernel knows which sockets it fills and which return one message). */
static long stream_rw(struct weft__worker *w, int kind, int fd, void *buf, size_t n, int flags)
{
    int out = kind == RING_WRITE || kind == RING_SEND;
    int waitall = kind == RING_RECV && (flags & MSG_WAITALL) && !(flags & MSG_DONTWAIT);
    long r = -1;
    weft__errno_set(EAGAIN);
    if (!waitall) {
        /* n as given: see weft__io_clamp above */
        r = try_now(kind, fd, buf, n, (uint64_t)-1, flags);
        if (r < 0 && (kind == RING_READ || kind == RING_WRITE) && ring_cannot(weft__errno_get()))
            return fallback_rw(kind, fd, buf, n, (uint64_t)-1, flags);
        if (out ? r == (long)weft__io_clamp(n) || (r < 0 && weft__errno_get() != EAGAIN)
                : r >= 0 || weft__errno_get() != EAGAIN)
            return at_once(r);
    }
    n = weft__io_clamp(n);
    size_t done = r > 0 ? (size_t)r : 0;
    if ((flags & MSG_DONTWAIT) || never_waits(kind, fd)) {
        if (waitall)
            return at_once(try_now(kind, fd, buf, n, (uint64_t)-1, flags)); /* no wait either */
        if (!done)
            weft__errno_set(EAGAIN);
        return at_once(done ? (long)done : -1);
    }
    if (out)
        return write_rest(w, kind, fd, buf, n, done, flags);
    return ring_rw(w, kind, fd, buf, n, (uint64_t)-1, flags, RING_NOW);
}

/* ---- the spare-thread path: one record per call ------------------------- */

enum {
    OP_READ,
    OP_WRITE,
    OP_WRITE_ALL,
    OP_PREAD,
    OP_PWRITE,
    OP_RECV,
    OP_SEND,
    OP_ACCEPT,
    OP_CONNECT,
    OP_POLL,
    OP_SLEEP
};

struct call {
    int op, fd, flags;
    void *buf;
    size_t n;
    off_t off;
    struct sockaddr *addr;
    socklen_t *alen;
    socklen_t clen;
    uint64_t ns;
    const struct stat *id; /* OP_WRITE_ALL: the file fd named at the call */
    long ret;
};

/* write(2) until all n bytes went out (the rest of a blocking write, see
 * write_rest). A blocking write(2) stops early when a signal is pending,
 * and a kernel thread that submitted ring requests gets the equivalent
 * (TIF_NOTIFY_SIGNAL) whenever one of them completes: so it goes on, as
 * long as the number still names the same file (each write(2) looks it up
 * again, and the worker runs other user threads meanwhile). */
static long write_all(int fd, const char *buf, size_t n, const struct stat *id)
{
    size_t done = 0;
    for (;;) {
        ssize_t r = write(fd, buf + done, n - done);
        if (r < 0)
            return done ? (long)done : -1;
        done += (size_t)r;
        struct stat now;
        if (done == n || r == 0 || fstat(fd, &now) != 0 || now.st_dev != id->st_dev ||
            now.st_ino != id->st_ino)
            return (long)done;
    }
}

static long direct(struct call *c)
{
    switch (c->op) {
    case OP_READ: return read(c->fd, c->buf, c->n);
    case OP_WRITE: return write(c->fd, c->buf, c->n);
    case OP_WRITE_ALL: return write_all(c->fd, c->buf, c->n, c->id);
    case OP_PREAD: return pread(c->fd, c->buf, c->n, c->off);
    case OP_PWRITE: return pwrite(c->fd, c->buf, c->n, c->off);
    case OP_RECV: return recv(c->fd, c->buf, c->n, c->flags);
    case OP_SEND: return send(c->fd, c->buf, c->n, c->flags);
    case OP_ACCEPT: return accept(c->fd, c->addr, c->alen);
    case OP_CONNECT: return connect(c->fd, c->addr, c->clen);
    case OP_POLL: {
        struct pollfd p = { c->fd, (short)c->flags, 0 };
        int r = poll(&p, 1, (int)c->n);
        return r > 0 ? p.revents : r;
    }
    case OP_SLEEP: {
        struct timespec ts = { (time_t)(c->ns / WEFT_NS_PER_S), (long)(c->ns % WEFT_NS_PER_S) };
        while (nanosleep(&ts, &ts) != 0)
            if (weft__errno_get() != EINTR)
                return -1;
        return 0;
    }
    }
    weft__errno_set(ENOSYS);
    return -1;
}

static void run_call(void *arg)
{
    struct call *c = arg;
    c->ret = direct(c);
}

/* Not on a ring: the call itself, through weft_blocking (from a user
 * thread its worker is handed to another kernel thread meanwhile). */
static long fallback(struct call *c)
{
    weft_blocking(run_call, c);
    return c->ret;
}

static long fallback_write_all(int fd, void *buf, size_t n, const struct stat *id)
{
    struct call c = { .op = OP_WRITE_ALL, .fd = fd, .buf = buf, .n = n, .id = id };
    return fallback(&c);
}

/* The call itself on the hand-off path (the worker lent meanwhile). */
static long handoff_rw(int kind, int fd, void *buf, size_t n, uint64_t off, int flags)
{
    struct call c = { .fd = fd, .buf = buf, .n = n, .flags = flags, .off = (off_t)off };
    if (kind == RING_READ)
        c.op = off == (uint64_t)-1 ? OP_READ : OP_PREAD;
    else if (kind == RING_WRITE)
        c.op = off == (uint64_t)-1 ? OP_WRITE : OP_PWRITE;
    else
        c.op = kind == RING_RECV ? OP_RECV : OP_SEND;
    return fallback(&c);
}

static long fallback_rw(int kind, int fd, void *buf, size_t n, uint64_t off, int flags)
{
    long res;
    if ((off == (uint64_t)-1 || kind == RING_RECV || kind == RING_SEND) &&
        weft__poller_transfer(kind == RING_WRITE || kind == RING_SEND,
                              kind == RING_RECV || kind == RING_SEND, fd, buf, n, flags, &res))
        return res; /* a pipe or socket: waited for without a kernel thread */
    return handoff_rw(kind, fd, buf, n, off, flags);
}

/* ---- the mirrors ---------------------------------------------------------- */

/* A mirror called from a task fails with EPERM: it would wait, and a task
 * must not (sched.h: weft__in_task; weft.h: the split-phase calls). */
static long in_task(void)
{
    weft__errno_set(EPERM);
    return -1;
}

/* A transfer through the ring of the calling user thread's worker, else
 * through a spare kernel thread (or directly from a plain kernel thread). */
static long transfer(int kind, int fd, void *buf, size_t n, uint64_t off, int flags)
{
    if (WEFT_UNLIKELY(weft__in_task()))
        return in_task();
    /* A read or write of 0 bytes through an iovec returns 0 without asking
     * the file, where read(2) and write(2) do ask it (EISDIR, an eventfd's
     * EINVAL, a socket's empty datagram or EPIPE): it is made as itself. */
    struct weft__worker *w = ring_worker();
    if (w && n == 0 && (kind == RING_READ || kind == RING_WRITE))
        w = NULL;
    if (w && positional(kind, off))
        return positional_rw(w, kind, fd, buf, n, off);
    if (w)
        return stream_rw(w, kind, fd, buf, n, flags);
    return fallback_rw(kind, fd, buf, n, off, flags);
}

ssize_t weft_read(int fd, void *buf, size_t n)
{
    return transfer(RING_READ, fd, buf, n, (uint64_t)-1, 0);
}

ssize_t weft_write(int fd, const void *buf, size_t n)
{
    return transfer(RING_WRITE, fd, (void *)buf, n, (uint64_t)-1, 0);
}

ssize_t weft_pread(int fd, void *buf, size_t n, off_t off)
{
    if (off < 0) {
        weft__errno_set(EINVAL);
        return -1;
    }
    return transfer(RING_READ, fd, buf, n, (uint64_t)off, 0);
}

ssize_t weft_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (off < 0) {
        weft__errno_set(EINVAL);
        return -1;
    }
    return transfer(RING_WRITE, fd, (void *)buf, n, (uint64_t)off, 0);
}

ssize_t weft_recv(int fd, void *buf, size_t n, int flags)
{
    return transfer(RING_RECV, fd, buf, n, 0, flags);
}

ssize_t weft_send(int fd, const void *buf, size_t n, int flags)
{
    return transfer(RING_SEND, fd, (void *)buf, n, 0, flags);
}

/* accept or connect (c->op): on a blocking socket through the ring,
 * submitted at once; a non-blocking one returns at once; without a ring,
 * the call itself on the hand-off path. */
static int socket_call(struct call *c)
{
    if (weft__in_task())
        return (int)in_task();
    struct weft__worker *w = ring_worker();
    if (w && !weft__io_nonblocking(c->fd)) {
        struct weft__io_req req;
        struct io_uring_sqe *sqe = ring_start(w, &req, 1);
        if (c->op == OP_ACCEPT)
            io_uring_prep_accept(sqe, c->fd, c->addr, c->alen, 0);
        else
            io_uring_prep_connect(sqe, c->fd, c->addr, c->clen);
        return (int)result(ring_finish(w, &req, sqe, RING_NOW));
    }
    if (w)
        return (int)direct(c); /* non-blocking socket: returns at once */
    return (int)fallback(c);
}

int weft_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct call c = { .op = OP_ACCEPT, .fd = fd, .addr = addr, .alen = len };
    return socket_call(&c);
}

int weft_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct call c = { .op = OP_CONNECT, .fd = fd, .addr = (struct sockaddr *)addr, .clen = len };
    return socket_call(&c);
}

int weft_poll(int fd, short events, int timeout_ms)
{
    if (timeout_ms != 0 && weft__in_task())
        return (int)in_task();
    if (fd < 0 && weft__self()) {
        /* poll(2) ignores a negative descriptor: only the timeout remains */
        if (timeout_ms < 0)
            for (;;)
                weft_sleep_ns(HOUR_NS);
        weft_sleep_ns((uint64_t)timeout_ms * NS_PER_MS);
        return 0;
    }
    struct weft__worker *w = timeout_ms != 0 ? ring_worker() : NULL;
    if (w) {
        struct weft__io_req req;
        /* with a timeout, a linked one: its CQE is the request's second */
        struct io_uring_sqe *sqe = ring_start(w, &req, timeout_ms > 0 ? 2 : 1);
        io_uring_prep_poll_add(sqe, fd, (unsigned)(unsigned short)events);
        struct __kernel_timespec ts;
        if (timeout_ms > 0) {
            io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK);
            ts.tv_sec = timeout_ms / MS_PER_S;
            ts.tv_nsec = (long long)(timeout_ms % MS_PER_S) * NS_PER_MS;
            struct io_uring_sqe *t = weft__io_sqe(w);
            io_uring_prep_link_timeout(t, &ts, 0);
            io_uring_sqe_set_data64(t, (uint64_t)(uintptr_t)&req | WEFT__IO_TAG_TIMEOUT);
        }
        int res = ring_finish(w, &req, sqe, RING_NOW);
        if (res == -ECANCELED && timeout_ms > 0)
            return 0; /* the timeout fired */
        if (res == -EBADF)
            return POLLNVAL; /* poll(2) reports a closed descriptor in revents */
        if (res > 0)         /* the ring also reports what was not asked for (POLLRDHUP) */
            res &= (unsigned short)events | POLLERR | POLLHUP | POLLNVAL;
        return (int)result(res);
    }
    struct call c = { .op = OP_POLL, .fd = fd, .flags = events, .n = (size_t)timeout_ms };
    if (timeout_ms == 0 || !weft__self())
        return (int)direct(&c); /* does not block, or blocks only this kernel thread */
    return (int)fallback(&c);
}

int weft_sleep_ns(uint64_t ns)
{
    if (ns == 0) {
        weft_yield();
        return 0;
    }
    if (weft__in_task())
        return (int)in_task();
    struct weft__worker *w = ring_worker();
    if (w) {
        struct weft__io_req req;
        struct io_uring_sqe *sqe = ring_start(w, &req, 1);
        struct __kernel_timespec ts = { (long long)(ns / WEFT_NS_PER_S),
                                        (long long)(ns % WEFT_NS_PER_S) };
        io_uring_prep_timeout(sqe, &ts, 0, 0);
        weft__thread_wait(w->current, WEFT__WAIT_SLEEP);
        int res = ring_finish(w, &req, sqe, RING_BATCHED);
        return res == -ETIME || res >= 0 ? 0 : (int)result(res);
    }
    if (weft__poller_sleep(ns))
        return 0;
    struct call c = { .op = OP_SLEEP, .ns = ns };
    return (int)fallback(&c);
}
