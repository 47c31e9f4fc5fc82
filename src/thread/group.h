/* group.h: a group's member list, shared by the spawn that links a member in (thread.c) and the waits that take members out (sync/group.c).
 *
 * A group is one word, head: the newest member's descriptor (a Treiber
 * stack linked through each member's link word), flags in the low bits,
 * free because descriptors are 64-byte aligned, and a take count in the
 * top bits, free because user-space addresses fit in 48 bits. Members are
 * joinable user threads nobody else can name; the waiter that takes them
 * out frees them (sync/group.c has the protocol).
 *
 * Where a spawn's extra words live: the link word is a descriptor field
 * (member_link); the copy of the argument (weft_spawn_copy,
 * weft_group_spawn with arg_size > 0) is reserved at the top of the
 * child's stack, below its descriptor (the stack starts below it). A bound
 * thread has no slot: the copy follows its descriptor in the same
 * allocation instead.
 */
#ifndef WEFT_THREAD_GROUP_H
#define WEFT_THREAD_GROUP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "thread/thread.h"
#include "weft.h"

/* head flags */
#define WEFT__G_BUSY    ((uintptr_t)1) /* a waiter has taken members out and joins them */
#define WEFT__G_WAITERS ((uintptr_t)2) /* other waiters are queued (only with BUSY) */
#define WEFT__G_LOCK                                                                               \
    ((uintptr_t)4) /* head and the waiter queue are being changed: only
                                          the holder writes head until it clears the bit */
#define WEFT__G_FLAGS ((uintptr_t)63)
/* The take count: every take of members out of head adds one (wrapping), so
 * a CAS that expects a head read before another waiter took that list and
 * the same descriptor came back fails (ABA; sync/group.c). */
#define WEFT__G_TAG_SHIFT 48
#define WEFT__G_TAG_ONE   ((uintptr_t)1 << WEFT__G_TAG_SHIFT)
#define WEFT__G_TAG       (~(uintptr_t)0 << WEFT__G_TAG_SHIFT)
/* The newest member's descriptor. */
#define WEFT__G_PTR (~(WEFT__G_TAG | WEFT__G_FLAGS))

/* The largest argument a spawn copies (weft_spawn_copy, weft_group_spawn). */
#define WEFT__ARG_COPY_MAX ((size_t)4096)
/* Alignment of the argument copy: that of malloc's memory. */
#define WEFT__ARG_ALIGN ((size_t) _Alignof(max_align_t))

static inline size_t weft__arg_reserve(size_t arg_size)
{
    return (arg_size + WEFT__ARG_ALIGN - 1) & ~(WEFT__ARG_ALIGN - 1);
}

/* The link word of member t: the next older member (a descriptor, no
 * flags). Written by the spawn before the push, read by waiters, which may
 * read a stale one (sync/group.c: the fast take's check): hence a field of
 * the descriptor, which stays mapped, and relaxed atomics. */
static inline _Atomic uintptr_t *weft__member_link(struct weft_thread *t)
{
    return &t->member_link;
}

/* Links t (spawned, not yet started) in as the newest member. Waits out a
 * LOCK holder, which alone may write head meanwhile (a few instructions). */
static inline void weft__group_push(_Atomic uintptr_t *head, struct weft_thread *t)
{
    WEFT_ASSERT(((uintptr_t)t & ~WEFT__G_PTR) == 0); /* 48-bit user addresses */
    uintptr_t v = atomic_load_explicit(head, memory_order_relaxed);
    for (;;) {
        if (WEFT_UNLIKELY(v & WEFT__G_LOCK)) {
            weft__cpu_relax();
            v = atomic_load_explicit(head, memory_order_relaxed);
            continue;
        }
        /* relaxed: published by the CAS below */
        atomic_store_explicit(&t->member_link, v & WEFT__G_PTR, memory_order_relaxed);
        /* release: publishes the link and t's descriptor to the waiter that
         * takes t out (pairs with its acquire load or CAS in group.c). */
        if (atomic_compare_exchange_weak_explicit(head, &v, (uintptr_t)t | (v & ~WEFT__G_PTR),
                                                  memory_order_release, memory_order_relaxed))
            return;
    }
}

/* Spawns a member of the group whose list is *head (weft_group_spawn):
 * weft_spawn_copy's paths, with the link instead of a handle. */
int weft__spawn_member(_Atomic uintptr_t *head, weft_fn fn, const void *arg, size_t arg_size,
                       const weft_attr *attr);

#endif
