/* group.c: weft_group: threads spawned into a group are waited for all at once, by joining them.
 *
 * Design
 * ------
 * A member is an ordinary joinable thread that nobody else can name. The
 * spawn links it into the group's list (thread/group.h: one word, head, a
 * Treiber stack through each member's link word, flags in the low bits)
 * before it can run. A waiter takes the whole list out with one CAS, which
 * also sets BUSY, joins each member, and repeats while members were added
 * meanwhile (members may spawn into their own group; a member is linked in
 * before the member that spawned it can finish, so once the waiter has
 * joined that one, the newcomer is in the list). It then clears BUSY with
 * one more CAS. In the common case of fork-join code the members have
 * finished by then and each join is a load and a push to the stack cache,
 * so a group costs what the joins it replaces cost plus the list's three
 * CASes (push, take, release) and no allocation.
 *
 * Rejected: a counter of live members with detached members that decrement
 * it at exit and wake the waiters. Every member then takes the detached
 * exit (the slow exit path, a failed CAS and an exchange on the join word,
 * the free from the resumed side) instead of the one-CAS exit of a thread
 * whose joiner comes later, plus two RMWs on the counter, and the last
 * member must touch the group after the count that lets a waiter return
 * and destroy it.
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
 * Lifetime: whoever clears the last flag does it with its last access to
 * the group (a CAS or store that leaves head 0 or a bare list), so a waiter
 * that then sees head == 0 may return and the caller destroy the group.
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
    _Atomic uintptr_t head; /* members | WEFT__G_* flags; see above */
    struct weft__waitq q;   /* waiters behind the BUSY one; under LOCK */
};

static inline struct weft__group *weft__group_of(weft_group *g)
{
    return (struct weft__group *)(void *)g->weft_private_;
}

static_assert(sizeof(struct weft__group) <= sizeof(weft_group), "weft_group storage too small");
static_assert(alignof(struct weft__group) <= alignof(weft_group), "weft_group storage misaligned");

#define MEMBERS(v) ((v) & ~WEFT__G_FLAGS)

#define impl weft__group_of

static inline struct weft_thread *next_member(struct weft_thread *t)
{
    return (struct weft_thread *)*weft__member_link(t);
}

/* Frees every member of a list taken out by the caller. A finished member
 * (the usual case in fork-join code) is freed here without weft_join's CAS:
 * taking it out of the list made the caller its only owner, since nobody
 * else holds its handle, so a plain store moves it to FREED. One still
 * running is joined. */
WEFT_INLINE void join_members(uintptr_t list)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *t = (struct weft_thread *)list;
    while (t) {
        struct weft_thread *next = next_member(t); /* before the free: t may be reused */
        /* acquire: pairs with the release of the exit's DONE (as in
         * weft_join): the member's effects happen before our return. */
        if (WEFT_LIKELY(w && w->current &&
                        atomic_load_explicit(&t->join, memory_order_acquire) == WEFT__J_DONE)) {
            /* relaxed: only stale handles read FREED, and a member has none */
            atomic_store_explicit(&t->join, WEFT__J_FREED, memory_order_relaxed);
            if (WEFT_LIKELY(weft__stack_cache_push(&w->cache, t)))
                weft__san_thread_destroyed(t);
            else
                weft__free_thread(w, t); /* bound, odd-sized, canary or cache full */
        } else {
            int rc = weft_join(t, NULL);
            WEFT_ASSERT(rc == 0); /* only the holder joins a member */
            (void)rc;
        }
        t = next;
    }
}

/* Ends the caller's hold (BUSY): puts `list` (members it took out and did
 * not join; 0: none) back in front of any added meanwhile, clears BUSY and
 * wakes the queued waiters, if any. The caller's last access to g. */
static void release(struct weft__group *g, uintptr_t list)
{
    struct weft_thread *tail = NULL;
    for (struct weft_thread *t = (struct weft_thread *)list; t; t = next_member(t))
        tail = t;
    uintptr_t v = atomic_load_explicit(&g->head, memory_order_relaxed);
    for (;;) {
        if (v & WEFT__G_LOCK) { /* a waiter is queuing itself */
            weft__cpu_relax();
            v = atomic_load_explicit(&g->head, memory_order_relaxed);
            continue;
        }
        if (tail)
            *weft__member_link(tail) = MEMBERS(v);
        uintptr_t next = list ? list : MEMBERS(v);
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
        while (w) {
            struct weft__waiter *nw = w->next; /* before the wake: w may vanish */
            weft__waiter_wake(w);
            w = nw;
        }
        return;
    }
}

/* The holder's loop: joins what it took out, then what was added meanwhile,
 * then releases. */
static void hold(struct weft__group *g, uintptr_t list)
{
    for (;;) {
        join_members(list);
        /* acquire: the links of members added meanwhile (pairs with the
         * release CAS of weft__group_push). */
        uintptr_t v = atomic_load_explicit(&g->head, memory_order_acquire);
        for (;;) {
            /* A waiter queuing itself (LOCK) must not make us miss members
             * that the ones we joined spawned into the group. */
            if (v & WEFT__G_LOCK) {
                weft__cpu_relax();
                v = atomic_load_explicit(&g->head, memory_order_acquire);
                continue;
            }
            if (!MEMBERS(v)) {
                release(g, 0);
                return;
            }
            if (atomic_compare_exchange_weak_explicit(&g->head, &v, v & WEFT__G_FLAGS,
                                                      memory_order_acquire, memory_order_acquire))
                break;
        }
        list = MEMBERS(v);
    }
}

/* Another waiter holds BUSY: queue a record under LOCK and block until the
 * holder releases. Returns head, freshly read. */
static uintptr_t queue_and_block(struct weft__group *g, uintptr_t v)
{
    WEFT_ASSERT(v & WEFT__G_BUSY);
    if (v & WEFT__G_LOCK) {
        weft__cpu_relax();
        return atomic_load_explicit(&g->head, memory_order_acquire);
    }
    /* acquire: the queue as the last LOCK holder left it. */
    if (!atomic_compare_exchange_weak_explicit(&g->head, &v, v | WEFT__G_LOCK, memory_order_acquire,
                                               memory_order_acquire))
        return v;
    struct weft__waiter self;
    weft__waiter_init(&self);
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

/* weft_group_wait after the fast path: other waiters, flags, members added
 * during the wait. */
static WEFT_NOINLINE int wait_slow(struct weft__group *g, uintptr_t v)
{
    for (;;) {
        if (v == 0)
            return 0;
        if (v & WEFT__G_FLAGS) {
            v = queue_and_block(g, v);
            continue;
        }
        /* acquire: the members' links (pairs with weft__group_push). */
        if (atomic_compare_exchange_weak_explicit(&g->head, &v, WEFT__G_BUSY, memory_order_acquire,
                                                  memory_order_acquire)) {
            hold(g, v);
            return 0;
        }
    }
}

int weft_group_wait(weft_group *gp)
{
    if (WEFT_UNLIKELY(!gp))
        return EINVAL;
    struct weft__group *g = impl(gp);
    /* acquire: pairs with the release of the last holder (the members'
     * effects) when head is 0, and of the pushes otherwise. */
    uintptr_t v = atomic_load_explicit(&g->head, memory_order_acquire);
    if (v == 0)
        return 0;
    /* Fast path: nobody else waits; take the members out (BUSY), join
     * them, and release if nothing came meanwhile. acquire: the members'
     * links (pairs with weft__group_push). */
    if (WEFT_UNLIKELY((v & WEFT__G_FLAGS) ||
                      !atomic_compare_exchange_strong_explicit(&g->head, &v, WEFT__G_BUSY,
                                                               memory_order_acquire,
                                                               memory_order_acquire)))
        return wait_slow(g, v);
    join_members(v);
    uintptr_t busy = WEFT__G_BUSY;
    /* release: as in release(). */
    if (WEFT_UNLIKELY(!atomic_compare_exchange_strong_explicit(&g->head, &busy, 0, memory_order_release,
                                                               memory_order_relaxed)))
        hold(g, 0);
    return 0;
}

int weft_group_destroy(weft_group *gp)
{
    if (!gp)
        return EINVAL;
    struct weft__group *g = impl(gp);
    /* acquire: as in weft_group_wait. */
    uintptr_t v = atomic_load_explicit(&g->head, memory_order_acquire);
    for (;;) {
        if (v == 0)
            return 0;
        if (v & WEFT__G_FLAGS)
            return EBUSY; /* a thread waits */
        if (atomic_compare_exchange_weak_explicit(&g->head, &v, WEFT__G_BUSY, memory_order_acquire,
                                                  memory_order_acquire))
            break;
    }
    /* Members nobody waited for: free them if every one has finished, else
     * put them back and report the group busy. */
    int busy = 0;
    for (struct weft_thread *t = (struct weft_thread *)v; t && !busy; t = next_member(t))
        /* acquire: pairs with the release that marks t DONE (as in weft_join). */
        busy = atomic_load_explicit(&t->join, memory_order_acquire) != WEFT__J_DONE;
    if (!busy) {
        join_members(v);
        v = 0;
    }
    release(g, v);
    if (busy)
        return EBUSY;
    /* relaxed: a snapshot, as for the other objects' destroy; a spawn racing
     * with destroy is the caller's bug. */
    return atomic_load_explicit(&g->head, memory_order_relaxed) ? EBUSY : 0;
}

/* The spawn itself is thread/'s (weft__spawn_member); a group is a waiting
 * object on top of it. */
int weft_group_spawn(weft_group *g, weft_fn fn, const void *arg, size_t arg_size,
                     const weft_attr *attr)
{
    if (WEFT_UNLIKELY(!g))
        return EINVAL;
    return weft__spawn_member(&weft__group_of(g)->head, fn, arg, arg_size, attr);
}
