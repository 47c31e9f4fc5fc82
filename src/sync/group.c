/* group.c: weft_group: threads spawned into a group are waited for all at once, by their count.
 *
 * Design
 * ------
 * A group is one word (thread/member.h): the count of members not yet
 * finished and two flags. A member is a user thread nobody can name; its
 * spawn counts it in before it can run, its exit counts it out and the
 * next context frees it (thread.c, XF_FREE). A wait that reads a count of
 * 0 returns: in fork-join code under work-first every member ran to its
 * end before its spawn returned, so a wait is one load, and a member costs
 * the two RMWs (spawn, exit) of the spawn and join it replaces, without
 * the join's call and without any list.
 *
 * Waiting: a waiter that finds members takes LOCK, queues a record
 * (sync/wait.h) and ends LOCK with one CAS that sets WAITERS if the count
 * is still above 0 (else it takes its record out and returns), then
 * blocks. The member whose exit makes the count 0 while WAITERS is set
 * takes LOCK in that same CAS, takes the whole queue, clears both flags
 * and wakes the records (weft__group_wake). Only that member wakes: while
 * LOCK is held, a decrement to 0 with WAITERS waits (thread/member.h), so a
 * second one finds WAITERS cleared. A woken waiter reads the count again:
 * members spawned meanwhile (by members or by other threads) are waited
 * for as well.
 *
 * Lifetime: a member's decrement is its last access to the group unless
 * it took LOCK, and then queued waiters keep the group alive until it has
 * woken them, its last access being the RMW that clears the flags. A
 * waiter's last access is the load (or CAS) that sees the count 0 with no
 * LOCK of its own. So once a wait has returned and no thread spawns into
 * the group, the caller may destroy it.
 *
 * Rejected: a Treiber list of the members, taken out by the waiter, which
 * frees them (the previous design). It needs a CAS to push each member,
 * the exit's CAS on the join word and one to take the list: three RMWs per
 * member where the count needs two, and a pass over the list to check and
 * free the members. Freeing at the exit makes a member's end a hand-off
 * kind of its own (XF_FREE), which costs the scheduler one case.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "sched/sched.h"
#include "sync/wait.h"
#include "thread/member.h"
#include "thread/thread.h"
#include "weft.h"

/* The layout behind weft_group (weft.h). */
struct weft__group {
    _Atomic uintptr_t state; /* count << WEFT__G_SHIFT | WEFT__G_* flags; see thread/member.h */
    struct weft__waitq q;    /* queued waiters; under LOCK */
};

WEFT__STORAGE(impl, struct weft__group, weft_group, weft_private_)
static_assert(offsetof(struct weft__group, state) == 0, "weft__group_word");

#define COUNT(v) ((v) >> WEFT__G_SHIFT)

/* weft__group_wake (thread/member.h): a member's exit calls it. */
static void wake_waiters(_Atomic uintptr_t *state)
{
    struct weft__group *g =
        (struct weft__group *)((char *)state - offsetof(struct weft__group, state));
    struct weft__waiter *w = weft__waitq_take_all(&g->q);
    /* release: the queue emptied before the next LOCK holder's acquire;
     * spawns and exits may change the count meanwhile, hence an RMW. */
    atomic_fetch_and_explicit(&g->state, ~WEFT__G_FLAGS, memory_order_release);
    weft__waiter_wake_list(w);
}

/* Queues the caller and blocks until the member that ends the count wakes
 * it, unless the count reaches 0 first. v: state as last read, count > 0.
 * Returns 0 once it needs not look at the group again, 1 after a wake-up
 * (the caller reads the count again). */
static int queue_and_block(struct weft__group *g, uintptr_t v)
{
    if (v & WEFT__G_LOCK) {
        weft__cpu_relax();
        return 1;
    }
    /* acquire: the queue as the last LOCK holder left it (pairs with the
     * release RMWs that end a LOCK, below and in weft__group_wake). */
    if (!atomic_compare_exchange_weak_explicit(&g->state, &v, v | WEFT__G_LOCK,
                                               memory_order_acquire, memory_order_relaxed))
        return 1;
    /* relaxed: published by the release CAS that sets WAITERS below */
    atomic_store_explicit(&weft__group_wake, wake_waiters, memory_order_relaxed);
    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_JOIN);
    weft__waitq_push(&g->q, &self);
    v |= WEFT__G_LOCK;
    for (;;) {
        /* While we hold LOCK, no decrement to 0 happens with WAITERS set;
         * without it, the members are all gone and nobody would wake us. */
        if (COUNT(v) == 0 && !(v & WEFT__G_WAITERS)) {
            weft__waitq_remove(&g->q, &self);
            /* release: the queue as we leave it (pairs with the next
             * LOCK holder's acquire). */
            if (atomic_compare_exchange_weak_explicit(&g->state, &v, v & ~WEFT__G_LOCK,
                                                      memory_order_release, memory_order_acquire))
                return 0;
            weft__waitq_push(&g->q, &self);
            continue;
        }
        /* release: publishes our record to the member that will wake it
         * (pairs with the acquire of its CAS in weft__group_leave). */
        if (atomic_compare_exchange_weak_explicit(&g->state, &v,
                                                  (v & ~WEFT__G_LOCK) | WEFT__G_WAITERS,
                                                  memory_order_release, memory_order_acquire))
            break;
    }
    weft__waiter_block(&self, 0, NULL, 0);
    return 1;
}

/* weft_group_wait once members were found. */
static WEFT_NOINLINE int wait_slow(struct weft__group *g, uintptr_t v)
{
    while (COUNT(v) != 0) {
        if (weft__in_task())
            return EPERM; /* a task must not wait (sched.h) */
        if (!queue_and_block(g, v))
            return 0;
        /* acquire: as in weft_group_wait. */
        v = atomic_load_explicit(&g->state, memory_order_acquire);
    }
    return 0;
}

int weft_group_init(weft_group *g)
{
    if (!g)
        return EINVAL;
    *g = (weft_group)WEFT_GROUP_INIT;
    return 0;
}

int weft_group_wait(weft_group *gp)
{
    if (WEFT_UNLIKELY(!gp))
        return EINVAL;
    struct weft__group *g = impl(gp);
    /* acquire: pairs with the release decrements of the members (one
     * release sequence: see thread/member.h), so their effects happen
     * before our return. */
    uintptr_t v = atomic_load_explicit(&g->state, memory_order_acquire);
    if (WEFT_LIKELY(COUNT(v) == 0))
        return 0;
    return wait_slow(g, v);
}

int weft_group_destroy(weft_group *gp)
{
    if (!gp)
        return EINVAL;
    /* acquire: as in weft_group_wait; a snapshot, as for the other
     * objects' destroy (a spawn racing with destroy is the caller's bug).
     * Finished members were freed at their exit. */
    uintptr_t v = atomic_load_explicit(&impl(gp)->state, memory_order_acquire);
    return v == 0 ? 0 : EBUSY; /* members run, or a thread waits */
}

/* weft_group_spawn is thread.c's: a spawn with the group's word. */
