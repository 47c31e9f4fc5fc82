/* mltp_barrier.c: mltp barriers: the seed's lock and arrival count, with
 * waiters queued and parked (sync/wait.h) instead of yielding on the run
 * queue until an episode counter changes.
 *
 * Barrier waiters park rather than yield on the run queue. Measured with
 * bench/seeds/ocean.c, 8 threads: 258 x 258 on 2 VPs, parking 12.3 ms and
 * yielding 12.7 ms; on a 34 x 34 grid, where ~70,000 barriers dominate,
 * yielding was 6% faster on 1 VP and parking 6% faster on 2 VPs. At equal
 * speed parking wins on the rest: a yielding waiter takes the run-queue
 * lock at every turn and keeps idle processors from sleeping, and parked
 * records serve bound and kernel threads too.
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

#include "mltp.h"
#include "sync/wait.h"

struct barrier {
    weft__lock lock;  /* internal (weft__sync_lock); never held while blocking */
    uint32_t count;   /* set by init; read-only while in use */
    uint32_t arrived; /* under lock: arrivals in this episode */
    uint32_t unused;
    struct weft__waitq q; /* under lock: waiters of this episode */
};

WEFT__STORAGE(impl, struct barrier, mltp_barrier_t, mltp_private_)

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
    weft__sync_lock(&br->lock);
    if (++br->arrived >= br->count) {
        struct weft__waiter *r = weft__waitq_take_all(&br->q);
        br->arrived = 0;
        weft__sync_unlock(&br->lock);
        weft__waiter_wake_list(r);
        return;
    }
    struct weft__waiter r;
    weft__waiter_init(&r, WEFT__WAIT_BARRIER);
    weft__waitq_push(&br->q, &r);
    weft__sync_unlock(&br->lock);
    weft__waiter_block(&r, 0, NULL, 0);
}
