/* deque.h: the Chase-Lev work-stealing deque of one worker (growable).
 *
 * The owner pushes and pops at the bottom (LIFO, no atomic RMW unless the
 * deque holds one element); thieves take from the top with one CAS. Memory
 * orders follow Lê, Pop, Cohen and Zappa Nardelli, "Correct and efficient
 * work-stealing for weak memory models" (PPoPP 2013); slots are read and
 * written with acquire/release so that the descriptor a thief takes is
 * published to it (free on x86, and visible to TSan, which does not model
 * standalone fences).
 *
 * A grown-out array is not freed while thieves may still read it: it is
 * kept on the deque's retired list until weft__deque_destroy.
 *
 * Readying a thread must not fail, but growing needs memory: when the array
 * is full and a larger one cannot be allocated, the push hands the thread to
 * the deque's overflow callback instead, which keeps it ready through its descriptor
 * (an intrusive list) with no allocation. Reserving a slot per thread at
 * spawn was rejected: any thread may be readied on any worker, so every
 * deque would have to hold every live thread.
 *
 * Slots hold `void *`: the scheduler's deques hold threads (the typed
 * weft__deque_push/pop/steal below), task.c's hold task records (through
 * weft__deque_try_push, weft__deque_pop_any and weft__deque_steal_any).
 */
#ifndef WEFT_SCHED_DEQUE_H
#define WEFT_SCHED_DEQUE_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "desc/desc.h" /* struct weft__deque */

/* overflow: where weft__deque_push puts a thread that does not fit when the
 * array cannot grow (out of memory); NULL for a deque that is only pushed
 * with weft__deque_try_push. */
int weft__deque_init(struct weft__deque *d, int64_t size,
                     void (*overflow)(struct weft__deque *d, struct weft_thread *x));
void weft__deque_destroy(struct weft__deque *d);
/* A twice-as-large copy of the array, installed; NULL when out of memory
 * (the old array stays). */
struct weft__deque_array *weft__deque_grow(struct weft__deque *d, int64_t t, int64_t b);
void weft__deque_push_grow(struct weft__deque *d, struct weft_thread *x, int64_t t, int64_t b);

#define WEFT__DEQUE_EMPTY ((void *)0)
#define WEFT__DEQUE_ABORT ((void *)1)
#define WEFT__STEAL_EMPTY ((struct weft_thread *)0)
#define WEFT__STEAL_ABORT ((struct weft_thread *)1)

/* Owner only. */
WEFT_INLINE void weft__deque_push(struct weft__deque *d, struct weft_thread *x)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    /* acquire: pairs with the CAS on top in steal, so a slot is reused only
     * after the thief that took it has read it. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    struct weft__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    if (WEFT_UNLIKELY(b - t > a->mask)) {
        weft__deque_push_grow(d, x, t, b); /* out of line: callers keep nothing across it */
        return;
    }
    /* release: publishes the descriptor; pairs with the acquire in steal. */
    atomic_store_explicit(&a->slot[b & a->mask], x, memory_order_release);
    /* release: the slot is written before the new bottom is seen. */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}

/* Owner only; NULL when empty. */
WEFT_INLINE void *weft__deque_pop_any(struct weft__deque *d)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
    struct weft__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
    /* seq_cst: orders the bottom store before the top load; pairs with the
     * fence in steal (the classic store-load race for the last element). */
    weft__fence();
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    void *x = NULL;
    if (t <= b) {
        x = atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed);
        if (t == b) {
            /* last element: race the thieves for it */
            if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = NULL;
            atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

/* Any thread; EMPTY, ABORT (lost a race: retry elsewhere) or an element. */
static inline void *weft__deque_steal_any(struct weft__deque *d)
{
    /* acquire: pairs with the CAS of other thieves and the owner. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    /* seq_cst: pairs with the fence in pop. */
    weft__fence();
    /* acquire: pairs with the release store of bottom in push. */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
    if (t >= b)
        return WEFT__DEQUE_EMPTY;
    /* acquire: pairs with the release in grow. */
    struct weft__deque_array *a = atomic_load_explicit(&d->array, memory_order_acquire);
    /* acquire: pairs with the release in push; publishes the descriptor. */
    void *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_acquire);
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return WEFT__DEQUE_ABORT;
    return x;
}

#define WEFT__DEQUE_STEAL_TRIES 4 /* tries on one deque: the first, then those after a lost race */

/* Any thread: an element stolen from d, a steal that lost a race retried up
 * to WEFT__DEQUE_STEAL_TRIES tries in all; NULL (EMPTY) when d is empty or
 * every try lost, then the thief moves on to another victim. */
static inline void *weft__deque_steal_retry(struct weft__deque *d)
{
    for (int tries = 0; tries < WEFT__DEQUE_STEAL_TRIES; tries++) {
        void *x = weft__deque_steal_any(d);
        if (x != WEFT__DEQUE_ABORT)
            return x;
    }
    return WEFT__DEQUE_EMPTY;
}

/* Owner only; 0 when full and the array cannot grow (x is not pushed). */
WEFT_INLINE int weft__deque_try_push(struct weft__deque *d, void *x)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    /* acquire: as in weft__deque_push. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    struct weft__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    if (WEFT_UNLIKELY(b - t > a->mask)) {
        a = weft__deque_grow(d, t, b);
        if (!a)
            return 0;
    }
    /* release: as in weft__deque_push. */
    atomic_store_explicit(&a->slot[b & a->mask], x, memory_order_release);
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
    return 1;
}

/* The scheduler's typed views: deques of threads. */
WEFT_INLINE struct weft_thread *weft__deque_pop(struct weft__deque *d)
{
    return weft__deque_pop_any(d);
}

/* Any thread; WEFT__STEAL_EMPTY, WEFT__STEAL_ABORT or a thread. */
static inline struct weft_thread *weft__deque_steal(struct weft__deque *d)
{
    return weft__deque_steal_any(d);
}

/* Racy size hint (any thread): exact for the owner when no thief runs. */
WEFT_INLINE int64_t weft__deque_size_hint(struct weft__deque *d)
{
    /* relaxed: a hint; callers that need certainty pop or steal. */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    return b - t;
}

#endif
