/* split.c: split-phase system calls: issue, return at once, and let the
 * completion store the result and continue a task.
 *
 * On a worker with io_uring (from a task, or a user thread), a call is one
 * SQE in the worker's ring, tagged with a request record from the task
 * record cache (io.h: struct weft__io_cb). It is submitted with the
 * worker's other ring traffic at its next scheduling point (uring.c: when
 * it runs out of work, tasks it could steal included, a batch is full, or
 * after a bounded number of scheduling points; a long run of tasks looks
 * at the ring every ATTEND_EVERY tasks, task.c), and its completion,
 * reaped by the same worker, stores the result and sends the continuation
 * with no system call and no switch. A write or send that the kernel cut
 * short on a blocking descriptor is queued again for the rest, as the
 * mirrors write everything.
 * Positional calls first try the call that never waits (preadv2/pwritev2
 * with RWF_NOWAIT), as the mirrors do: it completes page-cache reads at
 * once, and gives ESPIPE for a descriptor that cannot seek (the ring would
 * read a pipe from its current position).
 *
 * Elsewhere (a plain kernel thread, a bound thread, no io_uring) the call
 * runs the weft_* mirror in a detached user thread of its own, which waits
 * as the mirror waits (in the ring, on the poller, or on a kernel thread
 * the worker is handed to) and then stores the result and continues the
 * task. Slower (a spawn per call), with the same results; weft_finalize
 * waits for those threads as for any.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "io/io.h"
#include "sched/sched.h"
#include "task/task.h"

#if WEFT__HAVE_URING
#include <liburing.h>
#endif

enum { SP_READ, SP_WRITE, SP_PREAD, SP_PWRITE, SP_RECV, SP_SEND, SP_ACCEPT, SP_SLEEP };

/* A call that runs the mirror in a thread of its own: copied to the top of
 * that thread's stack (weft_spawn_copy). */
struct slow_call {
    int op, fd, flags;
    weft_task *cont;
    ssize_t *res;
    void *buf;
    size_t n;
    off_t off;
    struct sockaddr *addr;
    socklen_t *alen;
    uint64_t ns;
};

static void *slow_main(void *arg)
{
    struct slow_call *c = arg;
    ssize_t r = 0;
    switch (c->op) {
    case SP_READ: r = weft_read(c->fd, c->buf, c->n); break;
    case SP_WRITE: r = weft_write(c->fd, c->buf, c->n); break;
    case SP_PREAD: r = weft_pread(c->fd, c->buf, c->n, c->off); break;
    case SP_PWRITE: r = weft_pwrite(c->fd, c->buf, c->n, c->off); break;
    case SP_RECV: r = weft_recv(c->fd, c->buf, c->n, c->flags); break;
    case SP_SEND: r = weft_send(c->fd, c->buf, c->n, c->flags); break;
    case SP_ACCEPT: r = weft_accept(c->fd, c->addr, c->alen); break;
    default: r = weft_sleep_ns(c->ns); break;
    }
    if (r < 0)
        r = -weft_errno();
    if (c->res)
        *c->res = r;
    weft__task_send(weft__worker_now(), c->cont);
    return NULL;
}

static int slow_issue(const struct slow_call *c)
{
    static const weft_attr detached = { 0, 1, 0, "weft-task-call", 0 };
    int rc = weft_spawn_copy(NULL, slow_main, c, sizeof *c, &detached);
    return rc == EINVAL ? EAGAIN : rc;
}

/* The outcome known at the call: stored, and the continuation sent now. */
static int deliver_now(struct weft__worker *w, weft_task *cont, ssize_t *res, ssize_t r)
{
    if (res)
        *res = r;
    return weft__task_send(w, cont);
}

#if WEFT__HAVE_URING
/* One ring request: a record of the task cache. */
struct ring_call {
    struct weft__io_cb cb; /* first: reap calls cb.done */
    weft_task *cont;       /* immutable */
    ssize_t *res;          /* immutable */
    union {
        struct {
            char *buf;   /* what is left to move */
            size_t left; /* bytes */
        };
        struct __kernel_timespec ts; /* SP_SLEEP: read by the kernel at submission */
    };
    size_t done; /* bytes moved by earlier parts of this call */
    union {
        uint64_t off; /* SP_PREAD, SP_PWRITE */
        int flags;    /* SP_RECV, SP_SEND */
    };
    int fd;
    int op;
};
_Static_assert(sizeof(struct ring_call) <= sizeof(struct weft_task),
               "a split-phase request fits in a task record");

static void ring_prep(struct io_uring_sqe *sqe, struct ring_call *c)
{
    unsigned n = (unsigned)weft__io_clamp(c->left);
    switch (c->op) {
    case SP_READ: io_uring_prep_read(sqe, c->fd, c->buf, n, (uint64_t)-1); break;
    case SP_WRITE: io_uring_prep_write(sqe, c->fd, c->buf, n, (uint64_t)-1); break;
    case SP_PREAD: io_uring_prep_read(sqe, c->fd, c->buf, n, c->off); break;
    case SP_PWRITE: io_uring_prep_write(sqe, c->fd, c->buf, n, c->off); break;
    case SP_RECV: io_uring_prep_recv(sqe, c->fd, c->buf, n, c->flags); break;
    case SP_SEND: io_uring_prep_send(sqe, c->fd, c->buf, n, c->flags); break;
    default: io_uring_prep_timeout(sqe, &c->ts, 0, 0); break;
    }
}

static void ring_done(struct weft__worker *w, struct weft__io_cb *cb, int res)
{
    struct ring_call *c = (struct ring_call *)cb;
    if (c->op != SP_SLEEP && c->op != SP_ACCEPT && res > 0) {
        /* The rest of a write or send cut short on a blocking descriptor
         * goes out as the mirrors send it: queued again. */
        if ((c->op == SP_WRITE || c->op == SP_SEND) && (size_t)res < c->left &&
            !(c->op == SP_SEND && (c->flags & MSG_DONTWAIT)) && !weft__io_nonblocking(c->fd)) {
            c->done += (size_t)res;
            c->buf += res;
            c->left -= (size_t)res;
            struct io_uring_sqe *sqe = weft__io_sqe(w);
            ring_prep(sqe, c);
            weft__io_queue_cb(w, sqe, &c->cb);
            return;
        }
        res += (int)c->done;
    } else if (res <= 0 && c->done) {
        res = (int)c->done; /* a failure after some bytes moved: their count */
    }
    weft_task *cont = c->cont;
    if (c->res)
        *c->res = c->op == SP_SLEEP ? 0 : res;
    weft__task_rec_free(w, c);
    weft__task_send(w, cont);
    weft__task_close(w); /* after the send's open: finalize reads closes first */
}

static void ring_issue(struct weft__worker *w, struct ring_call *c)
{
    c->cb.done = ring_done;
    struct io_uring_sqe *sqe = weft__io_sqe(w);
    ring_prep(sqe, c);
    weft__task_open(w);
    weft__io_queue_cb(w, sqe, &c->cb);
}

/* The caller's worker when it may use its ring, else NULL. */
static struct weft__worker *ring_worker(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w && weft__io_ring(w) ? w : NULL;
}

/* Positional I/O: the call that never waits first (see the top). Returns
 * 1 when it settled the call (delivered), 0 when the ring must go on from
 * c->done. */
static int positional_try(struct weft__worker *w, struct ring_call *c)
{
    struct iovec iov = { c->buf, c->left > SSIZE_MAX ? (size_t)SSIZE_MAX : c->left };
    ssize_t r = c->op == SP_PREAD ? preadv2(c->fd, &iov, 1, (off_t)c->off, RWF_NOWAIT)
                                  : pwritev2(c->fd, &iov, 1, (off_t)c->off, RWF_NOWAIT);
    int err = r < 0 ? errno : 0;
    size_t want = weft__io_clamp(c->left);
    if (r == 0 || (r > 0 && (size_t)r == want) ||
        (r < 0 && err != EAGAIN && err != EOPNOTSUPP && err != EINVAL)) {
        deliver_now(w, c->cont, c->res, r < 0 ? -err : r);
        return 1;
    }
    if (r > 0) {
        c->done = (size_t)r;
        c->buf += r;
        c->left = want - (size_t)r;
        c->off += (uint64_t)r;
    }
    return 0;
}
#endif

/* Common entry: checks, then the ring or a thread of its own. */
static int issue(struct slow_call *s)
{
    if (WEFT_UNLIKELY(!s->cont))
        return EINVAL;
    struct weft__worker *w = weft__tls_worker;
    if (!w && atomic_load_explicit(&weft__rt.state, memory_order_acquire) != RT_RUNNING)
        return EAGAIN;
    weft__task_count_call(w);
    if ((s->op == SP_PREAD || s->op == SP_PWRITE) && s->off < 0)
        return deliver_now(w, s->cont, s->res, -EINVAL);
#if WEFT__HAVE_URING
    if (ring_worker()) {
        struct ring_call *c = weft__task_rec_alloc(w);
        if (!c)
            return ENOMEM;
        c->cont = s->cont;
        c->res = s->res;
        c->done = 0;
        c->fd = s->fd;
        c->op = s->op;
        if (s->op == SP_SLEEP) {
            c->ts.tv_sec = (long long)(s->ns / WEFT_NS_PER_S);
            c->ts.tv_nsec = (long long)(s->ns % WEFT_NS_PER_S);
        } else {
            c->buf = s->buf;
            c->left = s->n;
        }
        if (s->op == SP_PREAD || s->op == SP_PWRITE)
            c->off = (uint64_t)s->off;
        else
            c->flags = s->flags;
        if (s->op == SP_ACCEPT) {
            struct io_uring_sqe *sqe = weft__io_sqe(w);
            c->cb.done = ring_done;
            io_uring_prep_accept(sqe, s->fd, s->addr, s->alen, 0);
            weft__task_open(w);
            weft__io_queue_cb(w, sqe, &c->cb);
            return 0;
        }
        if ((s->op == SP_PREAD || s->op == SP_PWRITE) && positional_try(w, c)) {
            weft__task_rec_free(w, c);
            return 0;
        }
        ring_issue(w, c);
        return 0;
    }
#endif
    return slow_issue(s);
}

/* The buffer calls (read, write, their positional forms, recv and send):
 * one record, with off and flags 0 where the call has none. */
static int issue_buf(int op, weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n,
                     off_t off, int flags)
{
    struct slow_call c = { .op = op,
                           .cont = cont,
                           .res = res,
                           .fd = fd,
                           .buf = (void *)buf,
                           .n = n,
                           .off = off,
                           .flags = flags };
    return issue(&c);
}

int weft_task_read(weft_task *cont, ssize_t *res, int fd, void *buf, size_t n)
{
    return issue_buf(SP_READ, cont, res, fd, buf, n, 0, 0);
}

int weft_task_write(weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n)
{
    return issue_buf(SP_WRITE, cont, res, fd, buf, n, 0, 0);
}

int weft_task_pread(weft_task *cont, ssize_t *res, int fd, void *buf, size_t n, off_t off)
{
    return issue_buf(SP_PREAD, cont, res, fd, buf, n, off, 0);
}

int weft_task_pwrite(weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n, off_t off)
{
    return issue_buf(SP_PWRITE, cont, res, fd, buf, n, off, 0);
}

int weft_task_recv(weft_task *cont, ssize_t *res, int fd, void *buf, size_t n, int flags)
{
    return issue_buf(SP_RECV, cont, res, fd, buf, n, 0, flags);
}

int weft_task_send(weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n, int flags)
{
    /* never SIGPIPE: the result says EPIPE */
    return issue_buf(SP_SEND, cont, res, fd, buf, n, 0, flags | MSG_NOSIGNAL);
}

int weft_task_accept(weft_task *cont, ssize_t *res, int fd, struct sockaddr *addr, socklen_t *len)
{
    struct slow_call c = {
        .op = SP_ACCEPT, .cont = cont, .res = res, .fd = fd, .addr = addr, .alen = len
    };
    return issue(&c);
}

int weft_task_sleep_ns(weft_task *cont, uint64_t ns)
{
    struct slow_call c = { .op = SP_SLEEP, .cont = cont, .ns = ns };
    return issue(&c);
}
