/* context.c: builds the initial frame of a fresh x86-64 context. */
#include "arch/context.h"

#include <stdint.h>
#include <string.h>
#include <ucontext.h>

void weft__ctx_trampoline(void);

void *weft__ctx_make(void *top, weft__ctx_entry entry, void *data)
{
    /* After the restore pops 56 bytes the trampoline starts with a 16-byte
     * aligned stack; the 16 bytes above hold a zero "return address" so that
     * backtraces end there. The control words go below sp (context.S). */
    uintptr_t t = (uintptr_t)top & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(t - 16 - 56);
    memset(sp - 1, 0, 80);
    /* A new thread inherits the creator's FP control words, as with
     * pthread_create. */
    uint32_t mxcsr = __builtin_ia32_stmxcsr();
    uint16_t fpcw;
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
    memcpy((char *)sp - 8, &mxcsr, 4);
    memcpy((char *)sp - 4, &fpcw, 2);
    sp[3] = (uint64_t)(uintptr_t)entry;                /* r12 */
    sp[2] = (uint64_t)(uintptr_t)data;                 /* r13 */
    sp[6] = (uint64_t)(uintptr_t)weft__ctx_trampoline; /* resume address */
    return sp;
}

void *weft__ctx_signal_sp(const void *uc)
{
    return (void *)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];
}
