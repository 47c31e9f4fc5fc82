/* ctx_san.S: the three context operations of weft_dist in sanitizer builds.
 *
 * Plain builds use weft's own (arch/context.h). In sanitizer builds those
 * always call the single-process scheduler's resumed-side hook, which a
 * rank's worker does not have; these are the same operations with the same
 * saved layout (arch/x86_64-sysv/context.S) and no hook: dist/sched.c makes
 * the sanitizer's fiber annotations itself, in C.
 *
 *   sp - 8   MXCSR (4 bytes) | x87 control word (2 bytes) | pad
 *   sp + 0   r15, r14, r13, r12, rbx, rbp
 *   sp + 48  resume address
 */
#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)
    .text

/* void weft__dist_switch(void **save_sp [rdi], void *to_sp [rsi]) */
    .globl  weft__dist_switch
    .hidden weft__dist_switch
    .type   weft__dist_switch, @function
    .p2align 4
weft__dist_switch:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    stmxcsr -8(%rsp)
    fnstcw  -4(%rsp)
    movq    %rsp, (%rdi)
    movq    %rsi, %rdi
    jmp     weft__dist_jump
    .cfi_endproc
    .size   weft__dist_switch, .-weft__dist_switch

/* _Noreturn void weft__dist_jump(void *to_sp [rdi]) */
    .globl  weft__dist_jump
    .hidden weft__dist_jump
    .type   weft__dist_jump, @function
    .p2align 4
weft__dist_jump:
    .cfi_startproc
    ldmxcsr -8(%rdi)
    fldcw   -4(%rdi)
    movq    %rdi, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .cfi_endproc
    .size   weft__dist_jump, .-weft__dist_jump

/* void weft__dist_spawn_ctx(void **save_sp [rdi], void *top [rsi],
 *                           void (*fn)(void *, void **) [rdx], void *arg [rcx])
 * Saves the current context, then calls fn(arg, save_sp) below top. */
    .globl  weft__dist_spawn_ctx
    .hidden weft__dist_spawn_ctx
    .type   weft__dist_spawn_ctx, @function
    .p2align 4
weft__dist_spawn_ctx:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    stmxcsr -8(%rsp)
    fnstcw  -4(%rsp)
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp
    pushq   $0              /* fake return address: backtraces end here */
    .cfi_undefined rip
    movq    %rdi, %rsi
    movq    %rcx, %rdi
    jmpq    *%rdx
    .cfi_endproc
    .size   weft__dist_spawn_ctx, .-weft__dist_spawn_ctx
#endif

    .section .note.GNU-stack,"",@progbits
