/* io.h: per-worker io_uring rings, batched submission, and the spare
 * kernel threads behind weft_blocking (design block in uring.c). */
#ifndef WEFT_IO_IO_H
#define WEFT_IO_IO_H

#include <stddef.h>
#include <stdint.h>

struct weft__worker;
struct weft_thread;
struct io_uring_sqe;

/* One request a parked user thread waits on. Lives on that thread's stack
 * until it resumes; the reaping worker writes res and readies it. */
struct weft__io_req {
    struct weft_thread *self; /* the parked thread; immutable */
    int res;                  /* the first CQE's result; written by the reaper */
    int pending;              /* CQEs still to come (2 with a linked timeout); reaper only */
    int done;                 /* completed before its thread parked (switching out, or
                                 in its own weft__io_wait_now); written by the reaper */
};

/* A request whose completion calls back instead of readying a parked
 * thread (task/split.c: split-phase calls). Embedded first in the caller's
 * record; done runs on the reaping worker (the issuing one), from the
 * scheduling point that reaps the completion, and may free the record. */
struct weft__io_cb {
    void (*done)(struct weft__worker *w, struct weft__io_cb *cb, int res);
};

/* The most one read or write moves, as the kernel clamps a count
 * (MAX_RW_COUNT: INT_MAX rounded down to a page). */
#define WEFT__IO_RW_MAX 0x7ffff000u

static inline size_t weft__io_clamp(size_t n)
{
    return n > WEFT__IO_RW_MAX ? WEFT__IO_RW_MAX : n;
}

/* 1 when fd's file is O_NONBLOCK: a call that would block fails with
 * EAGAIN instead (fd.c). */
int weft__io_nonblocking(int fd);

/* The error pending on socket fd (SO_ERROR, which reading clears), or 0
 * (fd.c). */
int weft__io_sock_error(int fd);

/* Per-worker counters (owner-written, read racily by weft_stats). */
struct weft__io_counters {
    uint64_t calls;  /* requests queued in the ring */
    uint64_t enters; /* io_uring_enter crossings */
    uint64_t reaped; /* completions consumed */
};

/* How I/O calls reach the kernel (WEFT_IO, parsed by runtime/config.c). */
enum weft__io_mode {
    WEFT__IO_AUTO,     /* io_uring where a probe ring can be set up, else blocking */
    WEFT__IO_URING,    /* the same as auto: a ring that cannot be set up is never forced */
    WEFT__IO_BLOCKING, /* never io_uring: the call runs in place, its worker handed off */
};

/* Breaks off the ring request t waits on (its call then ends with
 * -ECANCELED, or with its result if it completed first): the worker whose
 * ring holds it cancels it at its next attend. 1 if asked, 0 if t waits
 * in no ring (or the worker's slots are full: ask again). Any thread; for
 * the drop-in's pthread_kill and pthread_cancel (src/posix). */
int weft__io_cancel(struct weft_thread *t);

/* A duplicate of fd for a call that waits, made so that the call stays on
 * the file whatever the number names later; -1 when none can be had below
 * a reserve kept for the program (poller.c). */
int weft__io_dup_spare(int fd);

/* Sets the mode weft__io_uring_usable decides with; weft_init calls it
 * before any worker runs. The first decision stands for the process. */
void weft__io_set_mode(enum weft__io_mode mode);

/* 1 once the process has decided io_uring is usable (WEFT_IO, probe). */
int weft__io_uring_usable(void);

/* The ring of the calling worker, created on first use; NULL: unusable. */
struct io_uring *weft__io_ring(struct weft__worker *w);

/* The scheduler reaches the next four through this table (sched.h: struct
 * weft__sched_io), which weft_init registers: sched/ is below io/. */
extern const struct weft__sched_io weft__io_sched;

/* Queues nothing: called from weft__attend when WEFT__ATTN_IO is set. Submits
 * when the worker has no other local work, the batch is full or it has
 * waited long enough; reaps ready completions without a system call. */
void weft__io_attend(struct weft__worker *w);

/* Idle worker with I/O in flight: waits in the ring (and for a wake-up
 * through its eventfd). Returns 0 without waiting when it has no ring or
 * nothing in flight (the caller then sleeps on its futex). Called between
 * the sleeping flag's publication and the wait, like the futex sleep. */
int weft__io_idle_wait(struct weft__worker *w);

/* 1 when w (the caller's own worker) has I/O queued or in flight. */
int weft__io_pending(struct weft__worker *w);
/* Any thread (the monitor), racy: 1 when completions wait in w's ring to be
 * reaped, or requests to be submitted; else 2 when requests are in flight
 * (a completion may come at any time); else 0. Only w acts on them, at a
 * scheduling point: a thread that computes on w keeps their threads
 * waiting until it is preempted. */
int weft__io_waiting(struct weft__worker *w);

/* Wakes v out of weft__io_idle_wait. */
void weft__io_wake(struct weft__worker *v);

/* Releases w's ring (after w's kernel thread stopped). */
void weft__io_worker_fini(struct weft__worker *w);

/* Counter sums over all workers. */
void weft__io_counters(struct weft__io_counters *out);

/* The next free SQE of w's ring (w: the caller's worker, ring set up);
 * submits the queued ones first when the SQ ring is full. */
struct io_uring_sqe *weft__io_sqe(struct weft__worker *w);

/* Queues the SQE just prepared in w's ring for cb: submitted with the
 * worker's next batch (weft__io_attend), never waited on; cb->done gets
 * the completion's result. w is the caller's worker. */
void weft__io_queue_cb(struct weft__worker *w, struct io_uring_sqe *sqe, struct weft__io_cb *cb);

/* Parks the calling user thread until req completes (its SQEs are already
 * prepared in w's ring, submitted with the worker's next batch). Returns
 * req->res. */
int weft__io_wait(struct weft__worker *w, struct weft__io_req *req, int nsqe);

/* weft__io_wait, but the ring is submitted first (with everything queued
 * before): the kernel has looked up the request's descriptor before the
 * thread parks. Returns without parking when the request completed in the
 * submission. */
int weft__io_wait_now(struct weft__worker *w, struct weft__io_req *req, int nsqe);

#endif
