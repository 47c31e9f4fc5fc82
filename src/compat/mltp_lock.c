/* mltp_lock.c: the seed's three lock kinds: a ticket spin lock, and locks
 * whose waiters yield to the tail or to the head of the run queue.
 *
 * The spin lock is the seed's ticket lock (take a ticket, spin until it is
 * served) with C11 atomics: the seed's compare-and-swap loop on the ticket
 * counter is one fetch_add here, and the spin uses pause. A waiter also
 * calls sched_yield every SPIN_YIELD_ROUNDS polls: the holder's virtual
 * processor may have been preempted by the kernel, and on a loaded machine
 * spinning through its time slice helps nobody (the user-level order is
 * unchanged: no other user thread runs on the spinning processor).
 * The yielding kinds keep one flag word: lock tries it with one atomic
 * exchange and, on failure, yields and tries again. Outside user threads
 * weft_yield and weft__yield_front are sched_yield, which is the right
 * wait there too.
 */
#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "mltp.h"
#include "sched/sched.h"

#define SPIN_YIELD_ROUNDS 1024
#define FRONT_TRIES 16 /* front yields in a row before one to the tail (mltp.h) */

struct lock {
    _Atomic uint32_t next;    /* spin: next ticket to hand out (fetch_add by lockers);
                                 yielding kinds: 1 while held (exchange by lockers,
                                 store by the holder) */
    _Atomic uint32_t serving; /* spin: ticket now served; stored by the holder only */
    uint32_t kind;            /* set by init; read-only while in use */
    uint32_t unused;
};

static_assert(sizeof(struct lock) <= sizeof(mltp_lock_t), "mltp_lock_t storage too small");
static_assert(alignof(struct lock) <= alignof(mltp_lock_t), "mltp_lock_t storage misaligned");

static inline struct lock *impl(mltp_lock_t *l)
{
    return (struct lock *)(void *)l->mltp_private_;
}

int mltp_lock_init(mltp_lock_t *l, int kind)
{
    if (!l || (kind != MLTP_LOCK_SPIN && kind != MLTP_LOCK_YIELD && kind != MLTP_LOCK_YIELD_FRONT))
        return EINVAL;
    struct lock *k = impl(l);
    atomic_init(&k->next, 0);
    atomic_init(&k->serving, 0);
    k->kind = (uint32_t)kind;
    k->unused = 0;
    return 0;
}

static void spin_lock(struct lock *k)
{
    /* relaxed: taking a ticket orders nothing; the acquire load that sees it
     * served does. */
    uint32_t ticket = atomic_fetch_add_explicit(&k->next, 1, memory_order_relaxed);
    unsigned rounds = 0;
    /* acquire: pairs with the release store in mltp_unlock that serves us. */
    while (atomic_load_explicit(&k->serving, memory_order_acquire) != ticket) {
        weft__cpu_relax();
        if (++rounds == SPIN_YIELD_ROUNDS) {
            rounds = 0;
            sched_yield();
        }
    }
}

static inline int flag_try(struct lock *k)
{
    /* The relaxed load only spares a held lock's line a write; the exchange
     * decides. acquire: pairs with the release store in mltp_unlock. */
    return atomic_load_explicit(&k->next, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&k->next, 1, memory_order_acquire) == 0;
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
    default:
        spin_lock(k);
        return;
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
        atomic_store_explicit(&k->next, 0, memory_order_release);
        return;
    }
    /* relaxed load: only the holder writes serving. release store: pairs
     * with the acquire load of the next ticket's holder in spin_lock. */
    uint32_t s = atomic_load_explicit(&k->serving, memory_order_relaxed);
    atomic_store_explicit(&k->serving, s + 1, memory_order_release);
}
