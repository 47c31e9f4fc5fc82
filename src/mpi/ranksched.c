/* ranksched.c: the weft_dist worker: spawn, join, the deque, steals and the
 * scheduler loop of one rank (the design block is in mpi/dist.h).
 *
 * The deque is Cilk-5's THE protocol over shared memory: the owner pushes
 * and pops at top with plain stores and a fence, a thief takes the entry
 * at base under the deque's lock, and an owner that meets a thief at the
 * last entry decides under the same lock. The lock stays held while the
 * thief copies the frames, so an owner whose pop fails cannot reuse U
 * while they are being read. Chase-Lev (sched/deque.h) was rejected here:
 * its lock-free steal would let the owner return into, or spawn over,
 * frames a thief is still copying.
 *
 * Context switches are weft's (arch/context.h), the plain ones that never
 * call the single-process scheduler's resumed-side hook, in every build:
 * none of that scheduler is involved. In ASan builds the fiber annotations
 * are made here instead (ThreadSanitizer builds are refused at
 * weft_dist_init: dist.c).
 *
 * The owner's own pops and the idle scheduler's "is my deque empty" are
 * decided under the lock whenever base seems to have reached top: a thief
 * that tries the last entry raises base for a moment before it backs off,
 * and taking that for an empty deque would let the scheduler copy stolen
 * frames over live ones.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "arch/context.h"
#include "base/rand.h"
#include "mpi/dist.h"
#include "mpi/state.h"

#define REC_SHIFT   40 /* thread id = (rank + 1) << REC_SHIFT | counter */
#define SPIN_PAUSES 32 /* pause instructions between two failed steal rounds */
/* Failed steal rounds between two sched_yield calls, when the node has more
 * ranks than CPUs (a spinning thief would hold a CPU a working rank needs). */
#define ROUNDS_YIELD     8
#define FORCE_WAIT_NS    200000   /* forced mode: how long a continuation waits for a thief */
#define START_WAIT_NS    20000000 /* how long the root waits for the other ranks' loops */
#define LOCK_SPINS_YIELD 1024     /* spins on a held deque lock between two sched_yield calls */
#define IDLE_ASK_NS      500000   /* rma: how long an answer of others_idle stands */

/* Forces the compiler to re-read memory (process-local state) after a
 * call that may have resumed on another rank. */
#define MOVED() __asm__ volatile("" ::: "memory")

static inline char *stack_pointer(void)
{
    char *sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    return sp;
}

/* ---- ASan: which stack runs, and no stale poison on U ----------------------
 * Frames are abandoned on U (a finished child's, a thread's that left for
 * the scheduler) and copied in from other processes, so the shadow of U
 * says nothing true about frames resumed there: it is cleared whenever the
 * scheduler resumes a thread, and below the parent when a child returns
 * into it. Copies of frames read redzones: they are not instrumented. */
#if defined(WEFT_SANITIZE_ADDRESS)
#include <sanitizer/asan_interface.h>

static void san_to_stack(const void *lo, size_t size)
{
    weft__dist.san_switching = 1;
    __sanitizer_start_switch_fiber(NULL, lo, size);
}

/* On U, after a resume that may have come from the scheduler. */
static void san_arrived(void)
{
    struct weft__dist *d = &weft__dist;
    if (!d->san_switching)
        return;
    d->san_switching = 0;
    const void *lo;
    size_t size;
    __sanitizer_finish_switch_fiber(NULL, &lo, &size);
    if (!d->san_native_lo) { /* the scheduler's stack: the first one left for U */
        d->san_native_lo = lo;
        d->san_native_size = size;
    }
}

/* Leaving U: the frames from here up may be left behind poisoned. */
static void san_to_scheduler(void)
{
    struct weft__dist *d = &weft__dist;
    char *sp = stack_pointer();
    if (!d->san_dirty || sp < d->san_dirty)
        d->san_dirty = sp;
    san_to_stack(d->san_native_lo, d->san_native_size);
}

/* Resuming sp on U: clears what was left behind and what was copied in. */
static void san_to_u(char *sp)
{
    struct weft__dist *d = &weft__dist;
    char *lo = d->san_dirty ? d->san_dirty : d->stack_lo; /* unknown at first: all */
    if (sp - WEFT__DIST_RED < lo)
        lo = sp - WEFT__DIST_RED;
    __asan_unpoison_memory_region(lo, (size_t)(d->stack_hi - lo));
    d->san_dirty = d->stack_hi;
    san_to_stack(d->stack_lo, (size_t)(d->stack_hi - d->stack_lo));
}

static void san_unpoison_between(const char *lo, const char *hi)
{
    __asan_unpoison_memory_region(lo, (size_t)(hi - lo));
}

__attribute__((no_sanitize_address)) static void copy_raw(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}
#else
static inline void san_arrived(void)
{
}
static inline void san_to_scheduler(void)
{
}
static inline void san_to_u(char *sp)
{
    (void)sp;
}
static inline void san_unpoison_between(const char *lo, const char *hi)
{
    (void)lo;
    (void)hi;
}
static inline void copy_raw(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

/* ---- pools ---------------------------------------------------------------- */

void weft__dist_reset(struct weft__dctl *c)
{
    atomic_store_explicit(&c->top, 0, memory_order_relaxed);
    atomic_store_explicit(&c->base, 0, memory_order_relaxed);
    atomic_store_explicit(&c->lock, 0, memory_order_relaxed);
    c->rec_bump = c->rec_free = 0;
    c->evac_bump = c->evac_free = 0;
    atomic_store_explicit(&c->rec_remote, 0, memory_order_relaxed);
    atomic_store_explicit(&c->evac_remote, 0, memory_order_relaxed);
    c->result = NULL;
}

/* 1 when p, in some rank's slot, is plain memory here. */
static inline int here(const void *p)
{
    return weft__dist.all_mapped || weft__dist_owner(p) == weft__dist.rank;
}

/* The owner's records: its free list, then untouched ones; NULL when
 * both are used up (then rec_grab). No call: the spawn path keeps its
 * arguments in scratch registers. */
static inline struct weft__drec *rec_alloc(struct weft__dctl *c)
{
    uint32_t i = c->rec_free;
    if (WEFT_LIKELY(i)) {
        c->rec_free = c->recs[i - 1].next_free;
        return &c->recs[i - 1];
    }
    if (c->rec_bump < WEFT__DIST_NREC)
        return &c->recs[c->rec_bump++];
    return NULL;
}

/* Makes the records other ranks freed the owner's free list; 0: none. */
static WEFT_NOINLINE int rec_grab(struct weft__dctl *c)
{
    uint32_t i = weft__dist.xp->free_grab(&c->rec_remote);
    c->rec_free = i;
    return i != 0;
}

/* A free by a rank other than r's owner (index i in c). */
static WEFT_NOINLINE void rec_free_remote(struct weft__drec *r, struct weft__dctl *c, uint32_t i)
{
    uint32_t freed = WEFT__DREC_FREED;
    weft__dist.xp->put(&r->state, &freed, sizeof freed);
    weft__dist.xp->free_push(&c->rec_remote, &r->next_free, i);
}

static inline void rec_free(struct weft__drec *r)
{
    struct weft__dctl *c = weft__dist_ctl(weft__dist_owner(r));
    uint32_t i = (uint32_t)(r - c->recs) + 1;
    if (WEFT_UNLIKELY(c != weft__dist.me)) {
        rec_free_remote(r, c, i);
        return;
    }
    atomic_store_explicit(&r->state, WEFT__DREC_FREED, memory_order_relaxed);
    r->next_free = c->rec_free;
    c->rec_free = i;
}

static char *evac_alloc(struct weft__dctl *c)
{
    uint32_t i = c->evac_free;
    if (i) {
        c->evac_free = c->evac_next[i - 1];
        return c->evac[i - 1];
    }
    if (c->evac_bump < WEFT__DIST_NEVAC)
        return c->evac[c->evac_bump++];
    i = weft__dist.xp->free_grab(&c->evac_remote);
    if (!i)
        return NULL;
    c->evac_free = c->evac_next[i - 1];
    return c->evac[i - 1];
}

static void evac_free(char *p)
{
    struct weft__dctl *c = weft__dist_ctl(weft__dist_owner(p));
    uint32_t i = (uint32_t)((p - c->evac[0]) / WEFT__DIST_EVAC_SIZE) + 1;
    if (c == weft__dist.me) {
        c->evac_next[i - 1] = c->evac_free;
        c->evac_free = i;
        return;
    }
    weft__dist.xp->free_push(&c->evac_remote, &c->evac_next[i - 1], i);
}

int weft__dist_is_rec(const weft_thread *t)
{
    struct weft__dist *d = &weft__dist;
    uintptr_t off = (uintptr_t)t - (uintptr_t)d->slots;
    if (!d->slots || off >= (uintptr_t)d->size << WEFT__DIST_SLOT_SHIFT)
        return 0;
    /* unsigned: below the records wraps around to a huge offset */
    uintptr_t in = (off & (WEFT__DIST_SLOT_SIZE - 1)) -
                   (WEFT__DIST_STACK_SIZE + offsetof(struct weft__dctl, recs));
    return in < sizeof(struct weft__drec) * WEFT__DIST_NREC && in % sizeof(struct weft__drec) == 0;
}

/* Records stay reachable until weft_dist_finalize: under rma, another
 * rank's through its window. */
uint64_t weft__dist_rec_id(const weft_thread *t)
{
    const struct weft__drec *r = (const struct weft__drec *)t;
    uint64_t id;
    if (here(r))
        return r->id;
    weft__dist.xp->get(&id, &r->id, sizeof id);
    return id;
}

/* The top of a thread's frames, wherever its record is. */
static char *frame_end_of(const struct weft__drec *r)
{
    char *end;
    if (here(r))
        return r->frame_end;
    weft__dist.xp->get(&end, &r->frame_end, sizeof end);
    return end;
}

/* ---- the deque ------------------------------------------------------------ */

static void lock_deque(struct weft__dctl *c)
{
    uint32_t z = 0;
    unsigned spins = 0;
    /* acquire: pairs with the release in unlock_deque (a thief's copy is done) */
    while (!atomic_compare_exchange_weak_explicit(&c->lock, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        z = 0;
        /* the holder is a process the kernel may have preempted mid-copy */
        if (++spins % LOCK_SPINS_YIELD == 0)
            sched_yield();
        else
            __builtin_ia32_pause();
    }
}

static void unlock_deque(struct weft__dctl *c)
{
    /* release: pairs with the acquire in lock_deque and steal's CAS */
    atomic_store_explicit(&c->lock, 0, memory_order_release);
}

static void push(struct weft__dctl *c, char *sp, struct weft__drec *rec)
{
    int64_t t = atomic_load_explicit(&c->top, memory_order_relaxed);
    WEFT_ASSERT(t - atomic_load_explicit(&c->base, memory_order_relaxed) <
                (int64_t)WEFT__DIST_DEQUE_CAP);
    struct weft__dentry *e = &c->entries[t & (WEFT__DIST_DEQUE_CAP - 1)];
    e->sp = sp;
    e->rec = rec;
    /* release: publishes the entry (and the frames); pairs with the acquire
     * load of top in steal */
    atomic_store_explicit(&c->top, t + 1, memory_order_release);
}

/* Takes back the newest entry; 0 when a thief took it (or none is left). */
static int pop(struct weft__dctl *c, struct weft__dentry *out)
{
    int64_t t = atomic_load_explicit(&c->top, memory_order_relaxed) - 1;
    atomic_store_explicit(&c->top, t, memory_order_relaxed);
    /* seq_cst: Dekker with the thief's base store and fence (steal) */
    atomic_thread_fence(memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&c->base, memory_order_relaxed);
    if (WEFT_LIKELY(b <= t)) {
        *out = c->entries[t & (WEFT__DIST_DEQUE_CAP - 1)];
        return 1;
    }
    /* A thief is at this entry, or took it: undo and decide under the
     * lock, which also waits until a thief's copy is over. */
    atomic_store_explicit(&c->top, t + 1, memory_order_relaxed);
    const struct weft__dist_xport *xp = weft__dist.xp;
    xp->lock(weft__dist.rank);
    b = atomic_load_explicit(&c->base, memory_order_relaxed);
    int ok = b <= t;
    if (ok) {
        atomic_store_explicit(&c->top, t, memory_order_relaxed);
        *out = c->entries[t & (WEFT__DIST_DEQUE_CAP - 1)];
    }
    xp->unlock(weft__dist.rank);
    return ok;
}

/* A hint, for thieves: a thief that tries the last entry and backs off
 * raises base for a moment. */
static int deque_empty(struct weft__dctl *c)
{
    return atomic_load_explicit(&c->base, memory_order_relaxed) >=
           atomic_load_explicit(&c->top, memory_order_acquire);
}

/* The owner's answer, which may decide whether U is free: a base that
 * looks past top may be a thief's passing increment (its back-off restores
 * it), so that case is decided under the lock, where base holds still. */
static int own_deque_empty(struct weft__dctl *c)
{
    if (!deque_empty(c))
        return 0;
    weft__dist.xp->lock(weft__dist.rank);
    int empty = atomic_load_explicit(&c->base, memory_order_relaxed) >=
                atomic_load_explicit(&c->top, memory_order_relaxed);
    weft__dist.xp->unlock(weft__dist.rank);
    return empty;
}

/* ---- the shm transport: every rank's slot is plain memory here ------------- */

static int shm_nonempty(int v)
{
    return !deque_empty(weft__dist_ctl(v));
}

static int shm_trylock(int v)
{
    uint32_t z = 0;
    /* acquire: pairs with the release in unlock_deque */
    return atomic_compare_exchange_strong_explicit(&weft__dist_ctl(v)->lock, &z, 1,
                                                   memory_order_acquire, memory_order_relaxed);
}

static void shm_lock(int r)
{
    lock_deque(weft__dist_ctl(r));
}

static void shm_unlock(int r)
{
    unlock_deque(weft__dist_ctl(r));
}

static int shm_take(int v, struct weft__dentry *out)
{
    struct weft__dctl *vc = weft__dist_ctl(v);
    int64_t b = atomic_load_explicit(&vc->base, memory_order_relaxed);
    atomic_store_explicit(&vc->base, b + 1, memory_order_relaxed);
    /* seq_cst: Dekker with the owner's top store and fence (pop) */
    atomic_thread_fence(memory_order_seq_cst);
    /* acquire: pairs with the release store of top in push */
    if (b + 1 > atomic_load_explicit(&vc->top, memory_order_acquire)) {
        atomic_store_explicit(&vc->base, b, memory_order_relaxed);
        return 0;
    }
    *out = vc->entries[b & (WEFT__DIST_DEQUE_CAP - 1)];
    return 1;
}

static void shm_copy_frames(int v, char *lo, size_t n)
{
    struct weft__dist *d = &weft__dist;
    const char *view = d->slots + ((size_t)v << WEFT__DIST_SLOT_SHIFT);
    copy_raw(lo, view + (lo - d->stack_lo), n);
}

static void shm_get(void *dst, const void *src, size_t n)
{
    copy_raw(dst, src, n);
}

static void shm_put(void *dst, const void *src, size_t n)
{
    copy_raw(dst, src, n);
}

static uint32_t shm_flag_add(_Atomic uint32_t *flag)
{
    /* acq_rel: release publishes what the caller wrote before (a result,
     * susp); acquire pairs with the other party's add */
    return atomic_fetch_add_explicit(flag, 1, memory_order_acq_rel);
}

static uint32_t shm_flag_load(_Atomic uint32_t *flag)
{
    /* acquire: pairs with the other party's add (acq_rel) */
    return atomic_load_explicit(flag, memory_order_acquire);
}

static void shm_free_push(_Atomic uint32_t *head, uint32_t *link, uint32_t i)
{
    uint32_t h = atomic_load_explicit(head, memory_order_relaxed);
    do
        *link = h;
    /* release: the link before the push; pairs with the owner's exchange */
    while (!atomic_compare_exchange_weak_explicit(head, &h, i, memory_order_release,
                                                  memory_order_relaxed));
}

static uint32_t shm_free_grab(_Atomic uint32_t *head)
{
    /* acquire: pairs with the release CAS of remote frees (their links) */
    return atomic_exchange_explicit(head, 0, memory_order_acquire);
}

static void shm_end_run(void *result)
{
    struct weft__dist *d = &weft__dist;
    weft__dist_ctl(0)->result = result;
    for (int r = 0; r < d->size; r++)
        /* release: the result; pairs with the acquire in the loop */
        atomic_store_explicit(&weft__dist_ctl(r)->exit_gen, d->gen, memory_order_release);
}

static void shm_exit_seen(void)
{
}

const struct weft__dist_xport weft__dist_shm =
    WEFT__DIST_XPORT(shm, NULL /* no MPI during a run */);

/* A rank other than ours (there are two or more). */
static int random_other(struct weft__dist *d)
{
    int v = (int)(weft__rand_next(&d->rng) % (uint64_t)(d->size - 1));
    return v >= d->rank ? v + 1 : v;
}

/* The rank a thief tries next. Node first: when the job spans nodes, it
 * tries WEFT__DIST_NEAR_TRIES ranks of its own node (the MPI reaches them
 * through shared memory, a fraction of a round trip between nodes) for
 * each one anywhere else, so that work still crosses nodes when a whole
 * node runs dry. Uniform over the others on one node (d->near is NULL).
 * Rejected: only the node until it is dry (a node that ran out would need
 * its ranks to agree that it has), and latency-weighted choice (no
 * latency to weight by without measuring it per pair). */
static int victim(struct weft__dist *d)
{
    if (d->near_left > 0) {
        d->near_left--;
        d->me->nnear++;
        return d->near[weft__rand_next(&d->rng) % (uint64_t)d->nnear];
    }
    d->near_left = d->nnear ? WEFT__DIST_NEAR_TRIES : 0;
    return random_other(d);
}

/* Steals the oldest continuation of another rank (victim) into our U (the
 * scheduler runs on its native stack and U is free: see dist.h). Returns
 * the saved sp to resume, with d->cur set, or NULL. */
static char *steal(struct weft__dist *d)
{
    if (d->size < 2)
        return NULL;
    int v = victim(d);
    const struct weft__dist_xport *xp = d->xp;
    if (!xp->nonempty(v) || !xp->trylock(v)) {
        d->me->nfails++;
        return NULL;
    }
    uint64_t t0 = weft__now_ns();
    struct weft__dentry e;
    if (!xp->take(v, &e)) {
        xp->unlock(v);
        d->me->nfails++;
        return NULL;
    }
    char *lo = e.sp - WEFT__DIST_RED;
    xp->copy_frames(v, lo, (size_t)(frame_end_of(e.rec) - lo));
    xp->unlock(v);
    d->me->nsteals++;
    d->me->steal_ns += weft__now_ns() - t0;
    d->cur = e.rec;
    return e.sp;
}

/* ---- threads ---------------------------------------------------------------- */

static int random_other(struct weft__dist *d);

/* Some other rank looks for work (a hint: relaxed). Under rma, where each
 * look is a round trip that a busy rank answers late, one rank picked at
 * random answers, and its answer stands for IDLE_ASK_NS. */
static int others_idle(struct weft__dist *d)
{
    if (!d->all_mapped) {
        uint64_t now = weft__now_ns();
        if (d->size > 1 && now - d->idle_asked_ns >= IDLE_ASK_NS) {
            uint32_t v;
            d->xp->get(&v, &weft__dist_ctl(random_other(d))->idle, sizeof v);
            d->idle_seen = v != 0;
            d->idle_asked_ns = now;
        }
        return d->idle_seen;
    }
    for (int r = 0; r < d->size; r++)
        if (r != d->rank && atomic_load_explicit(&weft__dist_ctl(r)->idle, memory_order_relaxed))
            return 1;
    return 0;
}

/* Leaves the running thread for the scheduler context for good. */
static _Noreturn void to_scheduler(int req, struct weft__drec *rec)
{
    struct weft__dist *d = &weft__dist;
    d->cur = NULL;
    d->req = req;
    d->req_rec = rec;
    san_to_scheduler();
    weft__ctx_jump_plain(d->sched_sp);
}

/* The end of a spawned thread c with result r, on whichever rank it is now. */
static WEFT_NOINLINE _Noreturn void finish(struct weft__drec *c, void *r)
{
    struct weft__dist *d = &weft__dist;
    struct weft__dentry e;
    if (WEFT_LIKELY(!d->force_steal) && pop(d->me, &e)) {
        /* The parent is still ours, right above: it joins c here. c is
         * ours too: the entry was pushed here when c started, and c never
         * left (a thread that leaves lets its parent's entry go first).
         * release: the result, for a joiner elsewhere after the parent
         * moved (pairs with the acquire in weft__dist_join). */
        c->result = r;
        atomic_store_explicit(&c->state, WEFT__DREC_DONE, memory_order_release);
        d->cur = e.rec;
        san_unpoison_between(stack_pointer(), e.sp); /* our frames, left for good */
        weft__ctx_jump_plain(e.sp);
    }
    /* The parent was stolen (or, forced, left for the scheduler): race its
     * join, on c wherever it is. The add publishes the result; its acquire
     * pairs with the joiner's add, which published c->susp. */
    d->xp->put(&c->result, &r, sizeof r);
    uint32_t old = d->xp->flag_add(&c->flag);
    to_scheduler(old == 0 ? WEFT__DREQ_NONE : WEFT__DREQ_RESUME, c);
}

static void child_start(void *arg, void **save_sp)
{
    struct weft__drec *c = arg;
    struct weft__dist *d = &weft__dist;
    if (c->copy_size) { /* above our sp, below the parent's context: moves with us */
        c->arg = c->frame_end - ((c->copy_size + 15) & ~(size_t)15);
        copy_raw(c->arg, c->copy, c->copy_size);
    }
    push(d->me, *save_sp, d->spawn_parent);
    d->cur = c;
    void *r = c->fn(c->arg);
    MOVED();
    finish(c, r);
}

/* Every hook_mask + 1 spawns, when polling or oversubscribed: lets the MPI
 * serve other ranks' operations on our window (a transport that needs the
 * target's CPU), and, with more ranks than CPUs, lets an idle rank that
 * shares our CPU run now and then, or a short run would end before any
 * thief was ever scheduled. */
static WEFT_NOINLINE void spawn_hook(struct weft__dist *d)
{
    if ((++d->me->nspawns & d->hook_mask) != 0)
        return;
    if (d->xp->poll)
        d->xp->poll();
    if (d->oversubscribed && (d->me->nspawns & (WEFT__DIST_SHARE_EVERY - 1)) == 0 &&
        (!d->all_mapped || others_idle(d))) /* rma: asking the others costs more */
        sched_yield();
}

/* Every record is used or freed by other ranks: takes those back and
 * spawns again (a tail call, so that the spawn path keeps no argument
 * across a call). */
static WEFT_NOINLINE int spawn_refill(weft_thread **out, weft_fn fn, const void *arg,
                                      size_t arg_size, const weft_attr *attr)
{
    if (!rec_grab(weft__dist.me))
        return EAGAIN;
    return weft__dist_spawn(out, fn, arg, arg_size, attr);
}

int weft__dist_spawn(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                     const weft_attr *attr)
{
    if (attr && (attr->detached || attr->bound))
        return ENOTSUP;
    if (!fn || !out || (arg_size && (!arg || arg_size > WEFT__DIST_ARG_MAX)) ||
        (attr && (attr->priority < WEFT_PRIO_BACKGROUND || attr->priority > WEFT_PRIO_URGENT)))
        return EINVAL;
    struct weft__dist *d = &weft__dist;
    char *top = (char *)((uintptr_t)(stack_pointer() - WEFT__DIST_SPAWN_GAP) & ~(uintptr_t)63);
    size_t copy = (arg_size + 15) & ~(size_t)15;
    if (top - copy - d->stack_lo < (ptrdiff_t)WEFT__DIST_STACK_SLACK)
        return EAGAIN; /* U is full: this chain of frames is too deep */
    struct weft__drec *c = rec_alloc(d->me);
    if (WEFT_UNLIKELY(!c))
        return spawn_refill(out, fn, arg, arg_size, attr);
    c->id = (uint64_t)(d->rank + 1) << REC_SHIFT | ++d->id_next;
    c->fn = fn;
    c->arg = (void *)arg;
    c->copy = arg;
    c->copy_size = arg_size;
    c->frame_end = top;
    atomic_store_explicit(&c->state, WEFT__DREC_LIVE, memory_order_relaxed);
    atomic_store_explicit(&c->flag, 0, memory_order_relaxed);
    if (WEFT_UNLIKELY(d->spawn_hook))
        spawn_hook(d); /* counts the spawn too */
    else
        d->me->nspawns++;
    *out = (weft_thread *)c;
    d->spawn_parent = d->cur;
    weft__ctx_spawn(&d->spawn_sp, top - copy, child_start, c);
    MOVED();
    san_arrived();
    return 0;
}

/* A join that is not the common case: c is another rank's under rma, or
 * has not finished, or is freed (state s when c is here). */
static WEFT_NOINLINE int join_slow(struct weft__drec *c, uint32_t s, void **result)
{
    struct weft__dist *d = &weft__dist;
    if (!here(c))
        d->xp->get(&s, &c->state, sizeof s);
    if (s == WEFT__DREC_FREED)
        return EINVAL;
    /* flag_load's acquire pairs with the finisher's add (its result) */
    if (s != WEFT__DREC_DONE && d->xp->flag_load(&c->flag) == 0) {
        d->req = WEFT__DREQ_SUSPEND;
        d->req_rec = c;
        d->req_self = d->cur;
        d->cur = NULL;
        san_to_scheduler();
        weft__ctx_switch_plain(&d->req_sp, d->sched_sp);
        MOVED();
        san_arrived();
    }
    if (result) {
        if (here(c))
            *result = c->result;
        else
            d->xp->get(result, &c->result, sizeof *result);
    }
    rec_free(c);
    return 0;
}

int weft__dist_join(weft_thread *t, void **result)
{
    struct weft__dist *d = &weft__dist;
    struct weft__drec *c = (struct weft__drec *)t;
    if (!t || !weft__dist_is_rec(t))
        return EINVAL;
    if (c == d->cur)
        return EDEADLK;
    uint32_t s = WEFT__DREC_LIVE;
    /* acquire: pairs with the release of DONE in finish */
    if (WEFT_LIKELY(here(c)) &&
        WEFT_LIKELY((s = atomic_load_explicit(&c->state, memory_order_acquire)) ==
                    WEFT__DREC_DONE)) {
        if (result)
            *result = c->result;
        rec_free(c);
        return 0;
    }
    return join_slow(c, s, result);
}

_Noreturn void weft__dist_exit(void *result)
{
    struct weft__dist *d = &weft__dist;
    struct weft__drec *c = d->cur;
    if (frame_end_of(c) == d->stack_hi) { /* the root */
        d->xp->end_run(result);
        to_scheduler(WEFT__DREQ_NONE, NULL);
    }
    finish(c, result);
}

static void root_start(void *arg, void **save_sp)
{
    struct weft__drec *c = arg;
    (void)save_sp;
    san_arrived();
    weft__dist.cur = c;
    void *r = c->fn(c->arg);
    MOVED();
    weft__dist_exit(r);
}

/* Waits, for at most START_WAIT_NS, until every rank is in its scheduler
 * loop: they leave the run's opening collective at different times, and a
 * short root could otherwise end before any of them looked for work. */
static void await_thieves(struct weft__dist *d)
{
    uint64_t t0 = weft__now_ns();
    for (int r = 1; r < d->size; r++) {
        _Atomic uint64_t *lg = &weft__dist_ctl(r)->loop_gen;
        for (;;) {
            uint64_t g;
            if (here(lg))
                g = atomic_load_explicit(lg, memory_order_relaxed);
            else
                d->xp->get(&g, lg, sizeof g);
            if (g == d->gen || weft__now_ns() - t0 >= START_WAIT_NS)
                break;
            sched_yield();
        }
    }
}

int weft__dist_start_root(weft_fn fn, void *arg)
{
    struct weft__dist *d = &weft__dist;
    await_thieves(d);
    struct weft__drec *c = rec_alloc(d->me);
    if (!c && rec_grab(d->me))
        c = rec_alloc(d->me);
    if (!c)
        return EAGAIN;
    c->id = (uint64_t)(d->rank + 1) << REC_SHIFT | ++d->id_next;
    c->fn = fn;
    c->arg = arg;
    c->copy_size = 0;
    c->frame_end = d->stack_hi;
    atomic_store_explicit(&c->state, WEFT__DREC_LIVE, memory_order_relaxed);
    atomic_store_explicit(&c->flag, 0, memory_order_relaxed);
    d->req = WEFT__DREQ_NONE;
    san_to_u(d->stack_hi);
    weft__ctx_spawn(&d->sched_sp, d->stack_hi, root_start, c);
    MOVED();
    san_arrived();
    return 0;
}

/* ---- the scheduler ---------------------------------------------------------- */

/* Acts on what the thread that left asked for; returns a context to
 * resume (with d->cur set) or NULL. */
static char *serve_request(struct weft__dist *d)
{
    int req = d->req;
    d->req = WEFT__DREQ_NONE;
    if (req == WEFT__DREQ_SUSPEND) {
        /* d->req_self waits for d->req_rec: copy its frames out, then race. */
        struct weft__drec *c = d->req_rec, *j = d->req_self;
        char *sp = d->req_sp, *lo = sp - WEFT__DIST_RED;
        size_t n = (size_t)(frame_end_of(j) - lo);
        char *ev = n <= WEFT__DIST_EVAC_SIZE ? evac_alloc(d->me) : NULL;
        if (!ev) {
            /* No room to copy it out: wait in place (nothing else of this
             * rank is on U, and the joined thread needs nothing of it). */
            /* flag_load's acquire pairs with the finisher's add */
            while (d->xp->flag_load(&c->flag) == 0)
                sched_yield();
            d->cur = j;
            return sp;
        }
        copy_raw(ev, lo, n);
        struct weft__dsusp su = { sp, ev, j };
        d->xp->put(&c->susp, &su, sizeof su);
        d->me->nsuspends++;
        /* the add publishes c->susp; its acquire pairs with the finisher's
         * add (its result) */
        if (d->xp->flag_add(&c->flag) == 0)
            return NULL; /* the finisher resumes j */
        evac_free(ev);   /* it finished meanwhile: j's frames are still in place */
        d->cur = j;
        return sp;
    }
    if (req == WEFT__DREQ_RESUME) {
        /* d->req_rec finished second: its joiner goes on here. U is free
         * (the finisher's pop failed: our deque is empty). */
        struct weft__drec *c = d->req_rec;
        struct weft__dsusp su;
        d->xp->get(&su, &c->susp, sizeof su);
        char *lo = su.sp - WEFT__DIST_RED;
        d->xp->get(lo, su.evac, (size_t)(frame_end_of(su.rec) - lo));
        evac_free(su.evac);
        d->cur = su.rec;
        return su.sp;
    }
    return NULL;
}

void weft__dist_loop(void)
{
    struct weft__dist *d = &weft__dist;
    unsigned fails = 0;
    uint64_t idle_since = weft__now_ns(); /* for WEFT_DIST_STATS: 0 while a thread runs */
    atomic_store_explicit(&d->me->loop_gen, d->gen, memory_order_relaxed);
    for (;;) {
        char *sp = serve_request(d);
        if (!sp) {
            struct weft__dentry e;
            if (!idle_since)
                idle_since = weft__now_ns();
            /* acquire: pairs with the release stores of the root's end */
            if (atomic_load_explicit(&d->me->exit_gen, memory_order_acquire) == d->gen) {
                d->me->idle_ns += weft__now_ns() - idle_since;
                d->xp->exit_seen();
                return;
            }
            int mine = !own_deque_empty(d->me);
            if (mine && d->force_steal && others_idle(d)) {
                /* forced: give an idle rank time to take it */
                uint64_t t0 = weft__now_ns();
                while (!deque_empty(d->me) && weft__now_ns() - t0 < FORCE_WAIT_NS) {
                    if (d->xp->poll)
                        d->xp->poll(); /* the thief's steps may need us */
                    sched_yield();
                }
            }
            if (mine && pop(d->me, &e)) {
                d->cur = e.rec; /* left by a forced finish, or a joiner in mid-stack */
                sp = e.sp;
            } else if (atomic_store_explicit(&d->me->idle, 1, memory_order_relaxed),
                       !(sp = steal(d))) {
                for (int i = 0; i < SPIN_PAUSES; i++)
                    __builtin_ia32_pause();
                if (d->oversubscribed && ++fails % ROUNDS_YIELD == 0)
                    sched_yield();
                continue;
            }
        }
        fails = 0;
        if (idle_since) {
            d->me->idle_ns += weft__now_ns() - idle_since;
            idle_since = 0;
        }
        atomic_store_explicit(&d->me->idle, 0, memory_order_relaxed);
        san_to_u(sp);
        weft__ctx_switch_plain(&d->sched_sp, sp);
        MOVED();
        san_arrived();
    }
}
