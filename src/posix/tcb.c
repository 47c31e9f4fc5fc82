/* tcb.c: glibc thread blocks for user threads, the check that glibc is
 * the one this was written against, and the library's load.
 *
 * A block comes from ld.so's _dl_allocate_tls (GLIBC_PRIVATE: glibc's
 * struct pthread with the static TLS of every module loaded at start
 * below it, the initial images copied, and a DTV for the modules opened
 * later), then gets the fields glibc's code reads through %fs on any
 * thread: tcb and self (the block), multiple_threads, stack_guard and
 * pointer_guard copied from the caller's block (every block must agree:
 * a frame may be entered under one block and left under another only in
 * the switch itself, and setjmp buffers are mangled with the pointer
 * guard), and the rseq area's cpu_id set to "not registered" so that
 * sched_getcpu asks the kernel instead of reading a CPU 0 nobody wrote.
 * Blocks are recycled as glibc recycles its stacks: the dynamic TLS the
 * DTV holds is freed and the DTV cleared, then _dl_allocate_tls_init
 * copies the initial images again.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/base.h"
#include "posix/posix.h"
#include "sched/switch.h"

static __thread struct pt *pt_tls __attribute__((tls_model("initial-exec")));
static ptrdiff_t pt_off; /* &pt_tls minus the thread pointer; immutable after load */

static void *(*dl_allocate_tls)(void *mem);
static void *(*dl_allocate_tls_init)(void *tcb, _Bool init_tls);
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/* Free blocks: a list through their first TLS-free word (the tcb field,
 * rewritten on reuse), under free_lock. */
static weft__lock free_lock;
static void *free_tcbs;
static size_t nfree;
#define FREE_MAX 4096 /* blocks kept; more go back to glibc */
static void (*dl_deallocate_tls)(void *tcb, _Bool dealloc_tcb);

static inline void *thread_pointer(void)
{
    void *tp;
    __asm__ volatile("movq %%fs:0, %0" : "=r"(tp) : : "memory"); /* changes with each switch */
    return tp;
}

static void refuse(const char *what)
{
    fprintf(stderr,
            "weft-pthread: %s; this drop-in depends on glibc 2.36's x86-64 internals "
            "(docs/posix.md). Run the program without it, or set WEFT_POSIX_GLIBC_ANY=1 "
            "to try anyway.\n",
            what);
    _exit(127);
}

void weft__posix_check_glibc(void)
{
    const char *v = gnu_get_libc_version();
    const char *any = getenv("WEFT_POSIX_GLIBC_ANY");
    if (strcmp(v, "2.36") != 0 && !(any && *any == '1')) {
        char msg[96];
        snprintf(msg, sizeof msg, "glibc %s is not 2.36", v);
        refuse(msg);
    }
    dl_allocate_tls = dlvsym(RTLD_DEFAULT, "_dl_allocate_tls", "GLIBC_PRIVATE");
    dl_allocate_tls_init = dlvsym(RTLD_DEFAULT, "_dl_allocate_tls_init", "GLIBC_PRIVATE");
    dl_deallocate_tls = dlvsym(RTLD_DEFAULT, "_dl_deallocate_tls", "GLIBC_PRIVATE");
    if (!dl_allocate_tls || !dl_allocate_tls_init || !dl_deallocate_tls)
        refuse("ld.so exports no _dl_allocate_tls / _dl_allocate_tls_init / _dl_deallocate_tls");
    char *tp = thread_pointer();
    if (*(void **)(tp + TCB_SELF) != tp)
        refuse("the thread block's self field is not at %fs:0x10");
    if (*(uintptr_t *)(tp + TCB_STACK_GUARD) == 0)
        refuse("the stack guard at %fs:0x28 is zero");
    /* the initial thread is on glibc's list of user stacks: its list
     * field links back to itself through its neighbours */
    void **list = (void **)(tp + TCB_LIST);
    if (!list[0] || !list[1] || ((void **)list[0])[1] != list || ((void **)list[1])[0] != list)
        refuse("the thread block's stack-list field is not at 0x2c0");
    if (*(pid_t *)(tp + TCB_TID) != gettid())
        refuse("the thread block's tid is not at 0x2d0");
    if (&__rseq_offset && &__rseq_size && __rseq_size >= 8) {
        int32_t cpu = *(int32_t *)(tp + __rseq_offset + 4);
        if (cpu < -2 || cpu > 65535)
            refuse("the rseq area's cpu_id is not where __rseq_offset says");
    }
}

struct pt *weft__posix_pt_of(void *tcb)
{
    return tcb ? *(struct pt **)((char *)tcb + pt_off) : NULL;
}

void weft__posix_set_pt(void *tcb, struct pt *p)
{
    *(struct pt **)((char *)tcb + pt_off) = p;
}

/* The DTV's entries (glibc's dtv_t). */
union dtv {
    size_t counter;
    struct {
        void *val;
        void *to_free;
    } pointer;
};

static void clear_dtv(char *tcb)
{
    union dtv *dtv = *(union dtv **)(tcb + 8);
    size_t n = dtv[-1].counter;
    for (size_t i = 0; i < n; i++)
        if (dtv[1 + i].pointer.to_free)
            free(dtv[1 + i].pointer.to_free);
    memset(dtv, 0, (n + 1) * sizeof *dtv);
}

void *weft__posix_tcb_get(void)
{
    char *tcb = NULL;
    weft__lock_acquire(&free_lock);
    if (free_tcbs) {
        tcb = free_tcbs;
        free_tcbs = *(void **)tcb;
        nfree--;
    }
    weft__lock_release(&free_lock);
    if (tcb) {
        clear_dtv(tcb);
        dl_allocate_tls_init(tcb, 1);
    } else {
        tcb = dl_allocate_tls(NULL);
        if (!tcb)
            return NULL;
    }
    char *me = thread_pointer();
    *(void **)(tcb + TCB_TCB) = tcb;
    *(void **)(tcb + TCB_SELF) = tcb;
    *(int *)(tcb + TCB_MULTIPLE) = 1;
    /* linked to itself: a fork in this thread takes it off a list
     * (glibc's __reclaim_stacks) before it adds it to one */
    void **list = (void **)(tcb + TCB_LIST);
    list[0] = list[1] = list;
    *(uintptr_t *)(tcb + TCB_STACK_GUARD) = *(uintptr_t *)(me + TCB_STACK_GUARD);
    *(uintptr_t *)(tcb + TCB_POINTER_GUARD) = *(uintptr_t *)(me + TCB_POINTER_GUARD);
    if (&__rseq_offset && &__rseq_size && __rseq_size >= 8)
        *(int32_t *)(tcb + __rseq_offset + 4) = -2; /* RSEQ_CPU_ID_REGISTRATION_FAILED */
    return tcb;
}

void weft__posix_tcb_put(void *tcb)
{
    weft__lock_acquire(&free_lock);
    if (nfree < FREE_MAX) {
        *(void **)tcb = free_tcbs;
        free_tcbs = tcb;
        nfree++;
        tcb = NULL;
    }
    weft__lock_release(&free_lock);
    if (tcb)
        dl_deallocate_tls(tcb, 1);
}

/* A kernel thread that was not made here ends: its record's keys. */
static pthread_key_t foreign_key;
extern __typeof__(pthread_key_create) weft__real_pthread_key_create;
extern __typeof__(pthread_setspecific) weft__real_pthread_setspecific;
/* thread.c's key destructors (weft__posix_thread_end), set at its start:
 * the thread blocks sit below the thread life cycle. */
void (*weft__posix_on_end)(struct pt *p);

static void foreign_end(void *arg)
{
    struct pt *p = arg;
    if (weft__posix_on_end)
        weft__posix_on_end(p);
    pt_tls = NULL;
    free(p);
}

struct pt *weft__posix_self(void)
{
    struct pt *p = pt_tls;
    if (WEFT_LIKELY(p))
        return p;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tcb = thread_pointer();
    p->state = PT_RUNNING;
    p->sched_policy = SCHED_OTHER;
    pt_tls = p;
    weft__real_pthread_setspecific(foreign_key, p);
    return p;
}

struct pt *weft__posix_self_if_any(void)
{
    return pt_tls;
}

__attribute__((constructor(101))) static void posix_load(void)
{
    weft__posix_real_init();
    weft__posix_check_glibc();
    pt_off = (char *)&pt_tls - (char *)thread_pointer();
    weft__fs_wrfsbase = (getauxval(AT_HWCAP2) & 2) != 0; /* HWCAP2_FSGSBASE */
    const char *fs = getenv("WEFT_POSIX_FSBASE");
    if (fs && strcmp(fs, "syscall") == 0)
        weft__fs_wrfsbase = 0;
    weft__real_pthread_key_create(&foreign_key, foreign_end);
}

/* Runs the caller's pending signals that it does not block (signal.c);
 * here for the fast path's direct read of pt_tls. */
struct weft__posix_sig_ops weft__posix_sig_ops;
_Atomic int weft__posix_sig_router_owed;

int weft__posix_deliver(void)
{
    struct pt *p = pt_tls;
    if (!p || !atomic_load_explicit(&p->sigpending, memory_order_relaxed))
        return 0;
    return weft__posix_sig_ops.run_ready ? weft__posix_sig_ops.run_ready(p) : 0;
}
