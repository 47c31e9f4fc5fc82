/* mltp_lock.c: the seed's three lock kinds: a ticket spin lock, and locks
 * whose waiters yield to the tail or to the head of the run queue.
 *
 * The spin lock is weft's one ticket lock (sync/ticket.h, also weft_spin):
 * take a ticket with one fetch_add, spin with pause until it is served,
 * sched_yield now and then since the holder's virtual processor may have
 * been preempted by the kernel (the user-level order is unchanged: no other
 * user thread runs on the spinning processor).
 * The yielding kinds keep base.h's test-and-set lock (weft__lock): lock
 * tries it and, on failure, yields and tries again. Outside user threads
 * weft_yield and weft__yield_front are sched_yield, which is the right
 * wait there too.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "mltp.h"
#include "policy/preempt.h"
#include "sched/sched.h"
#include "sync/ticket.h"

#define FRONT_TRIES 16 /* front yields in a row before one to the tail (mltp.h) */

struct lock {
    union {
        _Atomic uint64_t ticket; /* MLTP_LOCK_SPIN: the ticket word (sync/ticket.h) */
        weft__lock flag;         /* the yielding kinds: base.h's test-and-set lock */
    };
    uint32_t kind; /* set by init; read-only while in use */
    uint32_t unused;
};

WEFT__STORAGE(impl, struct lock, mltp_lock_t, mltp_private_)

int mltp_lock_init(mltp_lock_t *l, int kind)
{
    if (!l || (kind != MLTP_LOCK_SPIN && kind != MLTP_LOCK_YIELD && kind != MLTP_LOCK_YIELD_FRONT))
        return EINVAL;
    *impl(l) = (struct lock){ .kind = (uint32_t)kind }; /* free, whichever kind */
    return 0;
}

void mltp_lock(mltp_lock_t *l)
{
    if (!l)
        return;
    struct lock *k = impl(l);
    switch (k->kind) {
    case MLTP_LOCK_YIELD:
        while (!weft__lock_try(&k->flag)) {
            weft_yield();
            weft__cpu_relax(); /* the yield returns at once when nothing else is ready */
        }
        return;
    case MLTP_LOCK_YIELD_FRONT:
        for (unsigned fails = 1; !weft__lock_try(&k->flag); fails++) {
            if (fails % FRONT_TRIES)
                weft__yield_front();
            else
                weft_yield();
            weft__cpu_relax();
        }
        return;
    default:
        weft__ticket_lock(&k->ticket);
        weft__spin_hold(); /* not preempted while held (policy/preempt.h) */
        return;
    }
}

void mltp_unlock(mltp_lock_t *l)
{
    if (!l)
        return;
    struct lock *k = impl(l);
    if (k->kind == MLTP_LOCK_YIELD || k->kind == MLTP_LOCK_YIELD_FRONT)
        weft__lock_release(&k->flag);
    else if (weft__ticket_unlock(&k->ticket) == 0) /* by the holder only (mltp.h) */
        weft__spin_release();
}
