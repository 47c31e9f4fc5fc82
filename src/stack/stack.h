/* stack.h: stack slots (descriptor + stack + guard), their caches, and the
 * stack-overflow report. */
#ifndef WEFT_STACK_STACK_H
#define WEFT_STACK_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "desc/desc.h"

#define WEFT__STACK_MIN     ((size_t)16 << 10)
#define WEFT__STACK_MAX     ((size_t)1 << 30)
#define WEFT__STACK_DEFAULT ((size_t)64 << 10)
/* Below every stack weft makes: address space only (stack.c, "The guard"). */
#define WEFT__STACK_GUARD ((size_t)64 << 10)

/* Guard-mode request (WEFT_STACK_GUARD): auto picks the best available. */
enum { WEFT__GUARDREQ_AUTO, WEFT__GUARDREQ_MPROTECT, WEFT__GUARDREQ_CANARY };

/* on_canary (may be NULL): called from allocation slow paths once canary
 * slots exist, so that the scheduler checks canaries at every switch out
 * (runtime.c sets the workers' gates). */
int weft__stack_init(size_t default_size, int guard_request, void (*on_canary)(void));
void weft__stack_shutdown(void); /* unmaps every slab; call when no thread runs */

/* A slot with at least `size` usable bytes, or NULL (ENOMEM). c: the calling
 * worker's cache, or NULL from elsewhere. Fields other than the stack ones
 * are the caller's to set. */
struct weft_thread *weft__stack_alloc(struct weft__stack_cache *c, size_t size);
void weft__stack_free(struct weft__stack_cache *c, struct weft_thread *t);
void weft__stack_cache_drain(struct weft__stack_cache *c);

/* Stack bytes a caller's stack must hold below the descriptor. */
#define WEFT__STACK_USER_MIN ((size_t)4 << 10)
/* A slot on the caller's memory [lo, lo + size) (the drop-in's
 * pthread_attr_setstack): the descriptor at its top, no guard, cls NULL;
 * NULL if it cannot hold the descriptor, WEFT__STACK_USER_MIN bytes below
 * it and, at its bottom, the link of weft__stack_adopted_each's list. weft never caches, reuses or unmaps it: once the thread is
 * freed (weft__free_thread calls weft__stack_disown), weft touches none
 * of it, and the caller may free it. */
struct weft_thread *weft__stack_adopt(void *lo, size_t size);
void weft__stack_disown(struct weft_thread *t);
/* Calls fn on each slot of weft__stack_adopt not yet disowned, under a
 * lock that weft__stack_disown takes: fn may read the descriptor, which
 * stays in place until fn returns (not after), and must not spawn or
 * free threads. */
void weft__stack_adopted_each(void (*fn)(struct weft_thread *t, void *arg), void *arg);

/* The default-size class: slots the per-worker caches hold. */
extern struct weft__stack_class *weft__stack_dflt WEFT_INTERNAL;

#define WEFT__STACK_CACHE_MAX 64u

/* Cache fast paths, inlined into spawn and join: no lock, no call. */
static inline struct weft_thread *weft__stack_cache_pop(struct weft__stack_cache *c)
{
    struct weft_thread *t = c->head;
    if (__builtin_expect(t != NULL, 1)) {
        c->head = t->next;
        c->n--;
    }
    return t;
}

/* A cached slot of `size` (not 0, not the default) bytes, or NULL: then
 * weft__stack_alloc. */
static inline struct weft_thread *weft__stack_cache_pop_sized(struct weft__stack_cache *c,
                                                              size_t size)
{
    struct weft_thread *t = c->ohead;
    if (__builtin_expect(t != NULL && size == c->osize, 1)) {
        c->ohead = t->next;
        c->on--;
        c->omiss = 0;
    } else {
        t = NULL;
    }
    return t;
}

/* 1 if weft__stack_cache_push would put t on c's head list: the push may
 * then be done by hand, later, by the owner (weft__ctx_exit_push). */
static inline int weft__stack_cache_fits(const struct weft__stack_cache *c,
                                         const struct weft_thread *t)
{
    return t->cacheable && c->n < WEFT__STACK_CACHE_MAX;
}

/* Returns 0 when t must take the slow path (weft__stack_free). */
static inline int weft__stack_cache_push(struct weft__stack_cache *c, struct weft_thread *t)
{
#if defined(WEFT_SANITIZE_ADDRESS)
    (void)c;
    (void)t;
    return 0; /* the slow path unpoisons the stack */
#else
    if (__builtin_expect(weft__stack_cache_fits(c, t), 1)) {
        t->next = c->head;
        c->head = t;
        c->n++;
        return 1;
    }
    /* The other-size list; the slow path spills it when full. A caller's
     * stack (cls NULL, weft__stack_adopt) never enters a list. */
    if (!t->cls || t->cls != c->ocls || t->guard == WEFT__GUARD_CANARY || !c->ohead ||
        c->on >= WEFT__STACK_CACHE_MAX - 1)
        return 0;
    t->next = c->ohead;
    c->ohead = t;
    c->on++;
    return 1;
#endif
}

/* Aborts with the overflow message if t's canary (canary-mode slot) is gone. */
void weft__stack_check_slow(const struct weft_thread *t);
static inline void weft__stack_check(const struct weft_thread *t)
{
    if (__builtin_expect(t->guard == WEFT__GUARD_CANARY, 0))
        weft__stack_check_slow(t);
}

/* SIGSEGV on a guard page: per-process handler and per-kernel-thread
 * alternate signal stack. The report needs two answers from the layers
 * above, given at install: current, the user thread the faulting kernel
 * thread runs or acts as (NULL: none), and id, a thread's id; both are
 * called in the signal handler, so both must be async-signal-safe. */
int weft__overflow_install(struct weft_thread *(*current)(void),
                           uint64_t (*id)(const struct weft_thread *t));
void weft__overflow_uninstall(void);
/* Zeroes the 1 KiB of stack below the caller's frame: the return addresses
 * into libweft that the caller's finished calls left there, which the
 * rescue's scan of a thread blocked in the kernel (policy/preempt.c) would
 * take for libweft code under way, refusing the rescue. */
void weft__stack_scrub_below(void);
void *weft__altstack_push(void); /* returns a token for pop */
void weft__altstack_pop(void *token);
/* On a bound thread's kernel thread, before it runs the thread's function:
 * records t's stack for the overflow report and pushes an alternate signal
 * stack to report from. Returns the token for weft__altstack_pop. */
void *weft__stack_bound_enter(struct weft_thread *t);

/* Calls fn(t, arg) for the descriptor of every slot carved so far, in use
 * or not: the registry weft_dump walks (observe/registry.c), which costs a
 * spawn nothing. Slabs stay mapped until weft__stack_shutdown, so every t
 * may be read, but racily: a slot may be taken, reused or freed meanwhile.
 * Returns ENOMEM (and calls nothing) if the slab list cannot be copied. */
int weft__stack_each(void (*fn)(struct weft_thread *t, void *arg), void *arg);

/* The slab list as a debugger reads it (no calls: core files too). */
struct weft__stack_debug {
    void *const *slabs; /* address of the array of slabs */
    const size_t *nslabs;
    size_t slab_bytes, slab_base, slab_len, slab_cls; /* struct slab: size, offsets */
    size_t cls_slot_bytes;                            /* offset of a class's slot size */
    size_t desc_bytes;  /* the descriptor's share at the top of each slot */
    size_t cls_colours; /* offset of a class's colour count: a slot's descriptor sits
                              (slot / slot size) % count * colour_step lower (stack.c) */
    size_t colour_step;
    /* weft__debug version 3: the slots on callers' memory (weft__stack_adopt)
     * form a circle of links anchored at `adopted`; a link's next is at
     * adopted_next, its descriptor's address at adopted_t. */
    const void *adopted;
    size_t adopted_next, adopted_t;
};
extern const struct weft__stack_debug weft__stack_debug WEFT_INTERNAL;

/* Counters for tests and stats. free_slots: slots on the classes' shared
 * lists (the rest are in use or in a worker's cache). */
struct weft__stack_stats {
    size_t slabs, slots, guard_madvise, guard_mprotect, guard_canary, free_slots;
};
void weft__stack_stats(struct weft__stack_stats *out);

#endif
