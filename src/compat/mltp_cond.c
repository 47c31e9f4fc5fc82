/* mltp_cond.c: mltp condition variables: each has its own FIFO of waiters
 * (the seed's "yielding queue"); signal moves the first to the run queue,
 * broadcast all of them, in queue order.
 *
 * The queue is weft_cond's (sync/cond.h), on weft's one waiting mechanism
 * (sync/wait.h, design in wait.c): a record on the waiter's stack, queued
 * under the queue's lock; the lock is dropped before the waiter blocks,
 * and the record's wait word closes the window (a wake that comes first leaves the word final and the
 * waiter does not park). User threads park and free their processor; bound
 * and plain kernel threads sleep on the word.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>

#include "mltp.h"
#include "sync/cond.h"
#include "sync/wait.h"

WEFT__STORAGE(impl, struct weft__condq, mltp_cond_t, mltp_private_)

int mltp_cond_init(mltp_cond_t *c)
{
    return weft__init_zeroed(c, sizeof *c);
}

void mltp_cond_wait(mltp_cond_t *c, mltp_lock_t *l)
{
    if (!c)
        return;
    struct weft__waiter r;
    weft__waiter_init(&r, WEFT__WAIT_COND);
    weft__condq_push(impl(c), &r);
    /* Released with our record queued: a signaller that takes l after this
     * finds it. No spin: the seed's waiter goes straight to its queue. */
    mltp_unlock(l);
    weft__waiter_block(&r, 0, NULL, 0);
    mltp_lock(l);
}

void mltp_cond_signal(mltp_cond_t *c)
{
    if (c)
        weft__condq_signal(impl(c));
}

void mltp_cond_broadcast(mltp_cond_t *c)
{
    if (c)
        weft__condq_broadcast(impl(c));
}
