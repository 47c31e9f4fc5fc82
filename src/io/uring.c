/* uring.c: one io_uring per worker; batched submission and reaping at
 * scheduling points; idle waiting in the ring.
 *
 * Design
 * ------
 * A user thread that makes a weft_* system call prepares its SQE(s) in its
 * worker's ring, tagged with a request record on its own stack, and parks.
 * For positional I/O and sleeps nothing enters the kernel yet: the worker
 * sets WEFT__ATTN_IO and goes on running other threads. At its scheduling
 * points (weft__attend, reached from every pick of a next thread) it
 * submits the queued SQEs in one io_uring_enter when (a) it is out of work
 * (no thread of its own ready, no task ready anywhere that it could steal),
 * (b) a batch is full, or (c) a bounded number of scheduling
 * points went by (latency bound), and it reaps completions from the shared
 * CQ ring without a system call whenever there are any. Each completion
 * readies its thread. These are "wrapped system calls" (many
 * requests, one kernel crossing) and scheduler activations' point: a thread waiting in
 * the kernel holds no processor.
 *
 * A call that may wait for another party (a stream read or write that
 * would block, accept, connect, poll) is different: io_uring looks its
 * descriptor up when the SQE is issued, and a batched SQE would be issued
 * after other user threads of this worker ran, one of which may have closed
 * the descriptor and reused its number: the call would then wait on, read
 * or write another file. Such a call is first tried as a system call that
 * does not wait (syscalls.c); if it must wait, weft__io_wait_now submits
 * the ring (with whatever else is queued) before its thread parks, and the
 * kernel holds the file from then on, as it does for a blocked system call.
 *
 * A worker with nothing to run but I/O in flight sleeps in the ring
 * (io_uring_enter waiting for one completion). Other workers and plain
 * kernel threads wake it by writing its eventfd, which has a read armed in
 * the ring; the sleeping/wake protocol is the futex one (sched.c), with
 * sleep_in_ring telling the waker which door to knock on.
 *
 * Rings are created lazily on a worker's first weft_* call. A worker may
 * move to another kernel thread around weft_blocking (policy/machine.c), so
 * the ring is not IORING_SETUP_SINGLE_ISSUER. Where the
 * kernel refuses io_uring (old kernel, seccomp) or WEFT_IO=blocking, calls
 * run on spare kernel threads instead (blocking.c), after a one-line notice.
 * Rejected: one ring for all workers (a lock on every call, and a single
 * waiter); a poller thread (an extra wake-up per completion).
 */
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/ring.h"
#include "os/kwait.h"
#include "sched/sched.h"

#define IO_BATCH     32u    /* queued SQEs that force a submission */
#define IO_DEFER_MAX 64u    /* scheduling points an SQE may wait unsubmitted */
#define IO_STEAL_NS  20000u /* how long a worker with only others' tasks left holds its SQEs */
#define RING_ENTRIES 256u
#define EFD_TAG      ((uint64_t)1)      /* user_data of the eventfd read */
#define CB_TAG       ((uint64_t)4)      /* low bits: a struct weft__io_cb (weft__io_queue_cb) */
#define CANCEL_DATA  (EFD_TAG | CB_TAG) /* user_data of an IORING_OP_ASYNC_CANCEL */
#define CANCEL_SLOTS 8u

static _Atomic int usable = -1; /* -1 undecided, 0 no, 1 yes */
/* enum weft__io_mode; relaxed: written by weft_init before its workers
 * start, which publishes it to them. */
static _Atomic int io_mode = WEFT__IO_AUTO;

void weft__io_set_mode(enum weft__io_mode mode)
{
    atomic_store_explicit(&io_mode, (int)mode, memory_order_relaxed);
}

#if WEFT__HAVE_URING
#include <sys/eventfd.h>

/* Counters are owner-written and read by weft_stats_get while the worker
 * runs: relaxed atomic accesses (a statistic; no order needed). */
#define COUNT(field, n)                                                                            \
    __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n), __ATOMIC_RELAXED)

struct weft__io_state {
    struct io_uring ring;       /* owner worker only */
    int efd;                    /* eventfd: other threads write to wake us */
    uint64_t efd_buf;           /* target of the armed eventfd read */
    int efd_armed;              /* owner only */
    unsigned queued;            /* SQEs prepared, not yet submitted; owner only */
    unsigned inflight;          /* requests without their last CQE; owner only */
    unsigned defer;             /* scheduling points since the oldest queued SQE */
    uint64_t held_since;        /* when attend first held queued SQEs for tasks
                                   elsewhere, 0 if it has not; owner only */
    struct weft__io_counters c; /* owner writes; weft_stats reads racily */
    /* Threads parked in this ring whose request is to be broken off
     * (weft__io_cancel): any thread CASes one into a free slot, the owner
     * takes them at its next attend. */
    struct weft_thread *_Atomic cancel[CANCEL_SLOTS];
    _Atomic unsigned ncancel; /* slots filled; a hint for attend */
};

int weft__io_uring_usable(void)
{
    int u = atomic_load_explicit(&usable, memory_order_relaxed);
    if (u >= 0)
        return u;
    if (atomic_load_explicit(&io_mode, memory_order_relaxed) == WEFT__IO_BLOCKING) {
        u = 0;
        weft__notice("WEFT_IO=blocking: blocking calls run in place, their worker handed to "
                     "another kernel thread");
    } else {
        struct io_uring probe;
        int rc = io_uring_queue_init(4, &probe, 0);
        u = rc == 0;
        if (rc == 0)
            io_uring_queue_exit(&probe);
        else
            weft__notice("io_uring unavailable (%s): blocking calls run in place, their worker "
                         "handed to another kernel thread",
                         strerror(-rc));
    }
    atomic_store_explicit(&usable, u, memory_order_relaxed);
    return u;
}

struct io_uring *weft__io_ring(struct weft__worker *w)
{
    if (WEFT_LIKELY(w->io != NULL))
        return &w->io->ring;
    if (!weft__io_uring_usable())
        return NULL;
    struct weft__io_state *io = calloc(1, sizeof *io);
    if (!io)
        return NULL;
    int rc = io_uring_queue_init(RING_ENTRIES, &io->ring, IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL)
        rc = io_uring_queue_init(RING_ENTRIES, &io->ring, 0);
    if (rc != 0) {
        free(io);
        return NULL;
    }
    io->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (io->efd < 0) {
        io_uring_queue_exit(&io->ring);
        free(io);
        return NULL;
    }
    /* release: the ring is set up before weft_stats_get may read it (acquire) */
    __atomic_store_n(&w->io, io, __ATOMIC_RELEASE);
    return &io->ring;
}

static void submit(struct weft__io_state *io)
{
    io_uring_submit_and_get_events(&io->ring);
    COUNT(io->c.enters, 1);
    io->queued = 0;
    io->defer = 0;
    io->held_since = 0;
}

static void reap(struct weft__worker *w, struct weft__io_state *io)
{
    unsigned head, n = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&io->ring, head, cqe)
    {
        n++;
        uint64_t d = cqe->user_data;
        if (d == CANCEL_DATA)
            continue; /* the cancelled request completes by itself */
        if (d == EFD_TAG) {
            io->efd_armed = 0;
            continue;
        }
        if (d & CB_TAG) {
            io->inflight--;
            struct weft__io_cb *cb = (struct weft__io_cb *)(uintptr_t)(d & ~CB_TAG);
            cb->done(w, cb, cqe->res);
            continue;
        }
        struct weft__io_req *r =
            (struct weft__io_req *)(uintptr_t)(d & ~(WEFT__IO_TAG_TIMEOUT | EFD_TAG));
        if (!(d & WEFT__IO_TAG_TIMEOUT))
            r->res = cqe->res;
        if (--r->pending == 0) {
            io->inflight--;
            /* The thread now parking may reap its own request (the submit in
             * its pick completed it at once): its context is not saved yet,
             * so its park commit resumes it instead. */
            if (r->self == w->current)
                r->done = 1;
            else
                weft__make_ready(w, r->self);
        }
    }
    io_uring_cq_advance(&io->ring, n);
    COUNT(io->c.reaped, n);
}

/* Whether w should submit its queued SQEs now, having no thread of its own
 * ready: yes if no task is ready anywhere either. A thief runs one stolen
 * task (and what it readies) at a time: it goes on stealing before it
 * submits, so that a worker helping another one does not cross into the
 * kernel for each request of each stolen task; but for IO_STEAL_NS at
 * most, so that tasks that keep coming (a long graph beside a few
 * requests) delay no request for longer. IO_BATCH and IO_DEFER_MAX still
 * force a submission, and a worker that goes to sleep submits in
 * weft__io_idle_wait. */
static int out_of_work(struct weft__worker *w, struct weft__io_state *io)
{
    if (weft__has_ready(w))
        return 0;
    if (!weft__rt.task->has_work())
        return 1;
    uint64_t now = weft__now_ns();
    if (!io->held_since) {
        io->held_since = now;
        return 0;
    }
    return now - io->held_since >= IO_STEAL_NS;
}

/* Owner: breaks off the ring requests of the threads in io's cancel
 * slots that still wait in this ring (a thread readied meanwhile, or
 * parked elsewhere, is left alone). The request lives on the parked
 * thread's stack, which stays put while it waits here. */
static void take_cancels(struct weft__worker *w, struct weft__io_state *io)
{
    int any = 0;
    for (unsigned i = 0; i < CANCEL_SLOTS; i++) {
        struct weft_thread *t =
            atomic_exchange_explicit(&io->cancel[i], NULL, memory_order_acquire);
        if (!t)
            continue;
        atomic_fetch_sub_explicit(&io->ncancel, 1, memory_order_relaxed);
        struct weft__io_req *req =
            (struct weft__io_req *)__atomic_load_n(&t->wait_on, __ATOMIC_RELAXED);
        if (t == w->current || weft__thread_waits(t) != WEFT__WAIT_IO || t->worker != w || !req ||
            req->self != t || req->pending <= 0)
            continue;
        struct io_uring_sqe *sqe = weft__io_sqe(w);
        io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)req, 0);
        io_uring_sqe_set_data64(sqe, CANCEL_DATA);
        io->queued++;
        any = 1;
    }
    if (any)
        submit(io);
}

int weft__io_cancel(struct weft_thread *t)
{
    if (weft__thread_waits(t) != WEFT__WAIT_IO)
        return 0;
    struct weft__worker *w = __atomic_load_n(&t->worker, __ATOMIC_RELAXED);
    struct weft__io_state *io = w ? w->io : NULL;
    if (!io)
        return 0;
    for (unsigned i = 0; i < CANCEL_SLOTS; i++) {
        struct weft_thread *none = NULL;
        /* release: pairs with the owner's acquire exchange */
        if (atomic_compare_exchange_strong_explicit(&io->cancel[i], &none, t, memory_order_release,
                                                    memory_order_relaxed)) {
            atomic_fetch_add_explicit(&io->ncancel, 1, memory_order_relaxed);
            weft__io_wake(w); /* out of its idle wait, to its attend */
            return 1;
        }
    }
    return 0;
}

void weft__io_attend(struct weft__worker *w)
{
    struct weft__io_state *io = w->io;
    /* relaxed: a hint; the slots are exchanged with acquire */
    if (io && WEFT_UNLIKELY(atomic_load_explicit(&io->ncancel, memory_order_relaxed)))
        take_cancels(w, io);
    if (io) {
        if (io->queued &&
            (io->queued >= IO_BATCH || ++io->defer >= IO_DEFER_MAX || out_of_work(w, io)))
            submit(io);
        /* Completions the full CQ ring could not take wait in the kernel
         * until an enter asks for them: a worker that never waits in the
         * ring (the initial thread's naps in weft_finalize) must ask. */
        if (WEFT_UNLIKELY(io_uring_cq_has_overflow(&io->ring)))
            io_uring_get_events(&io->ring);
        if (io_uring_cq_ready(&io->ring))
            reap(w, io);
        if (io->queued || io->inflight)
            return;
    }
    atomic_fetch_and_explicit(&w->attn, ~WEFT__ATTN_IO, memory_order_relaxed);
}

void weft__io_room(struct weft__worker *w, unsigned n)
{
    if (io_uring_sq_space_left(&w->io->ring) < n)
        submit(w->io);
}

struct io_uring_sqe *weft__io_sqe(struct weft__worker *w)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->io->ring);
    if (WEFT_UNLIKELY(!sqe)) {
        submit(w->io); /* the SQ ring is full: make room */
        sqe = io_uring_get_sqe(&w->io->ring);
    }
    return sqe;
}

/* Park commit: stay parked unless the request already completed. */
static int io_commit(void *arg, struct weft_thread *self)
{
    struct weft__io_req *req = arg;
    (void)self;
    return !req->done;
}

/* Counts req's nsqe prepared SQEs as queued and the request as in flight. */
static void enqueue(struct weft__io_state *io, int nsqe)
{
    io->queued += (unsigned)nsqe;
    io->inflight++;
    COUNT(io->c.calls, 1);
}

/* Parks the caller until req completes; the worker's next scheduling
 * point submits and reaps (WEFT__ATTN_IO). */
static int park_on(struct weft__worker *w, struct weft__io_req *req)
{
    /* relaxed: only this worker reads the IO bit */
    atomic_fetch_or_explicit(&w->attn, WEFT__ATTN_IO, memory_order_relaxed);
    if (!weft__thread_waits(w->current)) { /* weft_sleep_ns said SLEEP */
        /* relaxed: read by the owner's take_cancels (this worker), after
         * the park */
        __atomic_store_n(&w->current->wait_on, req, __ATOMIC_RELAXED);
        weft__thread_wait(w->current, WEFT__WAIT_IO);
    }
    weft__park(io_commit, req);
    return req->res;
}

int weft__io_wait(struct weft__worker *w, struct weft__io_req *req, int nsqe)
{
    enqueue(w->io, nsqe);
    return park_on(w, req);
}

void weft__io_queue_cb(struct weft__worker *w, struct io_uring_sqe *sqe, struct weft__io_cb *cb)
{
    io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)cb | CB_TAG);
    enqueue(w->io, 1);
    /* relaxed: only this worker reads the IO bit */
    atomic_fetch_or_explicit(&w->attn, WEFT__ATTN_IO, memory_order_relaxed);
}

int weft__io_wait_now(struct weft__worker *w, struct weft__io_req *req, int nsqe)
{
    struct weft__io_state *io = w->io;
    enqueue(io, nsqe);
    submit(io);
    if (io_uring_cq_ready(&io->ring))
        reap(w, io); /* marks req done if it completed in the submission */
    if (req->done)
        return req->res;
    return park_on(w, req);
}

int weft__io_pending(struct weft__worker *w)
{
    return w->io && (w->io->inflight || w->io->queued);
}

#if defined(__SANITIZE_THREAD__) || defined(WEFT_SANITIZE_THREAD)
#define RACY __attribute__((no_sanitize("thread")))
#else
#define RACY
#endif

/* Reads the owner's words without ordering: a hint, taken again at the
 * monitor's next look. w->io lives until the workers stop, after the
 * monitor. */
RACY int weft__io_waiting(struct weft__worker *w)
{
    struct weft__io_state *io = __atomic_load_n(&w->io, __ATOMIC_RELAXED);
    if (!io)
        return 0;
    if (__atomic_load_n(&io->queued, __ATOMIC_RELAXED))
        return 1;
    /* acquire: as liburing's own read of the kernel's tail */
    if (__atomic_load_n(io->ring.cq.ktail, __ATOMIC_ACQUIRE) !=
            __atomic_load_n(io->ring.cq.khead, __ATOMIC_RELAXED) ||
        io_uring_cq_has_overflow(&io->ring))
        return 1;
    return __atomic_load_n(&io->inflight, __ATOMIC_RELAXED) ? 2 : 0;
}

int weft__io_idle_wait(struct weft__worker *w)
{
    struct weft__io_state *io = w->io;
    if (!io || (!io->inflight && !io->queued))
        return 0;
    if (!io->efd_armed) {
        struct io_uring_sqe *sqe = weft__io_sqe(w);
        io_uring_prep_read(sqe, io->efd, &io->efd_buf, sizeof io->efd_buf, 0);
        io_uring_sqe_set_data64(sqe, EFD_TAG);
        io->efd_armed = 1;
    }
    io_uring_submit_and_wait(&io->ring, 1);
    COUNT(io->c.enters, 1);
    io->queued = 0;
    io->defer = 0;
    io->held_since = 0;
    reap(w, io);
    return 1;
}

void weft__io_wake(struct weft__worker *v)
{
    if (v->io)
        eventfd_write(v->io->efd, 1);
}

void weft__io_worker_fini(struct weft__worker *w)
{
    struct weft__io_state *io = w->io;
    if (!io)
        return;
    io_uring_queue_exit(&io->ring);
    close(io->efd);
    free(io);
    w->io = NULL;
}

void weft__io_counters(struct weft__io_counters *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < weft__rt.nworkers; i++) {
        /* acquire: pairs with the release in weft__io_ring */
        struct weft__io_state *io = __atomic_load_n(&weft__rt.workers[i]->io, __ATOMIC_ACQUIRE);
        if (io) {
            out->calls += __atomic_load_n(&io->c.calls, __ATOMIC_RELAXED);
            out->enters += __atomic_load_n(&io->c.enters, __ATOMIC_RELAXED);
            out->reaped += __atomic_load_n(&io->c.reaped, __ATOMIC_RELAXED);
        }
    }
}

#else /* !WEFT__HAVE_URING: every call takes the spare-thread path */

int weft__io_cancel(struct weft_thread *t)
{
    (void)t;
    return 0;
}

int weft__io_uring_usable(void)
{
    if (atomic_exchange(&usable, 0) != 0)
        weft__notice("built without liburing: blocking calls run in place, their worker handed to "
                     "another kernel thread");
    return 0;
}
struct io_uring *weft__io_ring(struct weft__worker *w)
{
    (void)w;
    return NULL;
}
void weft__io_room(struct weft__worker *w, unsigned n)
{
    (void)w;
    (void)n;
}
void weft__io_attend(struct weft__worker *w)
{
    atomic_fetch_and_explicit(&w->attn, ~WEFT__ATTN_IO, memory_order_relaxed);
}
int weft__io_idle_wait(struct weft__worker *w)
{
    (void)w;
    return 0;
}
int weft__io_pending(struct weft__worker *w)
{
    (void)w;
    return 0;
}
int weft__io_waiting(struct weft__worker *w)
{
    (void)w;
    return 0;
}
void weft__io_wake(struct weft__worker *v)
{
    (void)v;
}
void weft__io_worker_fini(struct weft__worker *w)
{
    (void)w;
}
void weft__io_counters(struct weft__io_counters *out)
{
    memset(out, 0, sizeof *out);
}
int weft__io_wait(struct weft__worker *w, struct weft__io_req *req, int nsqe)
{
    (void)w;
    (void)nsqe;
    return req->res;
}
int weft__io_wait_now(struct weft__worker *w, struct weft__io_req *req, int nsqe)
{
    return weft__io_wait(w, req, nsqe);
}
struct io_uring_sqe *weft__io_sqe(struct weft__worker *w)
{
    (void)w;
    return NULL;
}
void weft__io_queue_cb(struct weft__worker *w, struct io_uring_sqe *sqe, struct weft__io_cb *cb)
{
    (void)w;
    (void)sqe;
    (void)cb;
}
#endif

const struct weft__sched_io weft__io_sched = {
    .attend = weft__io_attend,
    .pending = weft__io_pending,
    .waiting = weft__io_waiting,
    .idle_wait = weft__io_idle_wait,
    .wake = weft__io_wake,
};
