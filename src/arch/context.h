/* context.h: the machine context of a user thread and the operations on it
 * (make, switch, jump, spawn). One implementation per arch-ABI folder; the
 * sanitizer hooks live in C (sched/san.h), never in the assembly.
 *
 * A suspended context is just a stack pointer: the callee-saved registers,
 * the FP control words and the resume address are on that stack.
 * weft__ctx_switch saves the current context into *save_sp and resumes to_sp,
 * handing it two words: `xfer`, which tells the resumed side what to do with
 * the context that just left the CPU (see "Hand-off" in sched/sched.h), and
 * `token` (the scheduler passes the worker it runs on, which is the kernel
 * thread the resumed context now runs on).
 *
 * The resumed side learns them through weft__ctx_resumed, which the user of
 * this module provides: the assembly calls it on the resumed stack, after
 * the registers are restored and before the resumed code goes on (it
 * returns to that code, as if the switch had called it last), whenever xfer
 * is not NULL, and on every resume in sanitizer builds (where the fiber
 * switch must be completed first). A resume with a NULL xfer in a plain
 * build costs no call at all.
 */
#ifndef WEFT_ARCH_CONTEXT_H
#define WEFT_ARCH_CONTEXT_H

#include <stddef.h>

#include "arch/context_push.h"

/* Provided by the user of this module (the scheduler: sched/sched.c). */
void weft__ctx_resumed(void *token, void *xfer);

/* entry(data) runs on a fresh stack (after weft__ctx_resumed, as for any
 * resume); it must never return. */
typedef void (*weft__ctx_entry)(void *data);

/* Prepares a fresh context at the top of [lo, top) that will call
 * entry(data) when first resumed. Returns its stack pointer. */
void *weft__ctx_make(void *top, weft__ctx_entry entry, void *data);

/* Saves the current context into *save_sp and resumes to_sp handing it
 * token and xfer; returns once somebody resumes the saved context (after
 * weft__ctx_resumed, if that resume calls it). Argument order differs from
 * weft__ctx_jump: each is the order that needs the fewest register moves. */
void weft__ctx_switch(void **save_sp, void *to_sp, void *token, void *xfer);

/* Saves the current context into *save_sp (as weft__ctx_switch) and calls
 * fn(arg, save_sp) on the fresh stack that ends at top (16-byte aligned);
 * fn must never return. Returns once somebody resumes the saved context. */
void weft__ctx_spawn(void **save_sp, void *top, void (*fn)(void *arg, void **save_sp), void *arg);

/* weft__ctx_switch and weft__ctx_jump with a NULL xfer, without the xfer
 * test and without a call of weft__ctx_resumed in any build: the resumed code
 * is just returned to. In sanitizer builds the scheduler's fiber switch is
 * completed in weft__ctx_resumed, so there only a caller that makes its own
 * sanitizer annotations may use them (libweft_dist's worker, mpi/ranksched.c). */
void weft__ctx_switch_plain(void **save_sp, void *to_sp);
_Noreturn void weft__ctx_jump_plain(void *to_sp);

/* weft__ctx_switch with a NULL xfer. Plain builds use the entry without the
 * xfer test; sanitizer builds, where every resume calls weft__ctx_resumed,
 * use the general switch. */
#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)
/* always_inline: TSan's fiber switch comes before this call, so a frame of
 * its own would be entered on one fiber's shadow stack and left on the
 * other's. */
static inline __attribute__((always_inline)) void weft__ctx_switch_bare(void **save_sp, void *to_sp,
                                                                        void *token)
{
    weft__ctx_switch(save_sp, to_sp, token, NULL);
}
#else
static inline __attribute__((always_inline)) void weft__ctx_switch_bare(void **save_sp, void *to_sp,
                                                                        void *token)
{
    (void)token;
    weft__ctx_switch_plain(save_sp, to_sp);
}
#endif

/* The stack pointer of the context a signal interrupted; uc is the third
 * argument of an SA_SIGINFO handler. */
void *weft__ctx_signal_sp(const void *uc);

/* Resumes to_sp handing it xfer and token, abandoning the current context. */
_Noreturn void weft__ctx_jump(void *to_sp, void *xfer, void *token);

#if !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
/* Plain builds: resumes to_sp, abandoning the current context, then (on the
 * resumed stack, so after the abandoned one is out of use) moves the word
 * *word from 0 to `done` with a CAS (acq_rel) and adds 1 to the 64-bit
 * *count, whose only writer is the calling kernel thread. If the CAS fails,
 * weft__ctx_resumed(token, xfer) runs instead, as after weft__ctx_jump. The
 * caller gives the words their meaning (sched/switch.h: an exiting thread's
 * join word and its worker's exit count); this module knows none. */
_Noreturn void weft__ctx_exit(void *to_sp, void *xfer, void *token, void *word, void *count,
                              void *done);
/* Plain builds: resumes to_sp, abandoning the current context, then (on the
 * resumed stack) pushes node on the list whose head word is at `list`
 * through the node's link word (arch/context_push.h gives the offsets:
 * link = *list; *list = node) and adds 1 to the list's 32-bit count and to
 * the 64-bit count at their offsets from `list`, words whose only writer
 * is the calling kernel thread; then returns into the resumed code (no
 * xfer: nothing else to act on). The caller gives the words their meaning
 * (sched/switch.h: a finished group member's slot, its worker's stack
 * cache and exit count). Three arguments where six pointers would cost
 * the caller three instructions more. */
_Noreturn void weft__ctx_exit_push(void *to_sp, void *node, void *list);
#endif

#endif
