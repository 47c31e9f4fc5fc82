/* context.S: context switch for x86-64 System V.
 *
 * A suspended context's stack around its saved stack pointer:
 *
 *   sp - 8   MXCSR (4 bytes) | x87 control word (2 bytes) | pad
 *   sp + 0   r15
 *   sp + 8   r14
 *   sp + 16  r13
 *   sp + 24  r12
 *   sp + 32  rbx
 *   sp + 40  rbp
 *   sp + 48  resume address
 *
 * The control words sit in the red zone below the saved pointer: nothing
 * runs on a suspended stack, so they stay put, and neither half spends an
 * instruction moving the stack pointer over them.
 *
 * Only callee-saved state is kept: the caller of weft__ctx_switch has already
 * saved everything else, as for any call. The status flags of MXCSR and the
 * x87 status word are caller-saved by the ABI; their control bits are not,
 * so both control words travel with the thread. No signal mask is touched.
 *
 * The resume half ends in RESUMED: a plain return when xfer is NULL, else a
 * tail call of weft__ctx_resumed(token, xfer), which then returns to the
 * resumed code itself (its stack and callee-saved registers are those of a
 * call made by the resumed code's callee). Sanitizer builds always call it.
 */
#include "arch/context_push.h"

#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)
#define WEFT__RESUME_ALWAYS 1
#else
#define WEFT__RESUME_ALWAYS 0
#endif
    .hidden weft__ctx_resumed

/* Pushes the callee-saved registers and the control words, and stores the
 * stack pointer through \save (the layout above). */
.macro SAVE_CONTEXT save
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    stmxcsr -8(%rsp)
    fnstcw  -4(%rsp)
    movq    %rsp, (\save)
.endm

/* Resumes the context saved at \to: control words read below \to, then the
 * registers. Ends with the stack at the resume address. */
.macro RESTORE_CONTEXT to
    ldmxcsr -8(\to)
    fldcw   -4(\to)
    movq    \to, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
.endm

/* Returns into the resumed code; for a non-NULL \xfer (every resume in
 * sanitizer builds) tail-calls weft__ctx_resumed(\token, \xfer) on the way.
 * The argument moves come after the test: a NULL xfer costs two
 * instructions and a return. */
.macro RESUME token, xfer
#if !WEFT__RESUME_ALWAYS
    testq   \xfer, \xfer
    jnz     1f
    ret
1:
#endif
    movq    \token, %rdi
.ifnc \xfer, %rsi
    movq    \xfer, %rsi
.endif
    jmp     weft__ctx_resumed
.endm

    .text

/* void weft__ctx_switch(void **save_sp [rdi], void *to_sp [rsi], void *token [rdx], void *xfer [rcx]) */
    .globl  weft__ctx_switch
    .hidden weft__ctx_switch
    .type   weft__ctx_switch, @function
    .p2align 4
weft__ctx_switch:
    .cfi_startproc
    SAVE_CONTEXT %rdi
    RESTORE_CONTEXT %rsi
    RESUME  %rdx, %rcx
    .cfi_endproc
    .size   weft__ctx_switch, .-weft__ctx_switch

/* void weft__ctx_switch_plain(void **save_sp [rdi], void *to_sp [rsi])
 * weft__ctx_switch with a NULL xfer and, in every build, no call of
 * weft__ctx_resumed: nothing to hand over, so the resumed code is simply
 * returned to (arch/context.h says who may use it in sanitizer builds). */
    .globl  weft__ctx_switch_plain
    .hidden weft__ctx_switch_plain
    .type   weft__ctx_switch_plain, @function
    .p2align 4
weft__ctx_switch_plain:
    .cfi_startproc
    SAVE_CONTEXT %rdi
    RESTORE_CONTEXT %rsi
    ret
    .cfi_endproc
    .size   weft__ctx_switch_plain, .-weft__ctx_switch_plain

/* _Noreturn void weft__ctx_jump(void *to_sp [rdi], void *xfer [rsi], void *token [rdx]) */
    .globl  weft__ctx_jump
    .hidden weft__ctx_jump
    .type   weft__ctx_jump, @function
    .p2align 4
weft__ctx_jump:
    .cfi_startproc
    RESTORE_CONTEXT %rdi
    RESUME  %rdx, %rsi
    .cfi_endproc
    .size   weft__ctx_jump, .-weft__ctx_jump

/* void weft__ctx_exit(void *to_sp [rdi], void *xfer [rsi], void *token [rdx],
 *                     _Atomic uintptr_t *word [rcx], uint64_t *count [r8],
 *                     uintptr_t done [r9])
 * For plain builds: abandons the current context for good and resumes to_sp,
 * then, on the resumed stack (the abandoned one is no longer in use), moves
 * *word from 0 to done with one CAS and adds 1 to *count (a plain add: its
 * only writer is the caller's kernel thread). If the CAS fails, the resumed
 * half is called with token and xfer instead, as weft__ctx_jump would. What
 * the words mean is the caller's (sched/switch.h ends a thread whose join
 * word is still 0, RUNNING, with it). */
    .globl  weft__ctx_exit
    .hidden weft__ctx_exit
    .type   weft__ctx_exit, @function
    .p2align 4
weft__ctx_exit:
    .cfi_startproc
    RESTORE_CONTEXT %rdi
    xorl    %eax, %eax
    lock cmpxchgq %r9, (%rcx)
    jne     1f
    addq    $1, (%r8)
    ret
1:
    movq    %rdx, %rdi
    jmp     weft__ctx_resumed
    .cfi_endproc
    .size   weft__ctx_exit, .-weft__ctx_exit

/* void weft__ctx_exit_push(void *to_sp [rdi], void *node [rsi], void *list [rdx])
 * For plain builds: abandons the current context for good and resumes to_sp,
 * then, on the resumed stack, pushes node on the list whose head word is at
 * list (node's link word = *list; *list = node), adds 1 to the list's
 * 32-bit count and to the 64-bit count (offsets: arch/context_push.h), all
 * plain (their only writer is the caller's kernel thread), and returns into
 * the resumed code. The scheduler uses it to put a finished group member's
 * slot, whose stack is the abandoned one, in the worker's stack cache. */
    .globl  weft__ctx_exit_push
    .hidden weft__ctx_exit_push
    .type   weft__ctx_exit_push, @function
    .p2align 4
weft__ctx_exit_push:
    .cfi_startproc
    RESTORE_CONTEXT %rdi
    movq    (%rdx), %rax
    movq    %rax, WEFT__PUSH_LINK(%rsi)
    movq    %rsi, (%rdx)
    addl    $1, WEFT__PUSH_N(%rdx)
    addq    $1, WEFT__PUSH_COUNT(%rdx)
    ret
    .cfi_endproc
    .size   weft__ctx_exit_push, .-weft__ctx_exit_push

/* First resume of a fresh context lands here (after weft__ctx_resumed, if
 * called) with the entry function in r12 and its data in r13 (placed by
 * weft__ctx_make). The stack is 16-byte aligned; the entry never returns. */
    .globl  weft__ctx_trampoline
    .hidden weft__ctx_trampoline
    .type   weft__ctx_trampoline, @function
    .p2align 4
weft__ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip      /* outermost frame for debuggers and unwinders */
    movq    %r13, %rdi
    callq   *%r12
    ud2
    .cfi_endproc
    .size   weft__ctx_trampoline, .-weft__ctx_trampoline


/* void weft__ctx_spawn(void **save_sp [rdi], void *top [rsi],
 *                      void (*fn)(void *, void **) [rdx], void *arg [rcx])
 * Saves the current context like weft__ctx_switch, then calls fn(arg, save_sp)
 * on the fresh stack below top (16-byte aligned by the caller). fn never
 * returns; the saved context is resumed later by a switch or jump, and then
 * this call returns. Used by work-first spawn: no initial frame to build, no
 * restore half to run. */
    .globl  weft__ctx_spawn
    .hidden weft__ctx_spawn
    .type   weft__ctx_spawn, @function
    .p2align 4
weft__ctx_spawn:
    .cfi_startproc
    SAVE_CONTEXT %rdi
    movq    %rsi, %rsp
    pushq   $0              /* fake return address: backtraces end here */
    .cfi_undefined rip
    movq    %rdi, %rsi
    movq    %rcx, %rdi
    jmpq    *%rdx
    .cfi_endproc
    .size   weft__ctx_spawn, .-weft__ctx_spawn

/* _Noreturn void weft__ctx_jump_plain(void *to_sp [rdi])
 * weft__ctx_jump with a NULL xfer and, in every build, no call of
 * weft__ctx_resumed, as weft__ctx_switch_plain. */
    .globl  weft__ctx_jump_plain
    .hidden weft__ctx_jump_plain
    .type   weft__ctx_jump_plain, @function
    .p2align 4
weft__ctx_jump_plain:
    .cfi_startproc
    RESTORE_CONTEXT %rdi
    ret
    .cfi_endproc
    .size   weft__ctx_jump_plain, .-weft__ctx_jump_plain

    .section .note.GNU-stack,"",@progbits
