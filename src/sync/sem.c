/* sem.c: weft_sem: a counting semaphore whose value and waiter bit share one word, with direct hand-off of a unit to the oldest waiter.
 *
 * Word: value << 2 | W | L. L (1) is the internal lock guarding the queue,
 * W (2) says the queue is not empty (exact whenever L is clear). Every CAS
 * expects L clear, so the L holder ends with a plain store.
 * wait: one CAS value → value-1 when the value is positive; otherwise take
 * L, queue a record, set W, wait. post: one CAS value → value+1 when W is
 * clear; otherwise take L, pop the oldest waiter and hand it the unit
 * (the value stays 0), so a waiter that was woken never has to compete
 * again and the value can never be positive while W is set.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>

#include "sched/sched.h"
#include "sync/lbit.h"
#include "sync/wait.h"
#include "weft.h"

#define SEM_SPIN_NS 3000u
#define SEM_MAX     0xffffffffu

enum { L = 1, W = 2, ONE = 4 };

struct sem {
    _Atomic uint64_t word;      /* value << 2 | W | L */
    struct weft__waitq q;       /* under L */
    _Atomic uint32_t spin_hint; /* adaptive spin budget (weft__spin_learn); racy by design */
};

WEFT__STORAGE(impl, struct sem, weft_sem, weft_private_)

int weft_sem_init(weft_sem *s, unsigned value)
{
    if (!s || value > SEM_MAX)
        return EINVAL;
    *s = (weft_sem){ { 0 } };
    atomic_init(&impl(s)->word, (uint64_t)value * ONE);
    return 0;
}

int weft_sem_destroy(weft_sem *s)
{
    if (!s)
        return EINVAL;
    /* relaxed: a snapshot; waiters that arrive later are the caller's bug. */
    return atomic_load_explicit(&impl(s)->word, memory_order_relaxed) & (W | L) ? EBUSY : 0;
}

/* trywait's decision: take a unit, or EAGAIN. */
static enum weft__lbit_op take_unit(uint64_t v, uint64_t *nv, void *rc)
{
    if (v < ONE) {
        *(int *)rc = EAGAIN;
        return WEFT__LBIT_KEEP;
    }
    *nv = v - ONE;
    return WEFT__LBIT_SET;
}

/* wait's decision: take a unit, or L and W to queue. */
static enum weft__lbit_op take_unit_or_queue(uint64_t v, uint64_t *nv, void *rc)
{
    if (v >= ONE)
        return take_unit(v, nv, rc);
    if (weft__in_task()) {
        *(int *)rc = EPERM; /* a task must not wait (sched.h) */
        return WEFT__LBIT_KEEP;
    }
    *nv = v | L | W;
    return WEFT__LBIT_TAKE;
}

/* post's decision: add a unit, or L to hand it to the oldest waiter. */
static enum weft__lbit_op add_unit_or_hand_off(uint64_t v, uint64_t *nv, void *rc)
{
    if (v & W) {
        *nv = v | L;
        return WEFT__LBIT_TAKE;
    }
    if ((v >> 2) == SEM_MAX) {
        *(int *)rc = EOVERFLOW;
        return WEFT__LBIT_KEEP;
    }
    *nv = v + ONE;
    return WEFT__LBIT_SET;
}

/* wait, holding L taken on v: queues the caller, drops L, waits. */
static void queue_and_wait(struct sem *sm, uint64_t v)
{
    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_SEM);
    weft__waitq_push(&sm->q, &self);
    weft__lbit_drop(&sm->word, v | W, L); /* publishes the queue to post */
    weft__waiter_block(&self, weft__spin_budget(&sm->spin_hint, SEM_SPIN_NS), NULL, 0);
    weft__spin_learn(&sm->spin_hint, self.spin);
}

/* post, holding L taken on v: hands the unit to the oldest waiter. */
static void hand_off(struct sem *sm, uint64_t v)
{
    struct weft__waiter *w = weft__waitq_pop(&sm->q);
    WEFT_ASSERT(w != NULL && v < ONE);
    /* Publishes the queue; the unit itself goes to w through the release
     * of its wake. */
    weft__lbit_drop(&sm->word, weft__waitq_empty(&sm->q) ? 0 : W, L);
    weft__waiter_wake(w);
}

/* Runs decide on s's word (weft__lbit_update; order: of a lock-free SET,
 * as the caller says), then under_l if it took L. Returns EINVAL for
 * NULL, else 0 or decide's error. */
WEFT_INLINE int update(weft_sem *s, weft__lbit_decide *decide,
                       void (*under_l)(struct sem *, uint64_t), memory_order order)
{
    if (!s)
        return EINVAL;
    struct sem *sm = impl(s);
    int rc = 0;
    uint64_t v = atomic_load_explicit(&sm->word, memory_order_relaxed);
    if (weft__lbit_update(&sm->word, &v, L, decide, &rc, order) == WEFT__LBIT_TAKE)
        under_l(sm, v);
    return rc;
}

int weft_sem_trywait(weft_sem *s)
{
    /* acquire: takes the unit a post published with release. take_unit
     * never takes L. */
    return update(s, take_unit, NULL, memory_order_acquire);
}

int weft_sem_wait(weft_sem *s)
{
    /* acquire: takes the unit a post published with release. */
    return update(s, take_unit_or_queue, queue_and_wait, memory_order_acquire);
}

int weft_sem_post(weft_sem *s)
{
    /* release: publishes what precedes the post to the waiter that takes
     * this unit. */
    return update(s, add_unit_or_hand_off, hand_off, memory_order_release);
}
