/* mltp_lock.c: the seed's three lock kinds: a ticket spin lock, and locks
 * whose waiters yield to the tail or to the head of the run queue.
 *
 * The spin lock is weft's one ticket lock (sync/ticket.h, also weft_spin):
 * take a ticket with one fetch_add, spin with pause until it is served,
 * sched_yield now and then since the holder's virtual processor may have
 * been preempted by the kernel (the user-level order is unchanged: no other
 * user thread runs on the spinning processor).
 * The yielding kinds keep one flag word: lock tries it with one atomic
 * exchange and, on failure, yields and tries again. Outside user threads
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
#include "sched/sched.h"
#include "sync/ticket.h"

#define FRONT_TRIES 16 /* front yields in a row before one to the tail (mltp.h) */

struct lock {
    _Atomic uint64_t word; /* spin: the ticket word (sync/ticket.h); yielding kinds:
                              1 while held (exchange by lockers, store by the holder) */
    uint32_t kind;         /* set by init; read-only while in use */
    uint32_t unused;
};

WEFT__STORAGE(impl, struct lock, mltp_lock_t, mltp_private_)

int mltp_lock_init(mltp_lock_t *l, int kind)
{
    if (!l || (kind != MLTP_LOCK_SPIN && kind != MLTP_LOCK_YIELD && kind != MLTP_LOCK_YIELD_FRONT))
        return EINVAL;
    struct lock *k = impl(l);
    atomic_init(&k->word, 0);
    k->kind = (uint32_t)kind;
    k->unused = 0;
    return 0;
}

static inline int flag_try(struct lock *k)
{
    /* The relaxed load only spares a held lock's line a write; the exchange
     * decides. acquire: pairs with the release store in mltp_unlock. */
    return atomic_load_explicit(&k->word, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&k->word, 1, memory_order_acquire) == 0;
}

void mltp_lock(mltp_lock_t *l)
{
    if (!l)
        return;
    struct lock *k = impl(l);
    switch (k->kind) {
    case MLTP_LOCK_YIELD:
        while (!flag_try(k)) {
            weft_yield();
            weft__cpu_relax(); /* the yield returns at once when nothing else is ready */
        }
        return;
    case MLTP_LOCK_YIELD_FRONT:
        for (unsigned fails = 1; !flag_try(k); fails++) {
            if (fails % FRONT_TRIES)
                weft__yield_front();
            else
                weft_yield();
            weft__cpu_relax();
        }
        return;
    default: weft__ticket_lock(&k->word); return;
    }
}

void mltp_unlock(mltp_lock_t *l)
{
    if (!l)
        return;
    struct lock *k = impl(l);
    if (k->kind == MLTP_LOCK_YIELD || k->kind == MLTP_LOCK_YIELD_FRONT) {
        /* release: publishes the critical section; pairs with the acquire
         * exchange in flag_try. */
        atomic_store_explicit(&k->word, 0, memory_order_release);
        return;
    }
    (void)weft__ticket_unlock(&k->word); /* by the holder only (mltp.h): never free here */
}
