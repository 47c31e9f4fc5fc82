/* mltp_wait.h: the waiter record and queue the mltp condition and barrier wait on.
 *
 * Design
 * ------
 * The seed gives each condition "its own yielding queue" and lets barrier
 * waiters "block on the run queue" (yield until the episode changes). Here
 * both queue a record and park, the one primitive under every weft wait
 * (sched/park.h): check and enqueue under the object's internal lock, then
 * weft__park with a commit that releases that lock once the waiter's
 * context is saved. A waker therefore always finds a waiter whose context
 * is complete, and a signal between enqueue and park cannot be lost (the
 * waker needs the lock the commit releases). Woken threads go to the tail
 * of the run queue (weft__ready), in queue order.
 *
 * Barrier waiters park rather than yield on the run queue. Measured with
 * bench/seeds/ocean.c, 8 threads: 258 x 258 on 2 VPs, parking 12.3 ms and
 * yielding 12.7 ms; on a 34 x 34 grid, where ~70,000 barriers dominate,
 * yielding was 6% faster on 1 VP and parking 6% faster on 2 VPs. At equal
 * speed parking wins on the rest: a yielding waiter takes the run-queue
 * lock at every turn and keeps idle processors from sleeping, and parked
 * records serve bound and kernel threads too.
 *
 * Bound threads and plain kernel threads (weft__self() == NULL) cannot
 * park: they sleep on a futex word in their record. The waker stores
 * WOKEN, wakes the futex, then stores DONE; the sleeper returns only on
 * DONE, so the waker never touches a record (on the sleeper's stack) that
 * is gone.
 *
 * Records live on the waiter's stack; a queued record belongs to the
 * object (under its lock); an unlinked one to the waker until it wakes it.
 */
#ifndef WEFT_COMPAT_MLTP_WAIT_H
#define WEFT_COMPAT_MLTP_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"

struct weft_thread;

enum { WEFT__MW_WAITING, WEFT__MW_WOKEN, WEFT__MW_DONE };

struct weft__mltp_waiter {
    struct weft__mltp_waiter *next; /* under the object's lock while queued */
    struct weft_thread *thread;     /* the parked user thread; NULL: a kernel sleeper.
                                       Set before queuing, read-only afterwards */
    _Atomic uint32_t word;          /* kernel sleeper: WEFT__MW_*; written by the waker */
};

/* A FIFO of records; both fields under the owning object's lock. */
struct weft__mltp_waitq {
    struct weft__mltp_waiter *head, *tail;
};

/* Fills *r for the calling thread (user thread or kernel sleeper). */
void weft__mltp_waiter_init(struct weft__mltp_waiter *r);

static inline void weft__mltp_waitq_push(struct weft__mltp_waitq *q, struct weft__mltp_waiter *r)
{
    r->next = NULL;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
}

static inline struct weft__mltp_waiter *weft__mltp_waitq_pop(struct weft__mltp_waitq *q)
{
    struct weft__mltp_waiter *r = q->head;
    if (r) {
        q->head = r->next;
        if (!q->head)
            q->tail = NULL;
    }
    return r;
}

/* With r queued and *lock held: releases the lock and waits until a waker
 * calls weft__mltp_wake(r). Parks a user thread, sleeps a kernel thread. */
void weft__mltp_block(struct weft__mltp_waiter *r, weft__lock *lock);

/* Wakes r, already unlinked, with no lock held. r may be gone once it
 * returns. */
void weft__mltp_wake(struct weft__mltp_waiter *r);

/* Wakes a detached list of records (linked by next) in order. */
void weft__mltp_wake_list(struct weft__mltp_waiter *r);

#endif
