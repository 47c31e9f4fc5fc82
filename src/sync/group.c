/* group.c: weft_group: threads spawned into a group are waited for all at once, by joining them.
 *
 * Design
 * ------
 * A member is an ordinary joinable thread that nobody else can name. The
 * spawn links it into the group's list (thread/group.h: one word, head, a
 * Treiber stack through each member's link word, flags in the low bits, a
 * take count in the top bits) before it can run.
 *
 * Fast take: in fork-join code the waiter finds every member finished
 * (under work-first each ran to its end before the spawn returned). It
 * checks that from head as read, then empties head with one CAS and frees
 * the members itself (a plain store to FREED: it is their only owner), so
 * a group costs the joins it replaces plus the push and this CAS per
 * batch. Without BUSY, another waiter may return as soon as head is empty;
 * that is right because the members taken were all finished. The check
 * reads the list before owning it: another waiter may have taken that list
 * meanwhile, and a new member in a reused descriptor made head equal again,
 * with members not checked. The take count makes that CAS fail: every take
 * adds one. (Wrapping needs 65,536 takes of this group inside one check of
 * a few members.) The check looks at FAST_TAKE_MAX members at most; longer
 * lists take the general way, whose two CASes they share.
 *
 * General take: a waiter takes the whole list out with one CAS, which also
 * sets BUSY, joins each member (parking on those still running), and
 * repeats while members were added meanwhile (members may spawn into their
 * own group; a member is linked in before the member that spawned it can
 * finish, so once the waiter has joined that one, the newcomer is in the
 * list). It then clears BUSY with one more CAS.
 *
 * Rejected: a counter of live members with detached members that decrement
 * it at exit and wake the waiters. Every member then takes the detached
 * exit (the slow exit path, a failed CAS and an exchange on the join word,
 * the free from the resumed side) instead of the one-CAS exit of a thread
 * whose joiner comes later, plus two RMWs on the counter, and the last
 * member must touch the group after the count that lets a waiter return
 * and destroy it. A member exit of its own (decrement the group, free the
 * slot from the resumed side with no CAS on the join word) would cost two
 * RMWs per member, as a join does, against three here (push, exit, take),
 * but needs a new exit kind in the scheduler's hand-off.
 *
 * Several waiters: only one holds BUSY at a time; the others queue a
 * record (sync/wait.h) under LOCK, set WAITERS and block; the holder, once
 * the list is empty, takes the queue under LOCK and clears every flag with
 * its last store to the group, then wakes the records, which live on the
 * waiters' stacks. A woken waiter starts over: the group is empty, or it
 * takes what was added since. LOCK is held for a few instructions; while it
 * is set only its holder writes head (spawns wait it out), so the holder can
 * release it with a plain store.
 *
 * Lifetime: whoever clears the last flag, or empties head by a fast take,
 * does it with its last access to the group (a CAS or store that leaves
 * head empty, no member and no flag, or a bare list), so a waiter that then
 * sees head empty may return and the caller destroy the group.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "sched/sched.h"
#include "sync/wait.h"
#include "thread/group.h"
#include "thread/thread.h"
#include "weft.h"

/* The layout behind weft_group (weft.h). */
struct weft__group {
    _Atomic uintptr_t head; /* take count | members | WEFT__G_* flags; see above */
    struct weft__waitq q;   /* waiters behind the BUSY one; under LOCK */
};

WEFT__STORAGE(impl, struct weft__group, weft_group, weft_private_)

#define MEMBERS(v) ((v)&WEFT__G_PTR)
/* No member and no flag: a waiter may return. */
#define EMPTY(v) (((v) << (64 - WEFT__G_TAG_SHIFT)) == 0)
/* The take count of v, plus the take about to happen. */
#define TAKEN(v) ((((v) >> WEFT__G_TAG_SHIFT) + 1) << WEFT__G_TAG_SHIFT)

/* The longest list the fast take checks (see above). */
#define FAST_TAKE_MAX 8

static inline struct weft_thread *next_member(struct weft_thread *t)
{
    /* relaxed: the link may be stale; see weft__member_link */
    return (struct weft_thread *)atomic_load_explicit(weft__member_link(t), memory_order_relaxed);
}

/* Joins (and so frees) every member of a list taken out by the caller. */
static void join_members(uintptr_t list)
{
    struct weft_thread *t = (struct weft_thread *)list;
    while (t) {
        struct weft_thread *next = next_member(t); /* before the join frees t */
        int rc = weft_join(t, NULL);
        WEFT_ASSERT(rc == 0); /* only the holder joins a member */
        (void)rc;
        t = next;
    }
}

/* free_finished's slow part: t onwards, t refused by w's cache. */
static WEFT_NOINLINE void free_rest(struct weft__worker *w, struct weft_thread *t)
{
    while (t) {
        struct weft_thread *next = next_member(t);
        atomic_store_explicit(&t->join, WEFT__J_FREED, memory_order_relaxed); /* as below */
        if (weft__stack_cache_push(&w->cache, t))
            weft__san_thread_destroyed(t);
        else
            weft__free_thread(w, t); /* bound, odd-sized, canary or cache full */
        t = next;
    }
}

/* Frees the members of a list taken out by a fast take: all finished.
 * Taking them out made the caller their only owner (nobody else holds a
 * member's handle), so no CAS is needed to claim them as weft_join does: a
 * plain store moves each to FREED, and it goes to the worker's stack cache
 * as weft_join's fast path would put it. No call on the usual path, so
 * that the wait keeps nothing in callee-saved registers. */
WEFT_INLINE void free_finished(struct weft_thread *t)
{
    struct weft__worker *w = weft__tls_worker;
    if (WEFT_UNLIKELY(!w)) { /* a kernel thread: weft_join frees */
        join_members((uintptr_t)t);
        return;
    }
    do {
        struct weft_thread *next = next_member(t); /* before the free: t may be reused */
        WEFT_ASSERT(atomic_load_explicit(&t->join, memory_order_relaxed) == WEFT__J_DONE);
        /* relaxed: only stale handles read FREED, and a member has none */
        atomic_store_explicit(&t->join, WEFT__J_FREED, memory_order_relaxed);
        if (WEFT_UNLIKELY(!weft__stack_cache_push(&w->cache, t))) {
            free_rest(w, t);
            return;
        }
        weft__san_thread_destroyed(t);
        t = next;
    } while (t);
}

/* head once LOCK is clear: a waiter queuing itself holds it for a few
 * instructions, and only it writes head meanwhile. acquire: the links of
 * members pushed (pairs with the release CAS of weft__group_push) and the
 * records queued (with the release store that ends a LOCK). */
static uintptr_t head_unlocked(struct weft__group *g)
{
    uintptr_t v;
    while ((v = atomic_load_explicit(&g->head, memory_order_acquire)) & WEFT__G_LOCK)
        weft__cpu_relax();
    return v;
}

/* Ends the caller's hold (BUSY): puts `list` (members it took out and did
 * not join; 0: none) back in front of any added meanwhile, clears BUSY and
 * wakes the queued waiters, if any. The caller's last access to g. */
static void release(struct weft__group *g, uintptr_t list)
{
    struct weft_thread *tail = NULL;
    for (struct weft_thread *t = (struct weft_thread *)list; t; t = next_member(t))
        tail = t;
    for (;;) {
        uintptr_t v = head_unlocked(g);
        if (tail) /* relaxed: published by the CAS or store below */
            atomic_store_explicit(weft__member_link(tail), MEMBERS(v), memory_order_relaxed);
        uintptr_t next = (list ? list : MEMBERS(v)) | (v & WEFT__G_TAG);
        if (!(v & WEFT__G_WAITERS)) {
            /* release: our joins (the members' effects) and the relinked
             * list happen before whatever sees head without BUSY; pairs
             * with the acquire loads and CASes of wait and destroy. */
            if (atomic_compare_exchange_weak_explicit(&g->head, &v, next, memory_order_release,
                                                      memory_order_relaxed))
                return;
            continue;
        }
        /* acquire: the queued records (pairs with the release store that
         * ends a waiter's LOCK in queue_and_block). */
        if (!atomic_compare_exchange_weak_explicit(&g->head, &v, v | WEFT__G_LOCK,
                                                   memory_order_acquire, memory_order_relaxed))
            continue;
        struct weft__waiter *w = weft__waitq_take_all(&g->q);
        /* release: as the CAS above; only we write head while LOCK is set. */
        atomic_store_explicit(&g->head, next, memory_order_release);
        weft__waiter_wake_list(w);
        return;
    }
}

/* The holder's loop: joins what it took out, then what was added meanwhile,
 * then releases. */
static void hold(struct weft__group *g, uintptr_t list)
{
    for (;;) {
        join_members(list);
        /* A waiter queuing itself (LOCK) must not make us miss members
         * that the ones we joined spawned into the group: head_unlocked
         * waits it out. */
        uintptr_t v;
        do {
            v = head_unlocked(g);
            if (!MEMBERS(v)) {
                release(g, 0);
                return;
            }
        } while (
            !atomic_compare_exchange_weak_explicit(&g->head, &v, (v & WEFT__G_FLAGS) | TAKEN(v),
                                                   memory_order_acquire, memory_order_relaxed));
        list = MEMBERS(v);
    }
}

/* Another waiter holds BUSY: queue a record under LOCK and block until the
 * holder releases. Returns head, freshly read. */
static uintptr_t queue_and_block(struct weft__group *g, uintptr_t v)
{
    WEFT_ASSERT(v & WEFT__G_BUSY);
    if (v & WEFT__G_LOCK)
        return head_unlocked(g);
    /* acquire: the queue as the last LOCK holder left it. */
    if (!atomic_compare_exchange_weak_explicit(&g->head, &v, v | WEFT__G_LOCK, memory_order_acquire,
                                               memory_order_acquire))
        return v;
    struct weft__waiter self;
    weft__waiter_init(&self, WEFT__WAIT_JOIN);
    weft__waitq_push(&g->q, &self);
    /* release: publishes the record to the holder (pairs with the acquire
     * CAS that takes LOCK in release()); only we write head meanwhile. */
    atomic_store_explicit(&g->head, v | WEFT__G_WAITERS, memory_order_release);
    weft__waiter_block(&self, 0, NULL, 0);
    /* acquire: pairs with the holder's release store of head. */
    return atomic_load_explicit(&g->head, memory_order_acquire);
}

int weft_group_init(weft_group *g)
{
    if (!g)
        return EINVAL;
    *g = (weft_group)WEFT_GROUP_INIT;
    return 0;
}

/* weft_group_wait after the fast take: other waiters, flags, members
 * still running, long lists, members added during the wait. */
static WEFT_NOINLINE int wait_slow(struct weft__group *g, uintptr_t v)
{
    for (;;) {
        if (EMPTY(v))
            return 0;
        if (weft__in_task())
            return EPERM; /* a task must not wait (sched.h) */
        if (v & WEFT__G_FLAGS) {
            v = queue_and_block(g, v);
            continue;
        }
        /* acquire: the members' links (pairs with weft__group_push). */
        if (atomic_compare_exchange_weak_explicit(&g->head, &v, WEFT__G_BUSY | TAKEN(v),
                                                  memory_order_acquire, memory_order_acquire)) {
            hold(g, MEMBERS(v));
            return 0;
        }
    }
}

/* 1 if every member of list has finished and there are at most
 * FAST_TAKE_MAX of them. The list may be stale (see above): the caller's
 * CAS with the take count decides whether it was the one in head. */
WEFT_INLINE int all_finished(struct weft_thread *t)
{
    for (int n = 0; n < FAST_TAKE_MAX; n++) {
        /* acquire: pairs with the release of the exit's DONE: the members'
         * effects happen before our return (and, through the take's
         * release, before that of waiters that then find head empty). */
        if (atomic_load_explicit(&t->join, memory_order_acquire) != WEFT__J_DONE)
            return 0;
        t = next_member(t);
        if (!t)
            return 1;
    }
    return 0;
}

int weft_group_wait(weft_group *gp)
{
    if (WEFT_UNLIKELY(!gp))
        return EINVAL;
    struct weft__group *g = impl(gp);
    /* acquire: pairs with the release of whoever emptied head (the
     * members' effects) when it is empty, and with the pushes (the links)
     * otherwise. */
    uintptr_t v = atomic_load_explicit(&g->head, memory_order_acquire);
    struct weft_thread *first = (struct weft_thread *)MEMBERS(v);
    if (WEFT_LIKELY(first && !(v & WEFT__G_FLAGS))) {
        /* Fast take (see above). acq_rel: release passes on the members'
         * effects to waiters that find head empty; acquire as the load
         * above when it fails. */
        if (WEFT_LIKELY(all_finished(first) &&
                        atomic_compare_exchange_strong_explicit(&g->head, &v, TAKEN(v),
                                                                memory_order_acq_rel,
                                                                memory_order_acquire))) {
            free_finished(first);
            return 0;
        }
    } else if (EMPTY(v)) {
        return 0;
    }
    return wait_slow(g, v);
}

int weft_group_destroy(weft_group *gp)
{
    if (!gp)
        return EINVAL;
    struct weft__group *g = impl(gp);
    /* acquire: as in weft_group_wait. */
    uintptr_t v = atomic_load_explicit(&g->head, memory_order_acquire);
    for (;;) {
        if (EMPTY(v))
            return 0;
        if (v & WEFT__G_FLAGS)
            return EBUSY; /* a thread waits */
        if (atomic_compare_exchange_weak_explicit(&g->head, &v, WEFT__G_BUSY | TAKEN(v),
                                                  memory_order_acquire, memory_order_acquire))
            break;
    }
    /* Members nobody waited for: free them if every one has finished, else
     * put them back and report the group busy. */
    uintptr_t list = MEMBERS(v);
    int busy = 0;
    for (struct weft_thread *t = (struct weft_thread *)list; t && !busy; t = next_member(t))
        /* acquire: pairs with the release that marks t DONE (as in weft_join). */
        busy = atomic_load_explicit(&t->join, memory_order_acquire) != WEFT__J_DONE;
    if (!busy) {
        join_members(list);
        list = 0;
    }
    release(g, list);
    if (busy)
        return EBUSY;
    /* relaxed: a snapshot, as for the other objects' destroy; a spawn racing
     * with destroy is the caller's bug. */
    return EMPTY(atomic_load_explicit(&g->head, memory_order_relaxed)) ? 0 : EBUSY;
}

/* The spawn itself is thread/'s (weft__spawn_member); a group is a waiting
 * object on top of it. */
int weft_group_spawn(weft_group *g, weft_fn fn, const void *arg, size_t arg_size,
                     const weft_attr *attr)
{
    if (WEFT_UNLIKELY(!g))
        return EINVAL;
    return weft__spawn_member(&impl(g)->head, fn, arg, arg_size, attr);
}
