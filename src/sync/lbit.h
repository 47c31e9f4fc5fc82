/* lbit.h: the one update loop of an object word that carries its own internal lock bit L (weft_sem, weft_mutex, weft_rwlock).
 *
 * Such a word packs the object's state (a count, an owner, queue bits)
 * with a bit L that guards the object's wait queues and is held for a few
 * instructions, never across a switch. Every CAS on the word expects L
 * clear, so while L is held the word is frozen and its holder ends with
 * one plain store that may change anything in it (weft__lbit_drop).
 * Every other change is the loop of weft__lbit_update: wait while L is
 * set; hand the value to the object's decision, which keeps the word (the
 * call returns, e.g. with an error), replaces it lock-free, or takes L
 * (to queue a waiter, or to pop one); CAS; go round when the word moved.
 * The objects keep only their decisions.
 */
#ifndef WEFT_SYNC_LBIT_H
#define WEFT_SYNC_LBIT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "sync/wait.h"

/* What a decision asks of weft__lbit_update. */
enum weft__lbit_op {
    WEFT__LBIT_KEEP, /* leave the word: the update ends (the decision's ctx says why) */
    WEFT__LBIT_SET,  /* replace the value with *nv, lock-free */
    WEFT__LBIT_TAKE, /* take L: replace the value with *nv, which has L set */
};

/* A decision on v, a value of the word with L clear: returns the op and,
 * for SET and TAKE, the new value in *nv. It may be called more than once
 * (whenever the word moved under the CAS), so it changes nothing but ctx. */
typedef enum weft__lbit_op weft__lbit_decide(uint64_t v, uint64_t *nv, void *ctx);

/* Runs the loop above on *word with bit l as L, from *v (a value read
 * before, or a guess the CAS corrects). Returns the op that ended it, with
 * *v the value it was decided on: KEEP; SET, done with memory order
 * `order` (the caller says what it orders); or TAKE, with L held (acquire:
 * pairs with the release of the weft__lbit_drop that dropped L last).
 * Inlined, so that decide and order are constants at each call: the sem's
 * fast paths are this loop. */
WEFT_INLINE enum weft__lbit_op weft__lbit_update(_Atomic uint64_t *word, uint64_t *v, uint64_t l,
                                                 weft__lbit_decide *decide, void *ctx,
                                                 memory_order order)
{
    unsigned spins = 0;
    for (;;) {
        if (*v & l) {
            /* relaxed: the CAS on the value decides, and orders what it must. */
            while ((*v = atomic_load_explicit(word, memory_order_relaxed)) & l)
                weft__sync_backoff(&spins);
        }
        uint64_t nv;
        enum weft__lbit_op op = decide(*v, &nv, ctx);
        if (op == WEFT__LBIT_KEEP)
            return op;
        if (op == WEFT__LBIT_TAKE) {
            WEFT_ASSERT(nv & l);
            if (atomic_compare_exchange_weak_explicit(word, v, nv, memory_order_acquire,
                                                      memory_order_relaxed))
                return op;
        } else if (atomic_compare_exchange_weak_explicit(word, v, nv, order,
                                                         memory_order_relaxed)) {
            return op;
        }
    }
}

/* The L holder's last store: drops L with the word's new value nv (L
 * clear). release: publishes the queues and whatever the holder changed
 * (a hand-off, a freed owner); pairs with the acquire of the next TAKE,
 * and of the next lock-free SET that acquires. */
static inline void weft__lbit_drop(_Atomic uint64_t *word, uint64_t nv, uint64_t l)
{
    WEFT_ASSERT(!(nv & l));
    (void)l;
    atomic_store_explicit(word, nv, memory_order_release);
}

/* The destroy of an L-bit object whose word is 0 exactly when nobody holds
 * it or waits for it (mutex, rwlock): EBUSY, else 0. acquire: a destroy
 * after the last unlock sees everything before it (pairs with that
 * unlock's release). */
static inline int weft__lbit_destroy(_Atomic uint64_t *word)
{
    return atomic_load_explicit(word, memory_order_acquire) != 0 ? EBUSY : 0;
}

#endif
