/* group.h: a group's member list, shared by the spawn that links a member in (thread.c) and the waits that take members out (sync/group.c).
 *
 * A group is one word, head: the newest member's descriptor (a Treiber
 * stack linked through each member's link word) with flags in the low bits,
 * free because descriptors are 64-byte aligned. Members are joinable user
 * threads nobody else can name; the waiter that takes them out joins them,
 * so a member costs what the join it replaces costs, plus the link and the
 * two CASes of its batch (sync/group.c has the protocol).
 *
 * Where a member's words live: a spawn may reserve bytes at the top of the
 * child's stack, below its descriptor (the stack starts below them): first
 * the link word (group members), then the copy of the argument
 * (weft_spawn_copy, weft_group_spawn with arg_size > 0). A bound thread has
 * no slot: they follow its descriptor in the same allocation instead.
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
#define WEFT__G_LOCK    ((uintptr_t)4) /* head and the waiter queue are being changed: only
                                          the holder writes head until it clears the bit */
#define WEFT__G_FLAGS   ((uintptr_t)63)

/* The largest argument a spawn copies (weft_spawn_copy, weft_group_spawn). */
#define WEFT__ARG_COPY_MAX ((size_t)4096)
/* Bytes reserved for a member's link word; keeps the stack top 16-aligned. */
#define WEFT__MEMBER_HDR ((size_t)16)
/* Alignment of the argument copy: that of malloc's memory. */
#define WEFT__ARG_ALIGN ((size_t)_Alignof(max_align_t))

static inline size_t weft__arg_reserve(size_t arg_size)
{
    return (arg_size + WEFT__ARG_ALIGN - 1) & ~(WEFT__ARG_ALIGN - 1);
}

/* The link word of member t: the next older member (a descriptor, no
 * flags). Written by the spawn before the push, read by the waiter that
 * took t out, before it joins (and so frees) t. */
static inline uintptr_t *weft__member_link(struct weft_thread *t)
{
    if (WEFT_UNLIKELY(t->bound))
        return (uintptr_t *)(void *)(t + 1);
    return (uintptr_t *)(void *)((char *)t - WEFT__MEMBER_HDR);
}

/* Links t (spawned, not yet started) in as the newest member; link is
 * weft__member_link(t). Waits out a LOCK holder, which alone may write head
 * meanwhile (a few instructions). */
static inline void weft__group_push(_Atomic uintptr_t *head, struct weft_thread *t, uintptr_t *link)
{
    uintptr_t v = atomic_load_explicit(head, memory_order_relaxed);
    for (;;) {
        if (WEFT_UNLIKELY(v & WEFT__G_LOCK)) {
            weft__cpu_relax();
            v = atomic_load_explicit(head, memory_order_relaxed);
            continue;
        }
        *link = v & ~WEFT__G_FLAGS;
        /* release: publishes the link and t's descriptor to the waiter that
         * takes t out (pairs with its acquire CAS in group.c). */
        if (atomic_compare_exchange_weak_explicit(head, &v, (uintptr_t)t | (v & WEFT__G_FLAGS),
                                                  memory_order_release, memory_order_relaxed))
            return;
    }
}

/* Spawns a member of the group whose list is *head (weft_group_spawn):
 * weft_spawn_copy's paths, with the link instead of a handle. */
int weft__spawn_member(_Atomic uintptr_t *head, weft_fn fn, const void *arg, size_t arg_size,
                       const weft_attr *attr);

#endif
