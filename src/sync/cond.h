/* cond.h: the condition queue under weft_cond and mltp's conds: a FIFO of waiter records under a lock, signalled oldest first. */
#ifndef WEFT_SYNC_COND_H
#define WEFT_SYNC_COND_H

#include <stdatomic.h>
#include <stdint.h>

#include "sync/wait.h"

/* All-zero is an empty queue. The design is cond.c's. */
struct weft__condq {
    weft__lock lock;            /* internal lock; weft__sync_lock */
    _Atomic uint32_t spin_hint; /* adaptive spin budget (weft__spin_learn); racy by design */
    struct weft__waitq q;       /* under lock */
};

/* Queues w (weft__waiter_init done) behind every other waiter; the caller
 * then releases its mutex and waits on w (weft__waiter_block). */
void weft__condq_push(struct weft__condq *cq, struct weft__waiter *w);

/* After w's wait timed out: takes w out of the queue unless a signal took
 * it out already. */
void weft__condq_forget(struct weft__condq *cq, struct weft__waiter *w);

/* Wakes the oldest waiter that has not timed out, if any. Any thread. */
void weft__condq_signal(struct weft__condq *cq);

/* Wakes every waiter that has not timed out, oldest first. Any thread. */
void weft__condq_broadcast(struct weft__condq *cq);

/* 1 while a waiter is queued. */
int weft__condq_busy(struct weft__condq *cq);

#endif
