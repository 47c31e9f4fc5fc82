/* context.h: the machine context of a user thread and the three operations
 * on it (make, switch, jump). One implementation per arch-ABI folder; the
 * sanitizer hooks live in C (thread/switch.h), never in the assembly.
 *
 * A suspended context is just a stack pointer: the callee-saved registers,
 * the FP control words and the resume address are on that stack.
 * weft__ctx_switch saves the current context into *save_sp and resumes to_sp;
 * the value `xfer` travels to the resumed side, which sees it as the return
 * value of its own weft__ctx_switch call (or as the argument of the entry
 * function of a fresh context). That is how the switched-to side learns what
 * to do with the thread that just left the CPU (see thread/xfer in sched.c).
 */
#ifndef WEFT_ARCH_CONTEXT_H
#define WEFT_ARCH_CONTEXT_H

#include <stddef.h>

/* entry(xfer, data) runs on a fresh stack; it must never return. */
typedef void (*weft__ctx_entry)(void *xfer, void *data);

/* Prepares a fresh context at the top of [lo, top) that will call
 * entry(xfer, data) when first resumed. Returns its stack pointer. */
void *weft__ctx_make(void *top, weft__ctx_entry entry, void *data);

/* Saves the current context into *save_sp, resumes to_sp handing it xfer;
 * returns the xfer given by whoever resumes us later. */
void *weft__ctx_switch(void **save_sp, void *to_sp, void *xfer);

/* Saves the current context into *save_sp (as weft__ctx_switch) and calls
 * fn(arg) on the fresh stack that ends at top (16-byte aligned); fn must
 * never return. Returns the xfer of whoever later resumes the saved context. */
void *weft__ctx_spawn(void **save_sp, void *top, void (*fn)(void *), void *arg);

/* Resumes to_sp handing it xfer, abandoning the current context. */
_Noreturn void weft__ctx_jump(void *to_sp, void *xfer);

#endif
