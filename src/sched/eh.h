/* eh.h: the C++ runtime's exception state, carried with each user thread.
 *
 * Design
 * ------
 * The C++ runtime (libstdc++'s libsupc++, libc++abi) keeps the exceptions
 * being handled (the caught list that __cxa_begin_catch pushes and
 * __cxa_end_catch pops, which std::current_exception and `throw;` read) and
 * the count of exceptions in flight (std::uncaught_exceptions) in globals
 * per kernel thread, which __cxa_get_globals() returns. A user thread that
 * switches inside a catch block, or in a destructor that runs while the
 * stack unwinds, would leave its state to the next thread on that kernel
 * thread and find another's (or none) where it resumes: the next
 * __cxa_end_catch pops the wrong record, and the program ends in
 * std::terminate or a crash. So the state travels with the user thread, as
 * folly's fibers carry it:
 *  - leave (weft__eh_leave): a user thread about to switch out moves the
 *    kernel thread's globals into its descriptor and zeroes them;
 *  - arrive (weft__eh_arrive): the same thread, resumed, moves them back
 *    into the globals of the kernel thread it now runs on.
 * Invariant: a kernel thread's globals hold the state of the user thread it
 * runs, and are zero while it runs none (its scheduler context, a task,
 * between two threads), so a fresh thread starts with none and needs no
 * step of its own; an exiting thread's handlers are all closed (weft_exit's
 * unwind ends them), and the slow exits zero the globals anyway
 * (weft__eh_clear) for an exit inside a destructor during an unwind.
 *
 * Cost: only programs that have the C++ runtime loaded at weft_init pay
 * (weft__eh_get, found by weft__eh_find). For them weft_init sets
 * WEFT__GATE_CXX on every worker, which sends yields, parks and exits off
 * their fast paths (the attn_any test they make anyway), and
 * WEFT__POLICY_CXX, which sends spawns to spawn_cxx (thread.c): a C
 * program's yield, spawn and exit run the same instructions as before.
 * The steps are then taken where every switch of a user thread that
 * resumes goes through: weft__switch (switch.h: leave before, arrive once
 * resumed) and the spawn (leave before, arrive after, the parent resuming
 * wherever a work-first child let it). weft__switch's test of eh_get is
 * the only cost a C program sees, on its slow switches (yield_slow, park,
 * preemption: two instructions).
 * Rejected: carrying the state in weft__switch_in/out at every switch (two
 * tests per yield: 54 -> 58 instructions), and exporting our own
 * __cxa_get_globals (libweft exports weft_ names only, and a static
 * libstdc++ does not call through the PLT).
 * Preemption never interrupts libstdc++ or libgcc (sched/preempt.c), so no
 * thread is switched out holding a pointer to its kernel thread's globals.
 */
#ifndef WEFT_SCHED_EH_H
#define WEFT_SCHED_EH_H

#include <stddef.h>

#include "base/base.h"
#include "desc/desc.h"

/* The head of the C++ runtime's __cxa_eh_globals, the same in libsupc++
 * and libc++abi on x86-64 (ARM's EHABI adds a field we never touch). */
struct weft__eh_globals {
    void *caught;      /* caughtExceptions: the handlers' stack, innermost first */
    unsigned uncaught; /* uncaughtExceptions: thrown and not yet caught */
};

/* __cxa_get_globals if the C++ runtime is loaded, else NULL. */
typedef struct weft__eh_globals *weft__eh_get_fn(void);
weft__eh_get_fn *weft__eh_find(void);
/* The C++ runtime's __cxa_get_globals, NULL: none loaded; set by weft_init
 * (weft__eh_find), immutable while the runtime runs. */
extern weft__eh_get_fn *weft__eh_get WEFT_INTERNAL;

/* This kernel thread's globals, once asked (NULL: not yet): a load where
 * __cxa_get_globals costs a call and __tls_get_addr. */
extern __thread struct weft__eh_globals *weft__tls_eh __attribute__((tls_model("initial-exec")));
struct weft__eh_globals *weft__eh_here_slow(void);

/* The calling kernel thread's globals (weft__eh_get is set). Read after
 * a switch, it is the globals of the kernel thread the caller resumed on. */
WEFT_INLINE struct weft__eh_globals *weft__eh_here(void)
{
    struct weft__eh_globals *g = weft__tls_eh;
    if (WEFT_UNLIKELY(!g))
        g = weft__eh_here_slow();
    return g;
}

/* self, a user thread about to switch out (not to exit), takes its state
 * with it. */
WEFT_INLINE void weft__eh_leave(struct weft_thread *self)
{
    struct weft__eh_globals *g = weft__eh_here();
    self->eh_caught = g->caught;
    self->eh_uncaught = g->uncaught;
    g->caught = NULL;
    g->uncaught = 0;
}

/* self, resumed after a weft__eh_leave, installs its state where it runs
 * now (the kernel thread may have changed: eh_get is asked again). */
WEFT_INLINE void weft__eh_arrive(struct weft_thread *self)
{
    struct weft__eh_globals *g = weft__eh_here();
    g->caught = self->eh_caught;
    g->uncaught = self->eh_uncaught;
}

/* An exiting thread leaves no state behind. */
WEFT_INLINE void weft__eh_clear(void)
{
    struct weft__eh_globals *g = weft__eh_here();
    g->caught = NULL;
    g->uncaught = 0;
}

#endif
