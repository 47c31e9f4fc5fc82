/* stack.c: owns every user-thread stack: slabs, slots, guards and caches.
 *
 * Design
 * ------
 * A slot is [guard][stack ........][descriptor]: the thread descriptor
 * sits at the top of its own stack, so a spawn allocates one object, and a
 * parked thread's descriptor shares its page with the innermost frames (one
 * resident page for most parked threads).
 *
 * The guard is GUARD_BYTES (64 KiB) of address space, not one page: a frame
 * larger than the guard (a big local array) would step over it into the
 * neighbouring slot, a parked thread's live stack, and corrupt it silently.
 * A guard costs one madvise range or one mprotect call whatever its length,
 * and none of it is ever touched, so a large one adds no mapping and no
 * resident memory, only address space. Frames larger still are caught when
 * the code is built with -fstack-clash-protection (the library is; weft.pc
 * suggests it to programs), which touches every page a frame allocates.
 *
 * Slots are carved from slabs (one mmap of about 4 MiB, MAP_NORESERVE,
 * MADV_NOHUGEPAGE so that a huge page never makes one touched slot cost
 * 2 MiB of RSS). Slots of one size form a class; the default-size class also
 * has a per-worker LIFO cache, so spawn/exit in the steady state are a list
 * pop/push with no lock and no system call. Overflowing or empty caches move
 * batches to/from the class's global list under its lock.
 *
 * The caches. Besides the default-size list, each worker caches slots of
 * one other size: the last one it allocated. A program whose frames outgrow
 * the default passes one stack_size at every spawn, and without this cache
 * each of its spawns and joins took the size's class lock (and the class
 * table's), shared by all workers. The other list follows a new size once
 * that size has missed OTHER_SWITCH times in a row while the list held
 * slots (an empty list follows at once): a program that alternates sizes
 * keeps its lists, and one that moves on to a new size takes it along. On
 * a switch the old list goes back to its class whole (its tail is kept for
 * that). A slot's class never changes, so only slots of ocls join the list.
 * Canary slots enter no cache: the slow paths check canaries (see below).
 * weft__stack_cache_drain empties both lists (finalize).
 *
 * Guard pages must not cap the thread count. A PROT_NONE page in the middle
 * of a slab splits it: two kernel mappings per stack, and Debian's
 * vm.max_map_count (65,530) would stop us near 32,000 threads. So:
 *  1. MADV_GUARD_INSTALL (Linux 6.13+): guard regions live in page tables,
 *     cost no mapping; used whenever the kernel accepts it.
 *  2. Otherwise mprotect guards while the mapping budget lasts (we count the
 *     mappings we add and keep a margin for the rest of the process).
 *  3. Past that, canary-checked slots: a magic word at the stack's lowest
 *     address is checked whenever the thread is switched out (yield, park,
 *     spawn, exit: WEFT__GATE_CANARY sends every worker's scheduling
 *     through weft__pick_slow, which checks the departing thread) and when
 *     its slot is freed; a one-time notice says how to restore full
 *     protection. The guard's span is left unprotected but unused there, so
 *     an overrun smaller than it lands in no other thread's stack before
 *     the check sees it; only the slab's lowest slot keeps its guard
 *     (guard_slab_base), so that a runaway recursion faults inside the slab
 *     and gets the one-line report (on_segv: the stack pointer is below the
 *     faulting thread's stack).
 * Rejected: one mmap per stack (two syscalls per spawn, two mappings per
 * stack); guard-less stacks throughout (silent corruption).
 *
 * Slabs are never unmapped before weft__stack_shutdown (finalize): a freed
 * slot goes back to its class. Retained memory is bounded by the peak
 * number of live threads.
 */
#include "stack/stack.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "arch/context.h"
#include "base/base.h"
#include "desc/desc.h"
#include "os/kstack.h"

#if WEFT__HAVE_VALGRIND
#include <valgrind/valgrind.h>
#endif
#if defined(WEFT_SANITIZE_ADDRESS)
#include <sanitizer/asan_interface.h>
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define PAGE         ((size_t)4096)
#define GUARD_BYTES  WEFT__STACK_GUARD /* see "The guard" above */
#define KSTACK_GAP   ((size_t)1 << 20) /* Linux's stack_guard_gap (256 pages) */
#define SLAB_TARGET  ((size_t)4 << 20)
#define CACHE_MAX    WEFT__STACK_CACHE_MAX
#define CACHE_BATCH  32u
#define OTHER_SWITCH 8u /* misses before the other-size list follows a new size */
#define CANARY       0x5745465443414e59ull /* "WEFTCANY" */
#define DESC_BYTES                                                                                 \
    ((sizeof(struct weft_thread) + WEFT_CACHELINE - 1) & ~(size_t)(WEFT_CACHELINE - 1))
/* vm.max_map_count when /proc does not say (the kernel's default), and the
 * least of it kept for the rest of the process (weft__stack_init). */
#define MAX_MAP_COUNT_DEFAULT 65530L
#define MAP_MARGIN_MIN        4096L
/* Slot colours (see colour() below): steps of COLOUR_STEP bytes, at most
 * COLOURS of them, within the slack a class's page rounding leaves. */
#define COLOUR_STEP ((size_t)256)
#define COLOURS     16u

struct weft__stack_class {
    size_t slot_bytes;        /* immutable */
    size_t stack_size;        /* usable bytes; immutable */
    size_t nominal;           /* the size users asked for (reported); immutable */
    size_t ncolours;          /* slot colours, up to COLOURS (colour()); immutable */
    pthread_mutex_t lock;     /* protects the fields below */
    struct weft_thread *free; /* slots returned to the class */
    size_t nfree;
    char *carve_next, *carve_end;   /* untouched slots of the newest slab */
    uint8_t carve_guard;            /* guard mode of that slab */
    struct weft__stack_class *next; /* under g.lock */
};

struct slab {
    void *base;
    size_t len;
    struct weft__stack_class *cls;
};

struct weft__stack_class *weft__stack_dflt;

static struct {
    pthread_mutex_t lock; /* protects classes, slabs, budget */
    struct weft__stack_class *classes;
    struct weft__stack_class *dflt; /* immutable while running */
    struct slab *slabs;
    size_t nslabs, cap;
    int madvise_ok;  /* -1 unknown, 0 no, 1 yes */
    int request;     /* WEFT__GUARDREQ_* */
    long map_budget; /* mappings we may still add with mprotect */
    int canary_noticed;
    _Atomic int canary_carved; /* 1 once a canary slot exists; set under lock,
                                        read (relaxed) by the allocation slow paths */
    void (*on_canary)(void);   /* set by init; called while canary slots exist */
    struct weft__stack_stats stats;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t round_page(size_t n)
{
    return (n + PAGE - 1) & ~(PAGE - 1);
}

static long read_max_map_count(void)
{
    long v = MAX_MAP_COUNT_DEFAULT;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = MAX_MAP_COUNT_DEFAULT;
        fclose(f);
    }
    return v;
}

int weft__stack_init(size_t default_size, int guard_request, void (*on_canary)(void))
{
    pthread_mutex_lock(&g.lock);
    g.request = guard_request;
    g.on_canary = on_canary;
    g.madvise_ok = guard_request == WEFT__GUARDREQ_AUTO ? -1 : 0;
    /* Keep a quarter of the limit (and at least MAP_MARGIN_MIN) for the
     * rest of the process; every mprotect guard costs two mappings. */
    long max = read_max_map_count();
    long margin = max / 4 > MAP_MARGIN_MIN ? max / 4 : MAP_MARGIN_MIN;
    g.map_budget = max - margin;
    g.canary_noticed = 0;
    atomic_store_explicit(&g.canary_carved, 0, memory_order_relaxed);
    pthread_mutex_unlock(&g.lock);
    g.dflt = NULL;
    struct weft_thread *t = weft__stack_alloc(NULL, default_size);
    if (!t)
        return ENOMEM;
    g.dflt = t->cls;
    weft__stack_dflt = g.dflt;
    t->cacheable = t->guard != WEFT__GUARD_CANARY; /* carved before dflt was known */
    weft__stack_free(NULL, t);
    return 0;
}

static struct weft__stack_class *class_for(size_t size)
{
    size_t stack = round_page(size + DESC_BYTES) - DESC_BYTES;
    struct weft__stack_class *c;
    pthread_mutex_lock(&g.lock);
    for (c = g.classes; c; c = c->next)
        if (c->nominal == size)
            break;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (c) {
            c->stack_size = stack;
            c->nominal = size;
            c->slot_bytes = GUARD_BYTES + stack + DESC_BYTES;
            c->ncolours = (stack - size) / COLOUR_STEP;
            if (c->ncolours > COLOURS)
                c->ncolours = COLOURS;
            pthread_mutex_init(&c->lock, NULL);
            c->next = g.classes;
            g.classes = c;
        }
    }
    pthread_mutex_unlock(&g.lock);
    return c;
}

/* A canary slab still guards its lowest slot's guard span: a runaway
 * recursion (which the canary check at the next switch would come too
 * late for) then faults inside the slab, below the slots it has trampled,
 * instead of running on into whatever is mapped below, such as the
 * alternate signal stack its report needs. Free with MADV_GUARD_INSTALL;
 * otherwise one more mapping, while the budget lasts. */
static void guard_slab_base(char *base)
{
    if (madvise(base, GUARD_BYTES, MADV_GUARD_INSTALL) == 0)
        return;
    pthread_mutex_lock(&g.lock);
    int can_mprotect = g.map_budget >= 1;
    if (can_mprotect)
        g.map_budget -= 1;
    pthread_mutex_unlock(&g.lock);
    if (can_mprotect)
        mprotect(base, GUARD_BYTES, PROT_NONE);
}

/* Installs the guard of every slot in [base, base+len); returns the mode. */
static uint8_t guard_slab(char *base, size_t slot, size_t nslots)
{
    pthread_mutex_lock(&g.lock);
    int try_madvise = g.madvise_ok != 0;
    pthread_mutex_unlock(&g.lock);
    if (try_madvise) {
        size_t i;
        for (i = 0; i < nslots; i++)
            if (madvise(base + i * slot, GUARD_BYTES, MADV_GUARD_INSTALL) != 0)
                break;
        pthread_mutex_lock(&g.lock);
        g.madvise_ok = i == nslots;
        pthread_mutex_unlock(&g.lock);
        if (i == nslots)
            return WEFT__GUARD_MADVISE;
        /* Partially installed guards are harmless: the slab falls back below. */
    }
    pthread_mutex_lock(&g.lock);
    int can_mprotect = g.request != WEFT__GUARDREQ_CANARY && g.map_budget >= (long)(2 * nslots);
    if (can_mprotect)
        g.map_budget -= (long)(2 * nslots);
    int notice = !can_mprotect && !g.canary_noticed;
    if (notice)
        g.canary_noticed = 1;
    pthread_mutex_unlock(&g.lock);
    if (can_mprotect) {
        for (size_t i = 0; i < nslots; i++)
            if (mprotect(base + i * slot, GUARD_BYTES, PROT_NONE) != 0)
                return WEFT__GUARD_CANARY; /* out of mappings after all */
        return WEFT__GUARD_MPROTECT;
    }
    if (notice && g.request != WEFT__GUARDREQ_CANARY)
        weft__notice("guard pages would exceed vm.max_map_count; further stacks are "
                     "canary-checked (raise it, e.g. sysctl -w vm.max_map_count=1048576, "
                     "or use Linux >= 6.13, for a guard page on every stack)");
    guard_slab_base(base);
    return WEFT__GUARD_CANARY;
}

/* Maps a new slab for c. Called with c->lock held. */
static int grow_class(struct weft__stack_class *c)
{
    size_t n = SLAB_TARGET / c->slot_bytes;
    if (n == 0)
        n = 1;
    size_t len = n * c->slot_bytes;
    char *base =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return ENOMEM;
    madvise(base, len, MADV_NOHUGEPAGE);
    uint8_t mode = guard_slab(base, c->slot_bytes, n);

    pthread_mutex_lock(&g.lock);
    if (g.nslabs == g.cap) {
        size_t cap = g.cap ? 2 * g.cap : 64;
        struct slab *s = realloc(g.slabs, cap * sizeof *s);
        if (!s) {
            pthread_mutex_unlock(&g.lock);
            munmap(base, len);
            return ENOMEM;
        }
        g.slabs = s;
        g.cap = cap;
    }
    g.slabs[g.nslabs++] = (struct slab){ base, len, c };
    g.stats.slabs++;
    pthread_mutex_unlock(&g.lock);

    c->carve_next = base;
    c->carve_end = base + len;
    c->carve_guard = mode;
    return 0;
}

/* How far below the top of `slot` its descriptor sits. Slots are whole
 * pages, so without this every descriptor and the innermost frames under it
 * fall on the same offset in a page, the same few sets of an L1 cache (its
 * way size is a page or less): a tree of threads a dozen deep, each with a
 * hot descriptor and frames, then misses in L1 where a recursion of the
 * same depth (one stack) does not. Consecutive slots take the next colour,
 * from the slack page rounding gave the class beyond the size asked for, so
 * no thread gets less stack than it asked for. Immutable per slot. */
static size_t colour(const struct weft__stack_class *c, const char *slot)
{
    return c->ncolours ? ((uintptr_t)slot / c->slot_bytes) % c->ncolours * COLOUR_STEP : 0;
}

/* The descriptor of `slot` of c. */
static struct weft_thread *slot_desc(const struct weft__stack_class *c, char *slot)
{
    return (struct weft_thread *)(slot + c->slot_bytes - DESC_BYTES - colour(c, slot));
}

/* A never-used slot of c. Called with c->lock held. */
static struct weft_thread *carve(struct weft__stack_class *c)
{
    if (c->carve_next == c->carve_end && grow_class(c) != 0)
        return NULL;
    char *slot = c->carve_next;
    c->carve_next += c->slot_bytes;
#if defined(WEFT_SANITIZE_ADDRESS)
    /* The address range may have held stacks of an earlier runtime whose
     * poisoned frames outlived the munmap in ASan's shadow. */
    __asan_unpoison_memory_region(slot + GUARD_BYTES, c->slot_bytes - GUARD_BYTES);
#endif
    struct weft_thread *t = slot_desc(c, slot);
    memset(t, 0, sizeof *t);
    t->stack_lo = slot + GUARD_BYTES;
    t->stack_size = (size_t)((char *)t - t->stack_lo);
    t->cls = c;
    t->guard = c->carve_guard;
    t->cacheable = c == weft__stack_dflt && t->guard != WEFT__GUARD_CANARY;
    if (t->guard == WEFT__GUARD_CANARY)
        *(uint64_t *)t->stack_lo = CANARY;
#if WEFT__HAVE_VALGRIND
    t->valgrind_id = VALGRIND_STACK_REGISTER(t->stack_lo, (char *)t);
#endif
    pthread_mutex_lock(&g.lock);
    g.stats.slots++;
    if (t->guard == WEFT__GUARD_MADVISE)
        g.stats.guard_madvise++;
    else if (t->guard == WEFT__GUARD_MPROTECT)
        g.stats.guard_mprotect++;
    else
        g.stats.guard_canary++;
    if (t->guard == WEFT__GUARD_CANARY)
        atomic_store_explicit(&g.canary_carved, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g.lock);
    return t;
}

/* Once canary slots exist, every worker's picks must take the slow path,
 * which checks the canary of the thread being switched out: the scheduler
 * above says how, through the hook given to weft__stack_init. Called from
 * the allocation slow paths, which every slot passes through before its
 * first user thread runs on it. relaxed: a hint; the thread on the slot is
 * published to the worker that runs it by the queue or switch that hands
 * it over, after this. */
static void canary_gates(void)
{
    if (atomic_load_explicit(&g.canary_carved, memory_order_relaxed) && g.on_canary)
        g.on_canary();
}

/* Takes a slot of class c for the caller and, for the calling worker's
 * cache, up to CACHE_BATCH - 1 more: those go to the empty list *head (its
 * last slot to *tail, their count to *n). */
static struct weft_thread *refill_list(struct weft__stack_class *c, struct weft_thread **head,
                                       struct weft_thread **tail, unsigned *n)
{
    /* Canary slots never enter a cache, so that every spawn that takes one
     * goes through the slow spawn path, which checks the spawning thread's
     * canary; with canary slots around, take one slot at a time. */
    unsigned batch = atomic_load_explicit(&g.canary_carved, memory_order_relaxed) ? 1 : CACHE_BATCH;
    pthread_mutex_lock(&c->lock);
    struct weft_thread *t = c->free;
    if (t) {
        struct weft_thread *last = t;
        unsigned k = 1;
        while (k < batch && last->next) {
            last = last->next;
            k++;
        }
        c->free = last->next;
        c->nfree -= k;
        last->next = NULL;
        /* hand all but the first to the cache */
        *head = t->next;
        *tail = last;
        *n = k - 1;
    } else {
        t = carve(c);
    }
    pthread_mutex_unlock(&c->lock);
    canary_gates();
    return t;
}

/* Refills a worker cache from the default class. */
static WEFT_NOINLINE struct weft_thread *refill(struct weft__stack_cache *cache,
                                                struct weft__stack_class *c)
{
    struct weft_thread *tail;
    return refill_list(c, &cache->head, &tail, &cache->n);
}

/* Puts the list head..tail (n slots of class c) back on c's shared list. */
static void give_back(struct weft__stack_class *c, struct weft_thread *head,
                      struct weft_thread *tail, unsigned n)
{
    pthread_mutex_lock(&c->lock);
    tail->next = c->free;
    c->free = head;
    c->nfree += n;
    pthread_mutex_unlock(&c->lock);
}

/* A slot of class c off its shared list, or a new one. */
static struct weft_thread *take_one(struct weft__stack_class *c)
{
    pthread_mutex_lock(&c->lock);
    struct weft_thread *t = c->free;
    if (t) {
        c->free = t->next;
        c->nfree--;
    } else {
        t = carve(c);
    }
    pthread_mutex_unlock(&c->lock);
    canary_gates();
    return t;
}

/* weft__stack_alloc of a size that is not the default, for a worker: from
 * its other-size list (stack.c, "The caches"). */
static WEFT_NOINLINE struct weft_thread *alloc_other(struct weft__stack_cache *cache, size_t size)
{
    struct weft_thread *t = weft__stack_cache_pop_sized(cache, size);
    if (t)
        return t;
    if (size == cache->osize)
        return refill_list(cache->ocls, &cache->ohead, &cache->otail, &cache->on);
    struct weft__stack_class *c = class_for(size);
    if (!c)
        return NULL;
    t = cache->ohead;
    if (t && ++cache->omiss < OTHER_SWITCH)
        return take_one(c);
    if (t)
        give_back(cache->ocls, t, cache->otail, cache->on);
    cache->ohead = NULL;
    cache->on = 0;
    cache->ocls = c;
    cache->osize = size;
    cache->omiss = 0;
    return refill_list(c, &cache->ohead, &cache->otail, &cache->on);
}

struct weft_thread *weft__stack_alloc(struct weft__stack_cache *cache, size_t size)
{
    struct weft__stack_class *c = g.dflt;
    if (WEFT_LIKELY(cache && size == 0)) {
        struct weft_thread *t = cache->head;
        if (WEFT_LIKELY(t)) {
            cache->head = t->next;
            cache->n--;
            return t;
        }
        return refill(cache, c);
    }
    if (cache)
        return alloc_other(cache, size);
    if (size != 0 || !c)
        c = class_for(size ? size : WEFT__STACK_DEFAULT);
    if (!c)
        return NULL;
    return take_one(c);
}

/* Moves the older slots of a full cache list (head, *n slots of class c)
 * to the class list, keeping CACHE_MAX - CACHE_BATCH; returns the list's
 * new last slot. */
static WEFT_NOINLINE struct weft_thread *spill(struct weft_thread *head, unsigned *n,
                                               struct weft__stack_class *c)
{
    struct weft_thread *last = head;
    for (unsigned i = 1; i < CACHE_MAX - CACHE_BATCH; i++)
        last = last->next;
    struct weft_thread *give = last->next, *tail = give;
    unsigned k = 1;
    while (tail->next) {
        tail = tail->next;
        k++;
    }
    last->next = NULL;
    *n -= k;
    give_back(c, give, tail, k);
    return last;
}

void weft__stack_free(struct weft__stack_cache *cache, struct weft_thread *t)
{
    struct weft__stack_class *c = t->cls;
    weft__stack_check(t);
#if defined(WEFT_SANITIZE_ADDRESS)
    /* A thread that ended through weft_exit left its frames' redzones
     * poisoned; the next user of the slot starts clean. */
    __asan_unpoison_memory_region(t->stack_lo, t->stack_size);
#endif
    if (WEFT_LIKELY(cache && t->cacheable)) {
        t->next = cache->head;
        cache->head = t;
        if (WEFT_UNLIKELY(++cache->n >= CACHE_MAX))
            spill(cache->head, &cache->n, c);
        return;
    }
    if (cache && c == cache->ocls && t->guard != WEFT__GUARD_CANARY) {
        t->next = cache->ohead;
        if (!cache->ohead)
            cache->otail = t;
        cache->ohead = t;
        if (WEFT_UNLIKELY(++cache->on >= CACHE_MAX))
            cache->otail = spill(cache->ohead, &cache->on, c);
        return;
    }
    t->next = NULL;
    give_back(c, t, t, 1);
}

/* The slots on callers' memory, for weft__stack_adopted_each: a link at
 * the bottom of each region (below the stack's lowest byte, which only an
 * overflow reaches, as glibc's user stacks have no guard either), in a
 * circle under `lock`. The region leaves the circle before weft lets go
 * of it, so a walk under the lock reads only memory still weft's. */
struct adopted {
    struct adopted *next, *prev;
    struct weft_thread *t;
};
#define ADOPTED_BYTES ((sizeof(struct adopted) + 15) & ~(size_t)15)
static struct {
    pthread_mutex_t lock;
    struct adopted ring; /* the circle's anchor */
} adopted = { PTHREAD_MUTEX_INITIALIZER, { &adopted.ring, &adopted.ring, NULL } };

/* The caller's memory as a slot (pthread_attr_setstack): the descriptor at
 * its top, as glibc puts its thread block at the top of a user stack, and
 * no guard (POSIX: the guard size is ignored with a user stack). cls NULL
 * marks it: weft__free_thread gives it back to nobody. */
struct weft_thread *weft__stack_adopt(void *lo, size_t size)
{
    uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)(WEFT_CACHELINE - 1);
    uintptr_t base = ((uintptr_t)lo + 15) & ~(uintptr_t)15;
    if (!lo || size > WEFT__STACK_MAX ||
        top < base + ADOPTED_BYTES + DESC_BYTES + WEFT__STACK_USER_MIN)
        return NULL;
    struct weft_thread *t = (struct weft_thread *)(top - DESC_BYTES);
    memset(t, 0, sizeof *t);
    struct adopted *a = (struct adopted *)base;
    t->stack_lo = (char *)a + ADOPTED_BYTES;
    t->stack_size = (size_t)((char *)t - t->stack_lo);
    t->guard = WEFT__GUARD_NONE;
#if WEFT__HAVE_VALGRIND
    t->valgrind_id = VALGRIND_STACK_REGISTER(t->stack_lo, (char *)t);
#endif
    a->t = t;
    pthread_mutex_lock(&adopted.lock);
    a->next = adopted.ring.next;
    a->prev = &adopted.ring;
    a->next->prev = a;
    adopted.ring.next = a;
    pthread_mutex_unlock(&adopted.lock);
    return t;
}

void weft__stack_disown(struct weft_thread *t)
{
    struct adopted *a = (struct adopted *)(void *)(t->stack_lo - ADOPTED_BYTES);
    pthread_mutex_lock(&adopted.lock);
    a->prev->next = a->next;
    a->next->prev = a->prev;
    pthread_mutex_unlock(&adopted.lock);
#if WEFT__HAVE_VALGRIND
    VALGRIND_STACK_DEREGISTER(t->valgrind_id);
#endif
#if defined(WEFT_SANITIZE_ADDRESS)
    /* the caller frees or reuses the memory: no poisoned frames left */
    __asan_unpoison_memory_region(t->stack_lo, (size_t)((char *)t - t->stack_lo) + sizeof *t);
#endif
}

void weft__stack_adopted_each(void (*fn)(struct weft_thread *t, void *arg), void *arg)
{
    pthread_mutex_lock(&adopted.lock);
    for (struct adopted *a = adopted.ring.next; a != &adopted.ring; a = a->next)
        fn(a->t, arg);
    pthread_mutex_unlock(&adopted.lock);
}

void weft__stack_cache_drain(struct weft__stack_cache *cache)
{
    struct weft__stack_class *c = g.dflt;
    if (c && cache->head) {
        struct weft_thread *tail = cache->head;
        while (tail->next)
            tail = tail->next;
        give_back(c, cache->head, tail, cache->n);
    }
    cache->head = NULL;
    cache->n = 0;
    if (cache->ohead)
        give_back(cache->ocls, cache->ohead, cache->otail, cache->on);
    cache->ohead = cache->otail = NULL;
    cache->on = 0;
    cache->ocls = NULL;
    cache->osize = 0;
    cache->omiss = 0;
}

void weft__stack_shutdown(void)
{
    pthread_mutex_lock(&g.lock);
    for (size_t i = 0; i < g.nslabs; i++) {
#if WEFT__HAVE_VALGRIND
        if (RUNNING_ON_VALGRIND) {
            struct weft__stack_class *c = g.slabs[i].cls;
            char *b = g.slabs[i].base;
            for (char *s = b; s + c->slot_bytes <= b + g.slabs[i].len; s += c->slot_bytes) {
                struct weft_thread *t = slot_desc(c, s);
                if (t->cls == c)
                    VALGRIND_STACK_DEREGISTER(t->valgrind_id);
            }
        }
#endif
#if defined(WEFT_SANITIZE_ADDRESS)
        __asan_unpoison_memory_region(g.slabs[i].base, g.slabs[i].len);
#endif
        munmap(g.slabs[i].base, g.slabs[i].len);
    }
    free(g.slabs);
    g.slabs = NULL;
    g.nslabs = g.cap = 0;
    struct weft__stack_class *c = g.classes;
    while (c) {
        struct weft__stack_class *n = c->next;
        pthread_mutex_destroy(&c->lock);
        free(c);
        c = n;
    }
    g.classes = NULL;
    g.dflt = NULL;
    weft__stack_dflt = NULL;
    memset(&g.stats, 0, sizeof g.stats);
    pthread_mutex_unlock(&g.lock);
}

/* Where debuggers find the slabs (share/weft/weft-gdb.py, through
 * observe/debug.c): read from a core file, so plain data. */
const struct weft__stack_debug weft__stack_debug = {
    .slabs = (void *const *)&g.slabs,
    .nslabs = &g.nslabs,
    .slab_bytes = sizeof(struct slab),
    .slab_base = offsetof(struct slab, base),
    .slab_len = offsetof(struct slab, len),
    .slab_cls = offsetof(struct slab, cls),
    .cls_slot_bytes = offsetof(struct weft__stack_class, slot_bytes),
    .desc_bytes = DESC_BYTES,
    .cls_colours = offsetof(struct weft__stack_class, ncolours),
    .colour_step = COLOUR_STEP,
    .adopted = &adopted.ring,
    .adopted_next = offsetof(struct adopted, next),
    .adopted_t = offsetof(struct adopted, t),
};

int weft__stack_each(void (*fn)(struct weft_thread *t, void *arg), void *arg)
{
    /* A copy of the slab list, so that spawns that carve new slabs meanwhile
     * do not wait for the whole walk. Slots carved later are missed, as a
     * thread spawned after the walk began may be. */
    pthread_mutex_lock(&g.lock);
    size_t n = g.nslabs;
    struct slab *copy = malloc((n ? n : 1) * sizeof *copy);
    if (copy) {
        for (size_t i = 0; i < n; i++)
            copy[i] = g.slabs[i];
    }
    pthread_mutex_unlock(&g.lock);
    if (!copy)
        return ENOMEM;
    for (size_t i = 0; i < n; i++) {
        size_t slot = copy[i].cls->slot_bytes; /* immutable */
        for (char *p = copy[i].base; p + slot <= (char *)copy[i].base + copy[i].len; p += slot)
            fn(slot_desc(copy[i].cls, p), arg);
    }
    free(copy);
    return 0;
}

void weft__stack_stats(struct weft__stack_stats *out)
{
    pthread_mutex_lock(&g.lock);
    *out = g.stats;
    struct weft__stack_class *c = g.classes;
    pthread_mutex_unlock(&g.lock);
    /* Classes are only ever prepended, and unlinked by shutdown alone, so
     * the chain from the head read under g.lock stays put; each class's
     * lock is taken without g.lock (grow_class takes them the other way). */
    out->free_slots = 0;
    for (; c; c = c->next) {
        pthread_mutex_lock(&c->lock);
        out->free_slots += c->nfree;
        pthread_mutex_unlock(&c->lock);
    }
}

/* ---- overflow report ----------------------------------------------------- */

static struct sigaction old_segv;
static int segv_installed;

static size_t fmt_u64(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

static size_t fmt_str(char *p, const char *s, size_t max)
{
    size_t n = 0;
    while (s[n] && n < max) {
        p[n] = s[n];
        n++;
    }
    return n;
}

/* The overflow report's hooks (weft__overflow_install): written before the
 * handler is installed, read by it. */
static struct weft_thread *(*overflow_current)(void);
static uint64_t (*overflow_id)(const struct weft_thread *t);

/* The stack size t was given: its class's, or its kernel thread's. */
static size_t stack_size_of(const struct weft_thread *t)
{
    return t->cls ? t->cls->nominal : t->stack_size;
}

/* One line, async-signal-safe, then abort; size: t's stack size. The
 * initial thread runs on the process's stack, whose size is RLIMIT_STACK's. */
static _Noreturn void report_overflow(const struct weft_thread *t, size_t size, const char *how)
{
    const char *advice = t->cls || t->bound ? "raise weft_attr.stack_size or WEFT_STACK_SIZE"
                                            : "raise the stack limit (ulimit -s)";
    char line[256];
    size_t n = 0;
    n += fmt_str(line + n, "weft: stack overflow in user thread ", 64);
    n += fmt_u64(line + n, overflow_id(t)); /* assigns one if need be */
    n += fmt_str(line + n, " \"", 4);
    n += fmt_str(line + n, t->name ? t->name : "(unnamed)", 64);
    n += fmt_str(line + n, "\" (stack size ", 32);
    n += fmt_u64(line + n, size);
    n += fmt_str(line + n, " bytes; ", 16);
    n += fmt_str(line + n, how, 64);
    n += fmt_str(line + n, "): ", 4);
    n += fmt_str(line + n, advice, 64);
    n += fmt_str(line + n, "\n", 2);
    ssize_t w = write(2, line, n);
    (void)w;
    abort();
}

void weft__stack_check_slow(const struct weft_thread *t)
{
    if (t->guard == WEFT__GUARD_CANARY && *(const uint64_t *)t->stack_lo != CANARY)
        report_overflow(t, stack_size_of(t), "canary overwritten");
}

/* RLIMIT_STACK when weft_init ran on the process's main kernel thread, 0
 * otherwise or when unlimited: the initial thread's stack is then the
 * process's, which the kernel grows as far as the limit of the moment lets
 * it. Written by weft__overflow_install, before the handler is installed. */
static rlim_t main_rlim;

struct kstack_now {
    const char *lo;
    size_t size;
};

/* The initial thread t's stack as the C library would give it now
 * (pthread_getattr_np), into *now: the program may have changed
 * RLIMIT_STACK since weft_init measured t's stack, and its bottom moved
 * with the limit. The library's size is the limit less the space above
 * its top (arguments, environment), which the limit at weft_init less t's
 * size tells. 0 when t is not on the process's stack, or the limit is not
 * known. Async-signal-safe. */
static int main_stack_now(const struct weft_thread *t, struct kstack_now *now)
{
    struct rlimit rl;
    size_t at_init = (size_t)main_rlim & ~(PAGE - 1);
    if (!main_rlim || t->cls || t->bound || at_init < t->stack_size ||
        getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    size_t above = at_init - t->stack_size;
    size_t limit = (size_t)rl.rlim_cur & ~(PAGE - 1);
    if (limit <= above)
        return 0;
    now->size = limit - above;
    now->lo = t->stack_lo + t->stack_size - now->size;
    return 1;
}

/* Reports the fault at a, with the stack pointer at sp, as an overflow of
 * t's stack if it is one; returns otherwise. */
static void check_fault(const struct weft_thread *t, const char *a, const char *sp)
{
    const char *lo = t->stack_lo;
    struct kstack_now now;
    if (!lo)
        return;
    switch (t->guard) {
    case WEFT__GUARD_MADVISE:
    case WEFT__GUARD_MPROTECT:
        if (a >= lo - GUARD_BYTES && a < lo)
            report_overflow(t, stack_size_of(t), "hit the guard page");
        return;
    case WEFT__GUARD_CANARY:
        /* No guard of its own: the canary is gone, or the thread's stack
         * pointer or the fault lies below its stack (it ran on through
         * the slots below until the slab's base guard stopped it). */
        if (*(const uint64_t *)lo != CANARY)
            report_overflow(t, stack_size_of(t), "canary overwritten");
        if ((sp && sp < lo) || (a >= lo - GUARD_BYTES && a < lo))
            report_overflow(t, stack_size_of(t), "ran past the bottom of its stack");
        return;
    default:
        /* A kernel thread's own stack (the initial thread, a bound thread):
         * below it lies the C library's guard page, or for the process's
         * main stack the kernel's stack guard gap, which also stops the
         * stack's growth that far above the mapping below it. The main
         * stack ends where RLIMIT_STACK now says, or where it did at
         * weft_init (a mapping stopped its growth). */
        if (main_stack_now(t, &now) && a >= now.lo - KSTACK_GAP && a < now.lo + KSTACK_GAP)
            report_overflow(t, now.size, "ran past the bottom of its stack");
        if (a >= lo - KSTACK_GAP && a < lo + KSTACK_GAP)
            report_overflow(t, t->stack_size, "ran past the bottom of its stack");
        return;
    }
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    struct weft_thread *t = overflow_current();
    if (t)
        check_fault(t, si->si_addr, uc ? weft__ctx_signal_sp(uc) : NULL);
    /* Not ours: behave as if we were not installed. */
    if (old_segv.sa_flags & SA_SIGINFO) {
        if (old_segv.sa_sigaction) {
            old_segv.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (old_segv.sa_handler != SIG_DFL && old_segv.sa_handler != SIG_IGN) {
        old_segv.sa_handler(sig);
        return;
    }
    /* Default action: restore it and return; the fault repeats and kills. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &dfl, NULL);
}

int weft__overflow_install(struct weft_thread *(*current)(void),
                           uint64_t (*id)(const struct weft_thread *t))
{
    overflow_current = current;
    overflow_id = id;
    struct rlimit rl;
    main_rlim = 0;
    if (gettid() == getpid() && getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        main_rlim = rl.rlim_cur;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old_segv) != 0)
        return errno;
    segv_installed = 1;
    return 0;
}

/* Puts back the handler weft found, unless the program has installed one of
 * its own since: that one stays. */
void weft__overflow_uninstall(void)
{
    if (!segv_installed)
        return;
    segv_installed = 0;
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur) != 0)
        return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_segv)
        sigaction(SIGSEGV, &old_segv, NULL);
}

WEFT_NOINLINE void weft__stack_scrub_below(void)
{
    uintptr_t z[128];
    memset(z, 0, sizeof z);
    __asm__ volatile("" : : "r"(z) : "memory"); /* the stores stay */
}

void *weft__stack_bound_enter(struct weft_thread *t)
{
    size_t size = 0;
    weft__kstack(&t->stack_lo, &size);
    return weft__altstack_push();
}

struct altstack {
    stack_t old;
    void *mem;
    size_t len;
};

void *weft__altstack_push(void)
{
    struct altstack *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->len = 64 << 10;
    a->mem = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a->mem == MAP_FAILED) {
        free(a);
        return NULL;
    }
    stack_t ss = { .ss_sp = a->mem, .ss_size = a->len, .ss_flags = 0 };
    if (sigaltstack(&ss, &a->old) != 0) {
        munmap(a->mem, a->len);
        free(a);
        return NULL;
    }
    return a;
}

/* Puts back the alternate stack weft found, if weft's own is still the one
 * installed; one the program installed since stays (ours is then unused). */
void weft__altstack_pop(void *token)
{
    struct altstack *a = token;
    if (!a)
        return;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) && cur.ss_sp == a->mem) {
        if (a->old.ss_flags & SS_DISABLE) {
            stack_t off = { .ss_flags = SS_DISABLE };
            sigaltstack(&off, NULL);
        } else {
            sigaltstack(&a->old, NULL);
        }
    }
    munmap(a->mem, a->len);
    free(a);
}
