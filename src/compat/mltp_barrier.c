/* mltp_barrier.c: mltp barriers: the seed's lock and arrival count, with
 * waiters queued and parked (mltp_wait.h) instead of yielding on the run
 * queue until an episode counter changes.
 *
 * The count-th arrival of an episode starts the next one: it sets the
 * arrivals back to zero and detaches the queue in the same critical
 * section, so the detached list is the episode (the seed's counter has
 * nothing left to do) and records of two episodes never mix. It wakes them
 * after dropping the lock and goes on without switching, as in the seed.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>

#include "compat/mltp_wait.h"
#include "mltp.h"

struct barrier {
    weft__lock lock;           /* internal; never held while blocking */
    uint32_t count;            /* set by init; read-only while in use */
    uint32_t arrived;          /* under lock: arrivals in this episode */
    uint32_t unused;
    struct weft__mltp_waitq q; /* under lock: waiters of this episode */
};

static_assert(sizeof(struct barrier) <= sizeof(mltp_barrier_t), "mltp_barrier_t storage too small");
static_assert(alignof(struct barrier) <= alignof(mltp_barrier_t), "mltp_barrier_t storage misaligned");

static inline struct barrier *impl(mltp_barrier_t *b)
{
    return (struct barrier *)(void *)b->mltp_private_;
}

int mltp_barrier_init(mltp_barrier_t *b, int count)
{
    if (!b || count < 1)
        return EINVAL;
    *b = (mltp_barrier_t){ { 0 } };
    impl(b)->count = (uint32_t)count;
    return 0;
}

void mltp_barrier(mltp_barrier_t *b)
{
    if (!b)
        return;
    struct barrier *br = impl(b);
    weft__lock_acquire(&br->lock);
    if (++br->arrived >= br->count) {
        struct weft__mltp_waiter *r = br->q.head;
        br->q.head = br->q.tail = NULL;
        br->arrived = 0;
        weft__lock_release(&br->lock);
        weft__mltp_wake_list(r);
        return;
    }
    struct weft__mltp_waiter r;
    weft__mltp_waiter_init(&r);
    weft__mltp_waitq_push(&br->q, &r);
    weft__mltp_block(&r, &br->lock);
}
