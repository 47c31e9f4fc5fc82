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

/* Resumes to_sp handing it xfer and token, abandoning the current context. */
_Noreturn void weft__ctx_jump(void *to_sp, void *xfer, void *token);

#endif
