/* switch.h: the one switch path: every change of the context that runs on
 * a worker, and every trip to and from a machine's home, goes through here.
 *
 * A switch on worker w, from the departing context (a user thread, w's
 * scheduler context, a machine's home) to the arriving one, takes these
 * steps, in this order, and they are written nowhere else:
 *  1. the departing user thread keeps its errno (self->err): the kernel
 *     thread's errno belongs to the thread on the CPU (weft__switch_out);
 *  2. the arriving thread becomes w's (to->worker, when it may come from
 *     another worker) and w's current (w->current; NULL: w's scheduler
 *     context): weft__switch_in;
 *  3. the sanitizers learn the stack and fiber about to run (sched/san.h);
 *     they may call out, so this comes before step 4;
 *  4. the arriving thread's errno is installed (a fresh one sets its own);
 *  5. the context switch proper (arch/context.h): switch (save, resume),
 *     jump or exit (the departing context ends), spawn (save, then call on a
 *     fresh stack).
 * The resumed half, weft__ctx_resumed (sched.c), acts on the xfer and then
 * installs errno again, as the hand-off may have called out.
 *
 * Steps 2 to 4 are weft__switch_in, the one place where both sides of
 * every switch of a user thread are known before it happens: code that
 * must see every such switch adds its line there. The C++ exception state
 * (sched/eh.h) is not such code: it is carried by the departing thread
 * itself, around its switch (weft__switch_how), and only where programs
 * with the C++ runtime switch, so that C programs' fast paths stay as
 * they are. A machine's home is no
 * worker's context: going home (weft__switch_home) changes no w->current
 * (the departing side left it already).
 *
 * libweft-pthread (built from these sources with WEFT_POSIX=1; libweft
 * has none of this) gives each user thread a glibc thread block of its
 * own, to->fs, and %fs follows the switch in weft__switch_in: to's block,
 * or the kernel thread's own block for the scheduler context and for a
 * thread without one (fs NULL). A block is used by one kernel thread at a
 * time, so the runtime's kernel-thread locals (the worker, the home, the
 * kernel thread's own block) are carried into each block switched in.
 */
#ifndef WEFT_SCHED_SWITCH_H
#define WEFT_SCHED_SWITCH_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/context.h"
#include "base/base.h"
#include "desc/desc.h"
#include "sched/eh.h"
#include "sched/san.h"
#include "sched/sched.h"

#if WEFT_POSIX
/* The kernel thread's own glibc thread block, carried into user threads'
 * blocks (NULL in a kernel thread's own block: %fs:0 names it). The
 * initial thread keeps the block the main kernel thread started on, which
 * visits other kernel threads while the main one is lent; the main kernel
 * thread gets a block of its own for the scheduler at the start
 * (posix/thread.c), so the two never share one. */
extern __thread void *weft__tls_kfs __attribute__((tls_model("initial-exec")));
extern int weft__fs_wrfsbase; /* 1: the CPU and kernel allow wrfsbase */
/* arch_prctl(ARCH_SET_FS, fs in %rdi), for kernels without wrfsbase. It
 * keeps every register but the flags, and weft__fs_enter calls it from an
 * asm statement that says so: the switch paths that inline weft__fs_enter
 * (weft_yield's among them) then keep their values in scratch registers,
 * where a C call would make them save six callee-saved ones on every
 * switch, for a call that wrfsbase never makes. */
__attribute__((no_caller_saved_registers)) void weft__fs_syscall(void *fs);

/* Points %fs at fs (NULL: this kernel thread's own block) and carries the
 * kernel-thread locals into it, for worker w. */
WEFT_INLINE void weft__fs_enter(struct weft__worker *w, void *fs)
{
    void *k = weft__tls_kfs;
    struct weft__home *h = weft__tls_home;
    if (!k) /* volatile: the kernel thread changes under a loop that switches */
        __asm__ volatile("movq %%fs:0, %0" : "=r"(k) : : "memory");
    if (!fs)
        fs = k;
    if (WEFT_LIKELY(weft__fs_wrfsbase))
        __asm__ volatile("wrfsbase %0" : : "r"(fs) : "memory");
    else /* past the red zone, which the call's return address would hit */
        __asm__ volatile("lea -128(%%rsp), %%rsp\n\tcall weft__fs_syscall\n\tlea 128(%%rsp), %%rsp"
                         :
                         : "D"(fs)
                         : "memory");
    weft__tls_kfs = fs == k ? NULL : k; /* a kernel thread's own block says NULL */
    weft__tls_home = h;
    weft__tls_worker = w;
}
#endif

/* How the arriving thread comes to w (weft__switch_in's `how`; always a
 * constant, so that each caller keeps only its own steps). */
enum {
    WEFT__SWITCH_LOCAL = 0, /* to's worker is w already (w's yield FIFO), or NULL */
    WEFT__SWITCH_MOVE = 1,  /* to may last have run on another worker */
    WEFT__SWITCH_FRESH = 3, /* to has never run (a work-first child): it may come
                               from another worker's cache and has no errno or
                               stack pointer to resume yet */
};

/* Steps 2 to 4 of a switch on w: `to` (NULL: w's scheduler context) is
 * about to run. fake_save: where ASan keeps the departing context's fake
 * stack (NULL: the departing context ends, it keeps none). Returns the
 * stack pointer to resume (unused for a fresh thread). */
WEFT_INLINE void *weft__switch_in(struct weft__worker *w, void **fake_save, struct weft_thread *to,
                                  unsigned how)
{
    w->current = to;
#if WEFT_POSIX
    weft__fs_enter(w, to ? to->fs : NULL);
#endif
    if (!to) {
        weft__san_switch_to_sched(fake_save, w);
        return w->sched_sp;
    }
    if (how & WEFT__SWITCH_MOVE)
        to->worker = w;
    void *to_sp = to->sp;
    weft__san_switch_to_thread(fake_save, to);
    if (how != WEFT__SWITCH_FRESH)
        *w->errno_loc = to->err;
    return to_sp;
}

/* Step 1 for self, a user thread that leaves w's CPU to be resumed later
 * (not an exit). */
WEFT_INLINE void weft__switch_out(struct weft__worker *w, struct weft_thread *self)
{
    self->err = *w->errno_loc;
    w->tick++; /* a switch out of a user thread: policy/monitor.c */
}

/* weft__switch_how's steps 1 to 5, for self. */
WEFT_INLINE void weft__switch_steps(struct weft__worker *w, struct weft_thread *self,
                                    struct weft_thread *to, uintptr_t x, unsigned how)
{
    weft__switch_out(w, self);
    void *to_sp = weft__switch_in(w, &self->san_fake_stack, to, how);
    if (__builtin_constant_p(x) && x == 0)
        weft__ctx_switch_bare(&self->sp, to_sp, w);
    else
        weft__ctx_switch(&self->sp, to_sp, w, (void *)x);
}
/* Switches from self (running on w) to `to` (a ready thread, or NULL for
 * w's scheduler context), handing over x. Returns once self is resumed,
 * possibly on another worker; errno is self's again (installed by the
 * resumer, or by weft__ctx_resumed after a non-NULL xfer). The scheduler
 * context keeps no errno. how: WEFT__SWITCH_LOCAL or WEFT__SWITCH_MOVE. */
WEFT_INLINE void weft__switch_how(struct weft__worker *w, struct weft_thread *self,
                                  struct weft_thread *to, uintptr_t x, unsigned how)
{
    /* With the C++ runtime loaded, self's exception state leaves with it
     * and comes back where it resumes (sched/eh.h): one test, no state kept
     * across the switch. Not on weft__switch_on, the yield fast path, which
     * such programs never take (WEFT__GATE_CXX). */
    if ((how & WEFT__SWITCH_MOVE) && WEFT_UNLIKELY(weft__eh_get != NULL)) {
        weft__eh_leave(self);
        weft__switch_steps(w, self, to, x, how);
        weft__eh_arrive(self);
        return;
    }
    weft__switch_steps(w, self, to, x, how);
}

/* weft__switch_how for any ready `to` (or NULL). */
WEFT_INLINE void weft__switch(struct weft__worker *w, struct weft_thread *self,
                              struct weft_thread *to, uintptr_t x)
{
    weft__switch_how(w, self, to, x, WEFT__SWITCH_MOVE);
}

/* weft__switch for a `to` whose worker is w already (a thread of w's yield
 * FIFO: weft__yq_push), or NULL. */
WEFT_INLINE void weft__switch_on(struct weft__worker *w, struct weft_thread *self,
                                 struct weft_thread *to, uintptr_t x)
{
    weft__switch_how(w, self, to, x, WEFT__SWITCH_LOCAL);
}

/* w's scheduler context runs t until t switches back to it (which acts on
 * the xfer in weft__ctx_resumed, before this returns). */
WEFT_INLINE void weft__switch_from_sched(struct weft__worker *w, struct weft_thread *t)
{
    void *to_sp = weft__switch_in(w, &w->sched_fake_stack, t, WEFT__SWITCH_MOVE);
    weft__ctx_switch_bare(&w->sched_sp, to_sp, w);
}

/* Leaves self (running on w) for good, for `to` (NULL: w's scheduler
 * context), handing over x; the resumed side acts on x once self's stack is
 * out of use. Where x's action is a CAS of *word from 0 to `done` plus one
 * on *count, plain builds let the switch do it (weft__ctx_exit), with no
 * call of the resumed half; word NULL: no such action. */
WEFT_INLINE __attribute__((noreturn)) void
weft__switch_exit(struct weft__worker *w, struct weft_thread *to, uintptr_t x,
                  _Atomic uintptr_t *word, uintptr_t done, _Atomic uint64_t *count)
{
    void *to_sp = weft__switch_in(w, NULL, to, WEFT__SWITCH_MOVE);
#if !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
    if (word)
        weft__ctx_exit(to_sp, (void *)x, w, (void *)word, (void *)count, (void *)done);
#else
    (void)word, (void)done, (void)count;
#endif
    weft__ctx_jump(to_sp, (void *)x, w);
}

#if !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
/* The words weft__ctx_exit_push updates, where arch/context_push.h says. */
static_assert(offsetof(struct weft_thread, next) == WEFT__PUSH_LINK, "a slot's link word");
static_assert(offsetof(struct weft__stack_cache, head) == 0 &&
                  offsetof(struct weft__stack_cache, n) == WEFT__PUSH_N,
              "the stack cache's head and count");
static_assert(offsetof(struct weft__worker, nexited) - offsetof(struct weft__worker, cache) ==
                  WEFT__PUSH_COUNT,
              "the worker's exit count, from its stack cache");

/* Plain builds: leaves self (running on w) for good, for `to` (NULL: w's
 * scheduler context), and the switch itself puts self in w's stack cache
 * once its stack is out of use: pushed on the cache's list, one more in
 * the cache's count and in w's exit count (weft__ctx_exit_push), with no
 * xfer for the resumed half. For a slot that goes back to w's stack cache
 * with nothing else to do (a group member's: thread.c); the caller has
 * checked that the cache has room. */
WEFT_INLINE __attribute__((noreturn)) void
weft__switch_exit_push(struct weft__worker *w, struct weft_thread *self, struct weft_thread *to)
{
    void *to_sp = weft__switch_in(w, NULL, to, WEFT__SWITCH_MOVE);
    weft__ctx_exit_push(to_sp, self, &w->cache);
}
#endif

/* Switches from self (running on w) to the fresh thread t, which starts by
 * calling fn(t, &self->sp) on the stack that ends at top; returns once self
 * is resumed. */
WEFT_INLINE void weft__switch_spawn(struct weft__worker *w, struct weft_thread *self,
                                    struct weft_thread *t, void *top,
                                    void (*fn)(void *arg, void **save_sp))
{
    weft__switch_out(w, self);
    weft__switch_in(w, &self->san_fake_stack, t, WEFT__SWITCH_FRESH);
    weft__ctx_spawn(&self->sp, top, fn, t);
}

/* From a machine's home h: runs worker w's scheduler context until it
 * comes back home (weft__switch_home); w runs on this kernel thread now. */
WEFT_INLINE void weft__switch_to_worker(struct weft__home *h, struct weft__worker *w)
{
    void *to_sp = weft__switch_in(w, &h->fake, NULL, WEFT__SWITCH_LOCAL);
    /* token w: the scheduler context resumes on w (arch/context.h); the
     * home is resumed with a NULL token (weft__ctx_resumed: home) */
    weft__ctx_switch_bare(&h->sp, to_sp, w);
}

/* Switches from the current context (its stack pointer goes to *save, its
 * ASan fake stack to *fake_save) to this machine's home h. */
WEFT_INLINE void weft__switch_home(struct weft__home *h, void **save, void **fake_save)
{
#if WEFT_POSIX
    weft__fs_enter(NULL, NULL); /* a machine's home runs on its own block */
#endif
    weft__san_switch_to_home(fake_save, h);
    weft__ctx_switch_bare(save, h->sp, NULL);
}

#endif
