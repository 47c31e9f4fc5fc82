/* member.h: a group's word, shared by the spawn that counts a member in and the exit that counts it out (thread.c) and by the waits (sync/group.c).
 *
 * A group is one word, state: the number of members not yet finished,
 * shifted left by WEFT__G_SHIFT, and two flags in the low bits. A member
 * is a user thread nobody can name (no handle, join word WEFT__J_MEMBER):
 * its spawn adds one before it can run, and its exit subtracts one while
 * it still runs on its own stack, then leaves it to the next context, which
 * frees it with no CAS (XF_FREE in sched/sched.h). So a member costs two
 * atomic RMWs, as the spawn and join it replaces do, and a wait that finds
 * the count 0 costs one load (sync/group.c has the waiting side).
 *
 * Every write of state is an atomic RMW, so a waiter's acquire load of a
 * count 0 synchronises with every member's release decrement before it
 * (they are one release sequence).
 *
 * Where a spawn's extra words live: the group is a descriptor field
 * (group); the copy of the argument (weft_spawn_copy, weft_group_spawn
 * with arg_size > 0) is reserved at the top of the child's stack, below
 * its descriptor (the stack starts below it). A bound thread has no slot:
 * the copy follows its descriptor in the same allocation instead.
 */
#ifndef WEFT_THREAD_MEMBER_H
#define WEFT_THREAD_MEMBER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "thread/thread.h"
#include "weft.h"

/* state flags */
#define WEFT__G_WAITERS                                                                            \
    ((uintptr_t)1) /* waiter records are queued; the member whose
                                          exit makes the count 0 wakes them */
#define WEFT__G_LOCK                                                                               \
    ((uintptr_t)2) /* the waiter queue and WAITERS are being changed; only the
                      holder changes the flags, the count moves on meanwhile */
#define WEFT__G_FLAGS ((uintptr_t)3)
/* One member in the count. */
#define WEFT__G_SHIFT 2
#define WEFT__G_ONE   ((uintptr_t)1 << WEFT__G_SHIFT)

/* The largest argument a spawn copies (weft_spawn_copy, weft_group_spawn). */
#define WEFT__ARG_COPY_MAX ((size_t)4096)
/* Alignment of the argument copy: that of malloc's memory. */
#define WEFT__ARG_ALIGN ((size_t) _Alignof(max_align_t))

static inline size_t weft__arg_reserve(size_t arg_size)
{
    return (arg_size + WEFT__ARG_ALIGN - 1) & ~(WEFT__ARG_ALIGN - 1);
}

/* Counts t (spawned, not yet started) in as a member of the group whose
 * word is *state; the spawn has set t's join word to WEFT__J_MEMBER.
 * relaxed: the member's own decrement follows through the spawn (which
 * publishes t), and a waiter that reads the count acquires nothing from it. */
static inline void weft__group_add(_Atomic uintptr_t *state, struct weft_thread *t)
{
    t->group = state;
    atomic_fetch_add_explicit(state, WEFT__G_ONE, memory_order_relaxed);
}

/* Takes the queued waiters out and wakes them, the caller's decrement
 * having taken LOCK (weft__group_leave); its last access to the group.
 * sync/group.c's, above this layer: it registers the function here before
 * it queues the first waiter, and a member calls it only after its CAS has
 * read WAITERS, which a waiter set after that (release CAS; relaxed loads
 * suffice). */
typedef void weft__group_wake_fn(_Atomic uintptr_t *state);
extern _Atomic(weft__group_wake_fn *) weft__group_wake;

/* Counts a finishing member out of its group; its last access to the group
 * (a waiter may return and the group end at once). Called by the member
 * itself, or by the spawn that failed to start it. The decrement that makes
 * the count 0 while waiters are queued takes LOCK in the same CAS, so that
 * exactly one member wakes them, and while the group is still alive (they
 * cannot return before it wakes them); a later such decrement waits until
 * that one has cleared the flags. */
WEFT_INLINE void weft__group_leave(_Atomic uintptr_t *state)
{
    uintptr_t v = atomic_load_explicit(state, memory_order_relaxed);
    for (;;) {
        uintptr_t next = v - WEFT__G_ONE;
        if (WEFT_UNLIKELY((v & WEFT__G_WAITERS) && next >> WEFT__G_SHIFT == 0)) {
            if (v & WEFT__G_LOCK) {
                weft__cpu_relax();
                v = atomic_load_explicit(state, memory_order_relaxed);
                continue;
            }
            /* acq_rel: release passes the member's effects on, acquire
             * takes the queued records (pairs with the release CAS that
             * ends a waiter's LOCK in sync/group.c). */
            if (atomic_compare_exchange_weak_explicit(state, &v, next | WEFT__G_LOCK,
                                                      memory_order_acq_rel, memory_order_relaxed)) {
                atomic_load_explicit(&weft__group_wake, memory_order_relaxed)(state);
                return;
            }
            continue;
        }
        /* release: the member's effects happen before the return of a
         * waiter that reads the count this makes (its acquire load). */
        if (atomic_compare_exchange_weak_explicit(state, &v, next, memory_order_release,
                                                  memory_order_relaxed))
            return;
    }
}

/* weft__group_leave's usual case, with no call: one CAS that leaves no
 * waiter to wake. Returns 0, having changed nothing, where the caller must
 * call weft__group_leave instead (waiters to wake, or the CAS failed). */
WEFT_INLINE int weft__group_leave_quick(_Atomic uintptr_t *state)
{
    uintptr_t v = atomic_load_explicit(state, memory_order_relaxed);
    if (WEFT_UNLIKELY(v & WEFT__G_WAITERS))
        return 0;
    /* release: as in weft__group_leave. */
    return atomic_compare_exchange_strong_explicit(state, &v, v - WEFT__G_ONE, memory_order_release,
                                                   memory_order_relaxed);
}

/* The word of group g: the first of its storage (sync/group.c asserts it). */
static inline _Atomic uintptr_t *weft__group_word(weft_group *g)
{
    return (_Atomic uintptr_t *)(void *)g->weft_private_;
}

#endif
