/* mltp_cond.c: mltp condition variables: each has its own FIFO of waiters
 * (the seed's "yielding queue"); signal moves the first to the run queue,
 * broadcast all of them (wait protocol in mltp_wait.h).
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>

#include "compat/mltp_wait.h"
#include "mltp.h"

struct cond {
    weft__lock lock;             /* internal; never held while blocking */
    uint32_t unused;
    struct weft__mltp_waitq q;   /* under lock */
};

static_assert(sizeof(struct cond) <= sizeof(mltp_cond_t), "mltp_cond_t storage too small");
static_assert(alignof(struct cond) <= alignof(mltp_cond_t), "mltp_cond_t storage misaligned");

static inline struct cond *impl(mltp_cond_t *c)
{
    return (struct cond *)(void *)c->mltp_private_;
}

int mltp_cond_init(mltp_cond_t *c)
{
    if (!c)
        return EINVAL;
    *c = (mltp_cond_t)MLTP_COND_INIT;
    return 0;
}

void mltp_cond_wait(mltp_cond_t *c, mltp_lock_t *l)
{
    if (!c)
        return;
    struct cond *cv = impl(c);
    struct weft__mltp_waiter r;
    weft__mltp_waiter_init(&r);
    weft__lock_acquire(&cv->lock);
    weft__mltp_waitq_push(&cv->q, &r);
    /* Released with our record queued and cv->lock held: a signal from now
     * on needs cv->lock, which the park's commit releases. */
    mltp_unlock(l);
    weft__mltp_block(&r, &cv->lock);
    mltp_lock(l);
}

void mltp_cond_signal(mltp_cond_t *c)
{
    if (!c)
        return;
    struct cond *cv = impl(c);
    weft__lock_acquire(&cv->lock);
    struct weft__mltp_waiter *r = weft__mltp_waitq_pop(&cv->q);
    weft__lock_release(&cv->lock);
    if (r)
        weft__mltp_wake(r);
}

void mltp_cond_broadcast(mltp_cond_t *c)
{
    if (!c)
        return;
    struct cond *cv = impl(c);
    weft__lock_acquire(&cv->lock);
    struct weft__mltp_waiter *r = cv->q.head;
    cv->q.head = cv->q.tail = NULL;
    weft__lock_release(&cv->lock);
    weft__mltp_wake_list(r);
}
