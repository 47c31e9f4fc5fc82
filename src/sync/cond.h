/* cond.h: the condition queue under weft_cond and mltp's conds: a FIFO of waiter records under a lock, signalled oldest first; inline, so weft_cond pays no call for sharing it. */
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
static inline void weft__condq_push(struct weft__condq *cq, struct weft__waiter *w)
{
    weft__sync_lock(&cq->lock);
    weft__waitq_push(&cq->q, w);
    weft__sync_unlock(&cq->lock);
}

/* After w's wait timed out: takes w out of the queue unless a signal took
 * it out already. */
static inline void weft__condq_forget(struct weft__condq *cq, struct weft__waiter *w)
{
    weft__sync_lock(&cq->lock);
    if (weft__waitq_linked(&cq->q, w))
        weft__waitq_remove(&cq->q, w);
    weft__sync_unlock(&cq->lock);
}

/* Under cq->lock: pops records until one is claimed; NULL if none. */
static inline struct weft__waiter *weft__condq_pop_claimed(struct weft__condq *cq)
{
    struct weft__waiter *w;
    while ((w = weft__waitq_pop(&cq->q)) != NULL && !weft__waiter_claim(w))
        ;
    return w;
}

/* Wakes the oldest waiter that has not timed out, if any. Any thread. */
static inline void weft__condq_signal(struct weft__condq *cq)
{
    weft__sync_lock(&cq->lock);
    struct weft__waiter *w = weft__condq_pop_claimed(cq);
    weft__sync_unlock(&cq->lock);
    if (w)
        weft__waiter_wake(w);
}

/* Wakes every waiter that has not timed out, oldest first. Any thread. */
static inline void weft__condq_broadcast(struct weft__condq *cq)
{
    struct weft__waitq claimed = { 0 };
    struct weft__waiter *w;
    weft__sync_lock(&cq->lock);
    while ((w = weft__condq_pop_claimed(cq)) != NULL)
        weft__waitq_push(&claimed, w);
    weft__sync_unlock(&cq->lock);
    /* Each claimed record stays valid, w->next included, until woken. */
    weft__waiter_wake_list(weft__waitq_take_all(&claimed));
}

/* 1 while a waiter is queued. */
static inline int weft__condq_busy(struct weft__condq *cq)
{
    weft__sync_lock(&cq->lock);
    int busy = !weft__waitq_empty(&cq->q);
    weft__sync_unlock(&cq->lock);
    return busy;
}

#endif
