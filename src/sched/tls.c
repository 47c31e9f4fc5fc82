/* tls.c: the core's kernel-thread locals (sched/sched.h): the worker a
 * kernel thread runs, the bound or lent user thread it acts as, its
 * machine's home; and, in libweft-pthread's build only (WEFT_POSIX), the
 * kernel thread's own glibc block, the block the next spawn runs on, and
 * how %fs is set (sched/switch.h). */
#include "sched/sched.h"

__thread struct weft__worker *weft__tls_worker __attribute__((tls_model("initial-exec")));
__thread struct weft_thread *weft__tls_bound __attribute__((tls_model("initial-exec")));
__thread struct weft_thread *weft__tls_lent __attribute__((tls_model("initial-exec")));
__thread struct weft__home *weft__tls_home __attribute__((tls_model("initial-exec")));

#if WEFT_POSIX
#include <asm/prctl.h>
#include <sys/syscall.h>

__thread void *weft__tls_kfs __attribute__((tls_model("initial-exec")));
__thread void *weft__tls_spawn_fs __attribute__((tls_model("initial-exec")));
int weft__fs_wrfsbase;

/* The system call itself, not libc's syscall(): general registers only,
 * which is what no_caller_saved_registers saves (sched/switch.h). */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) void
weft__fs_syscall(void *fs)
{
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"((long)SYS_arch_prctl), "D"((long)ARCH_SET_FS), "S"(fs)
                     : "rcx", "r11", "memory");
}
#endif
