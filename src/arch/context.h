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

/* What a resumed context receives: the xfer value, and the resumer's
 * token (the scheduler hands over the worker it runs on: the kernel thread
 * the resumed context now runs on, known without a TLS read). */
struct weft__resume {
    void *xfer;
    void *token;
};

/* entry(xfer, data) runs on a fresh stack; it must never return. */
typedef void (*weft__ctx_entry)(void *xfer, void *data);

/* Prepares a fresh context at the top of [lo, top) that will call
 * entry(xfer, data) when first resumed. Returns its stack pointer. */
void *weft__ctx_make(void *top, weft__ctx_entry entry, void *data);

/* Saves the current context into *save_sp, resumes to_sp handing it token
 * and xfer; returns the xfer and token given by whoever resumes us later.
 * (Argument order differs from weft__ctx_jump: each is the order that needs
 * the fewest register moves to become the resumed side's return value.) */
struct weft__resume weft__ctx_switch(void **save_sp, void *to_sp, void *token, void *xfer);

/* Saves the current context into *save_sp (as weft__ctx_switch) and calls
 * fn(arg, save_sp) on the fresh stack that ends at top (16-byte aligned);
 * fn must never return. Returns the xfer and token of whoever later resumes
 * the saved context. */
struct weft__resume weft__ctx_spawn(void **save_sp, void *top, void (*fn)(void *arg, void **save_sp),
                                    void *arg);

/* Resumes to_sp handing it xfer and token, abandoning the current context. */
_Noreturn void weft__ctx_jump(void *to_sp, void *xfer, void *token);

#endif
