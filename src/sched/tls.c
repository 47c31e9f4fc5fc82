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
#include <unistd.h>

__thread void *weft__tls_kfs __attribute__((tls_model("initial-exec")));
__thread void *weft__tls_spawn_fs __attribute__((tls_model("initial-exec")));
int weft__fs_wrfsbase;

void weft__fs_syscall(void *fs)
{
    syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
}
#endif
