/* deque.c: allocation and growth of the work-stealing deque's arrays. */
#include "sched/deque.h"

#include <errno.h>
#include <stdlib.h>

static struct weft__deque_array *array_new(int64_t size)
{
    struct weft__deque_array *a = malloc(sizeof *a + (size_t)size * sizeof a->slot[0]);
    if (!a)
        return NULL;
    a->mask = size - 1;
    a->retired = NULL;
    for (int64_t i = 0; i < size; i++)
        atomic_init(&a->slot[i], NULL);
    return a;
}

int weft__deque_init(struct weft__deque *d, int64_t size,
                     void (*overflow)(struct weft__deque *d, struct weft_thread *x))
{
    d->overflow = overflow;
    struct weft__deque_array *a = array_new(size);
    if (!a)
        return ENOMEM;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    atomic_init(&d->array, a);
    return 0;
}

void weft__deque_destroy(struct weft__deque *d)
{
    struct weft__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    while (a) {
        struct weft__deque_array *r = a->retired;
        free(a);
        a = r;
    }
    atomic_store_explicit(&d->array, NULL, memory_order_relaxed);
}

struct weft__deque_array *weft__deque_grow(struct weft__deque *d, int64_t t, int64_t b)
{
    struct weft__deque_array *old = atomic_load_explicit(&d->array, memory_order_relaxed);
    struct weft__deque_array *a = array_new(2 * (old->mask + 1));
    if (!a)
        return NULL;
    for (int64_t i = t; i < b; i++)
        atomic_store_explicit(&a->slot[i & a->mask],
                              atomic_load_explicit(&old->slot[i & old->mask], memory_order_relaxed),
                              memory_order_relaxed);
    a->retired = old;
    /* release: the copied slots are visible before the new array; pairs with
     * the acquire in steal. */
    atomic_store_explicit(&d->array, a, memory_order_release);
    return a;
}

/* weft__deque_push when the array is full: grow, then push as there; out
 * of memory, x overflows (d->overflow). */
void weft__deque_push_grow(struct weft__deque *d, struct weft_thread *x, int64_t t, int64_t b)
{
    struct weft__deque_array *a = weft__deque_grow(d, t, b);
    if (!a) {
        d->overflow(d, x);
        return;
    }
    /* release: as in weft__deque_push. */
    atomic_store_explicit(&a->slot[b & a->mask], x, memory_order_release);
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}
