/* fifo.h: the one intrusive FIFO: a head and a tail over records that link themselves through their own next and prev fields.
 *
 * WEFT__FIFO(tag, prefix, type) declares struct tag { type *head, *tail; }
 * and its operations prefix_empty, prefix_push, prefix_push_front,
 * prefix_remove, prefix_pop, prefix_take_all and prefix_linked, for records
 * of `type` with fields `type *next` and `type *prev`. All-zero is an empty
 * queue. The queue has no lock of its own: every operation runs under
 * whatever lock its owner holds, which guards the queue and the links of
 * the records in it. A record is in at most one queue at a time.
 *
 * Doubly linked, because a record must leave the middle of its queue in
 * O(1) (a waiter whose wait timed out, a thread whose priority changed);
 * one queue of every use (waiters in sync/wait.h, threads in sched/)
 * keeps that code in one place. A generator rather than one set of
 * functions over an embedded link: the thread descriptor's links are
 * fields of their own, placed for the scheduler's hot paths, so the
 * operations take each record type as it is, with no offset arithmetic.
 */
#ifndef WEFT_BASE_FIFO_H
#define WEFT_BASE_FIFO_H

#include <stddef.h>

/* prefix_remove and prefix_pop clear the record's links, so prefix_linked
 * tells a record still queued from one a waker took out (it cannot tell a
 * record of a chain that prefix_take_all detached: the chain keeps its
 * links, through next, for the caller to walk). */
#define WEFT__FIFO(tag, prefix, type)                                                              \
    struct tag {                                                                                   \
        type *head;                                                                                \
        type *tail;                                                                                \
    };                                                                                             \
                                                                                                   \
    static inline int prefix##_empty(const struct tag *q)                                          \
    {                                                                                              \
        return q->head == NULL;                                                                    \
    }                                                                                              \
                                                                                                   \
    /* Makes a and b neighbours, a first (a NULL: b is the head; b NULL: a is the tail). */        \
    /* Every change of the links is this step. */                                                  \
    static inline void prefix##_join(struct tag *q, type *a, type *b)                              \
    {                                                                                              \
        if (a)                                                                                     \
            a->next = b;                                                                           \
        else                                                                                       \
            q->head = b;                                                                           \
        if (b)                                                                                     \
            b->prev = a;                                                                           \
        else                                                                                       \
            q->tail = a;                                                                           \
    }                                                                                              \
                                                                                                   \
    /* Behind every record queued. */                                                              \
    __attribute__((nonnull)) static inline void prefix##_push(struct tag *q, type *x)              \
    {                                                                                              \
        prefix##_join(q, q->tail, x);                                                              \
        prefix##_join(q, x, NULL);                                                                 \
    }                                                                                              \
                                                                                                   \
    /* Ahead of every record queued. */                                                            \
    __attribute__((nonnull)) static inline void prefix##_push_front(struct tag *q, type *x)        \
    {                                                                                              \
        prefix##_join(q, x, q->head);                                                              \
        prefix##_join(q, NULL, x);                                                                 \
    }                                                                                              \
                                                                                                   \
    /* x must be in q. */                                                                          \
    __attribute__((nonnull)) static inline void prefix##_remove(struct tag *q, type *x)            \
    {                                                                                              \
        prefix##_join(q, x->prev, x->next);                                                        \
        x->next = x->prev = NULL;                                                                  \
    }                                                                                              \
                                                                                                   \
    /* The oldest record, taken out; NULL when empty. */                                           \
    static inline type *prefix##_pop(struct tag *q)                                                \
    {                                                                                              \
        type *x = q->head;                                                                         \
        if (x)                                                                                     \
            prefix##_remove(q, x);                                                                 \
        return x;                                                                                  \
    }                                                                                              \
                                                                                                   \
    /* Empties q; returns its records, oldest first, chained through next. */                      \
    static inline type *prefix##_take_all(struct tag *q)                                           \
    {                                                                                              \
        type *x = q->head;                                                                         \
        q->head = q->tail = NULL;                                                                  \
        return x;                                                                                  \
    }                                                                                              \
                                                                                                   \
    /* 1 if x, once pushed into q, is still there (see above). */                                  \
    static inline int prefix##_linked(const struct tag *q, const type *x)                          \
    {                                                                                              \
        return x->prev != NULL || q->head == x;                                                    \
    }

#endif
