/* preempt.c: preemption of user threads by a signal, at points where the
 * interrupted code may safely be switched away from.
 *
 * Design
 * ------
 * Who decides: the monitor (monitor.c) asks for a quantum preemption when
 * a thread kept its worker past the quantum while a thread of its class or
 * higher is ready there; whoever readies a thread asks for a priority
 * preemption when every worker runs a lower class (weft__preempt_for_class).
 * A request names the worker's tick at the decision (w->preempt_req), so a
 * thread that switched meanwhile is never preempted for another's sake,
 * and it is one signal (SIGURG, as Go: default-ignored, rarely used) to the
 * kernel thread that runs the worker. Idle workers and workers whose thread
 * has nothing waiting behind it are never signalled.
 *
 * What the handler does: signal-yield, with a safety rule. It runs on the
 * interrupted thread's stack and switches to the next ready thread as a
 * yield would (the interrupted thread goes behind the ready threads of its
 * class); the interrupted thread is resumed later by a plain switch, on any
 * worker, back into the handler, and returns from it with the kernel's
 * sigreturn, which restores every register, the floating-point state
 * (MXCSR, x87 control word, so fesetround survives) and the signal mask.
 * errno is restored before the switch, so the thread's saved errno is the
 * interrupted value. The rule: the interrupted instruction must be in the
 * program's own code, never in libweft (whose code holds worker state in
 * registers), the C library or the dynamic loader, libgcc, libstdc++,
 * liburing, the vDSO, libdw or a sanitizer runtime (which hold locks, or
 * libweft's own state in the registers of a caller below, that a thread resumed
 * elsewhere, or another thread on this worker, could need: malloc's
 * arenas, stdio's FILE locks, the loader lock). The handler otherwise
 * leaves the request pending and asks to be signalled again soon: a
 * one-shot kernel timer per worker (created at its first refusal, aimed at
 * the kernel thread that runs it) fires after RETRY_FAST_NS, doubling for
 * every second refusal of the same request up to RETRY_FAST_MAX tries; after that
 * the monitor's slower retries take over (a thread blocked in a system
 * call is not woken every few microseconds). A loop that calls malloc,
 * printf or clock_gettime spends enough of its time in its own code to be
 * caught there within a few tries: a spinner that reads the clock every
 * microsecond was refused about one signal in four, and with the monitor's
 * 0.2-1 ms retries alone a HIGH thread's wake-to-run p99 was over 1 ms
 * (make bench-prio). The retries' delays (issue 24, item 5; bench_prio_flood
 * -i clock): a first one of 5 us fired, on a loaded virtual machine, before
 * the handler that armed it had returned from its last system call (the
 * refused pc was libc's syscall() in 10 of 16 samples), so it was refused
 * every time, and so was the next in half the cases; with delays that
 * doubled at each refusal, a HIGH thread's p99 was the sum of four of them
 * (5+10+20+40 us and more). Now the first is 10 us, each delay is used
 * twice before it doubles, the handler arms the timer as its last system
 * call (no gettid: the worker knows its kernel thread), and each delay is
 * drawn within [d, 3d/2), so that a loop of fixed period is not caught at
 * the same point of it again and again.
 * A priority request that is refused also asks another worker that runs
 * a lower class, if any is not asked yet: its thread is caught at an
 * independent point, and the thread readied waits in the injection queue,
 * which either may take it from. Bound threads and weft_blocking calls run without a
 * worker: the handler finds none and returns. A thread that holds a spin
 * lock (weft_spin, mltp's spin kind) is not preempted either, wherever it
 * is (a kernel's preempt_disable): preempted in its critical section, it
 * would wait in its worker's queue behind a waiter that spins in libweft,
 * where it cannot be preempted, for ever. The refused request waits and
 * the unlock that releases its last spin lock honours it at once
 * (weft__preempt_deferred). Rejected: waiters that weft_yield after a
 * bounded spin (a HIGH waiter's yield keeps the worker from a NORMAL
 * holder, and every waiter pays the yields).
 *
 * Compared:
 *  - signal-yield anywhere (Argobots' fastest): switching inside malloc or
 *    printf deadlocks the next caller on this worker. Rejected.
 *  - KLT-switching (the interrupted thread keeps its kernel thread, the
 *    worker moves to another one, machine.c's hand-off): it may interrupt
 *    libc too, but every preemption costs a kernel-thread wake-up and a
 *    second one to resume, and a thread preempted holding a lock that every
 *    worker's thread then waits for in the kernel still needs a kernel
 *    thread of its own to finish. Kept for a later step (docs/priorities.md).
 *  - cooperative checks at scheduling points only: a loop that calls
 *    nothing is never preempted. The monitor's requests do use them: a
 *    pending request is honoured at the next switch anyway.
 * The libweft bounds: a shared libweft is one object; a static one is
 * linked with its code renamed into the section weft_text (CMakeLists), whose
 * bounds the linker provides. Without them (or under ThreadSanitizer, whose
 * deferred signal delivery does not mix with switching in a handler) the
 * runtime stays cooperative.
 *
 * The drop-in (WEFT_POSIX) ends an asynchronously cancelled thread from
 * the handler, at the points where it could switch it away (a hook:
 * preempt.h, posix/async.c).
 *
 * Raw system calls: the handler is installed with SA_RESTART, so an
 * interrupted call behaves as after any SA_RESTART signal (signal(7)):
 * most are restarted, but some fail with EINTR whatever the flag
 * (e.g. epoll_wait, poll, select, nanosleep and clock_nanosleep report
 * the time left or EINTR, semop with a timeout, sigtimedwait, io_getevents,
 * read from an inotify descriptor, socket calls with a timeout). weft's
 * own calls retry.
 */
#include "policy/preempt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "os/kwait.h"
#include "policy/machine.h"
#include "policy/monitor.h"
#include "sched/events.h"
#include "sched/sched.h"
#include "sched/switch.h"

#define MAX_RANGES     64     /* code ranges that must not be interrupted */
#define RETRY_FAST_NS  10000L /* the first fast retry of a refused request */
#define RETRY_FAST_MAX 8      /* fast retries of one request: 10 us .. 80 us, twice each */

/* Bounds of a static libweft's code (renamed into weft_text at build);
 * undefined (NULL) in the shared library. */
extern char __start_weft_text[] __attribute__((weak, visibility("hidden")));
extern char __stop_weft_text[] __attribute__((weak, visibility("hidden")));
/* The user threads' first frames' code is in the section weft.entry
 * (WEFT_ENTRY, thread.c), found in libweft's file at set-up: a name that
 * is not an identifier gets no __start_ symbols, which a shared library
 * would export. */
#define ENTRY_SECTION "weft.entry"

/* Threads rescued from blocked workers at once. Each holds a kernel thread
 * blocked anyway; a full table leaves the next blocked worker unrescued,
 * which is a deadlock when the thread it waits for is ready behind it. */
#define MAX_RESCUED 256

struct range {
    uintptr_t lo, hi;
};

#ifdef WEFT_TAIL_TRACE
#include <sched.h>
struct tt_ev {
    uint64_t ns;
    int kind, wid, cpu;
    long a;
};
#define TT_N (1u << 20)
static struct tt_ev tt[TT_N];
static _Atomic unsigned tt_n;
void weft__tt(int kind, int wid, long a)
{
    unsigned i = atomic_fetch_add_explicit(&tt_n, 1, memory_order_relaxed);
    if (i < TT_N)
        tt[i] = (struct tt_ev){ weft__now_ns(), kind, wid, sched_getcpu(), a };
}
static void tt_dump(void)
{
    const char *path = getenv("WEFT_TAIL_TRACE");
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    unsigned n = atomic_load(&tt_n);
    if (n > TT_N)
        n = TT_N;
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "%llu %d %d %d %ld\n", (unsigned long long)tt[i].ns, tt[i].kind, tt[i].wid,
                tt[i].cpu, tt[i].a);
    fprintf(f, "END\n");
    fclose(f);
    atomic_store(&tt_n, 0);
}
#define TT(k, w, a) weft__tt(k, w, a)
#else
#define TT(k, w, a) ((void)0)
#endif

__thread unsigned weft__spin_held __attribute__((tls_model("initial-exec")));
__thread unsigned weft__spin_deferred __attribute__((tls_model("initial-exec")));

static struct {
    int on;                     /* set up; written before the handler is installed */
    int nr;                     /* ranges; immutable while on */
    struct range r[MAX_RANGES]; /* code the handler must not interrupt */
    struct sigaction old;       /* the disposition we replaced */
    pid_t pid;
    struct range weft;                /* libweft's code (the shared object or weft_text) */
    struct range entry;               /* the section weft.entry */
    char weft_path[512];              /* the file libweft was loaded from */
    uintptr_t weft_base;              /* its load bias */
    _Atomic int rescued[MAX_RESCUED]; /* kernel threads running a rescued thread, 0: free */
} pre;

/* ---- which code may be interrupted ---------------------------------------- */

static const char *const deny[] = {
    "libc.so",
    "ld-linux",
    "libpthread",
    "libgcc_s",
    "libstdc++",
    "liburing",
    "libweft",
    "libasan",
    "libtsan",
    "libubsan",
    "liblsan",
    "libm.so",
    "libdl.so",
    "librt.so",
    "vgpreload",
    /* the vDSO (clock_gettime from libweft's own park and ready) and the
     * libraries libweft calls into (weft_dump's unwinder) */
    "linux-vdso",
    "libdw",
    "libelf",
    "libz.so",
    "liblzma",
    "libbz2",
    "libzstd",
};

static void add_range(uintptr_t lo, uintptr_t hi)
{
    if (pre.nr < MAX_RANGES && lo < hi)
        pre.r[pre.nr++] = (struct range){ lo, hi };
}

static int denied_name(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++)
        if (strstr(base, deny[i]))
            return 1;
    return 0;
}

static int note_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *weft_static = data;
    int main_exe = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
    uintptr_t self = (uintptr_t)&weft__preempt_setup;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (self >= lo && self < hi) {
            snprintf(pre.weft_path, sizeof pre.weft_path, "%s",
                     main_exe ? "/proc/self/exe" : info->dlpi_name);
            pre.weft_base = info->dlpi_addr;
        }
        if (main_exe) {
            if (self >= lo && self < hi)
                *weft_static = 1;
        } else if (denied_name(info->dlpi_name)) {
            add_range(lo, hi);
            if (self >= lo && self < hi)
                pre.weft = (struct range){ lo, hi };
        }
    }
    return 0;
}

/* The bounds of section `name` of the ELF file at path, loaded at base;
 * 0, or -1 when it cannot be read. */
static int find_section(const char *path, uintptr_t base, const char *name, struct range *out)
{
    int rc = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ElfW(Ehdr) eh;
    ElfW(Shdr) *sh = NULL;
    char *names = NULL;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_shentsize != sizeof *sh || eh.e_shstrndx >= eh.e_shnum)
        goto close_fd;
    size_t shbytes = (size_t)eh.e_shnum * sizeof *sh;
    if (!(sh = malloc(shbytes)) || pread(fd, sh, shbytes, (off_t)eh.e_shoff) != (ssize_t)shbytes)
        goto free_tables;
    const ElfW(Shdr) *str = &sh[eh.e_shstrndx];
    if (!(names = malloc(str->sh_size + 1)) ||
        pread(fd, names, str->sh_size, (off_t)str->sh_offset) != (ssize_t)str->sh_size)
        goto free_tables;
    names[str->sh_size] = '\0';
    for (int i = 0; i < eh.e_shnum; i++)
        if (sh[i].sh_name < str->sh_size && strcmp(names + sh[i].sh_name, name) == 0) {
            *out = (struct range){ base + sh[i].sh_addr, base + sh[i].sh_addr + sh[i].sh_size };
            rc = 0;
            break;
        }
free_tables:
    free(names);
    free(sh);
close_fd:
    close(fd);
    return rc;
}

int weft__preempt_pc_in_runtime(uintptr_t pc)
{
    return pc >= pre.weft.lo && pc < pre.weft.hi;
}

static int pc_ok(uintptr_t pc)
{
    for (int i = 0; i < pre.nr; i++)
        if (pc >= pre.r[i].lo && pc < pre.r[i].hi)
            return 0;
    return 1;
}

/* ---- rescue of a blocked worker -------------------------------------------------- */

/* 1 when the interrupted instruction is a system call the kernel will
 * restart (SA_RESTART rewinds the instruction pointer onto it): the thread
 * blocks in the kernel. */
static int at_syscall(uintptr_t pc)
{
    const unsigned char *ip = (const unsigned char *)pc;
    return ip[0] == 0x0f && ip[1] == 0x05;
}

/* 1 when the signal interrupted a system call: one the kernel will restart
 * (at_syscall), or one it broke off with EINTR (the instruction before the
 * one interrupted is a syscall, which left -EINTR in rax). A page-aligned
 * pc is taken for neither (the bytes before it may not be mapped). */
static int in_kernel_call(const ucontext_t *uc)
{
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    return at_syscall(pc) ||
           ((pc & 0xfff) >= 2 && at_syscall(pc - 2) && uc->uc_mcontext.gregs[REG_RAX] == -EINTR);
}

/* 1 when no libweft code is under way on t's stack above sp: scanning up
 * from sp, a word that points into libweft is a return address into it
 * (or, rarely, a pointer to its code: then we refuse, which is safe), until
 * the return address into the thread's first frame (WEFT_ENTRY), below
 * which nothing is t's own. The initial thread has no such frame: its
 * whole stack is scanned. */
#if defined(WEFT_SANITIZE_ADDRESS)
#define RAW_STACK __attribute__((no_sanitize_address)) /* reads redzones on purpose */
#else
#define RAW_STACK
#endif

RAW_STACK static int stack_clean(const struct weft_thread *t, uintptr_t sp)
{
    uintptr_t top = (uintptr_t)t->stack_lo + t->stack_size;
    if (!t->stack_lo || sp >= top || (sp & 7))
        return 0;
    uintptr_t elo = pre.entry.lo, ehi = pre.entry.hi;
    for (const uintptr_t *p = (const uintptr_t *)sp; (uintptr_t)p < top; p++) {
        uintptr_t v = *p;
        if (v >= elo && v < ehi)
            return 1;
        if (v >= pre.weft.lo && v < pre.weft.hi)
            return 0;
    }
    return t->pinned != 0;
}

static int tid_self(void)
{
    return (int)syscall(SYS_gettid);
}

static int note_rescued(int tid)
{
    for (int i = 0; i < MAX_RESCUED; i++) {
        int z = 0;
        if (atomic_compare_exchange_strong_explicit(&pre.rescued[i], &z, tid, memory_order_relaxed,
                                                    memory_order_relaxed))
            return 1;
    }
    return 0;
}

static void forget_rescued(int tid)
{
    for (int i = 0; i < MAX_RESCUED; i++) {
        int v = tid;
        if (atomic_compare_exchange_strong_explicit(&pre.rescued[i], &v, 0, memory_order_relaxed,
                                                    memory_order_relaxed))
            return;
    }
}

void weft__preempt_rescue_done(void)
{
    forget_rescued(tid_self());
}

/* 1 when kernel thread tid (of this process) sleeps in the kernel: its
 * state in /proc is S or D. 0 when it runs or may (R), or when the file
 * cannot be read. */
static int asleep_in_kernel(int tid)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "tid (name) S ...": the name may hold spaces and parentheses, and is
     * at most 16 bytes, so the state follows the last ')' of the first 128 */
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

/* A kernel thread asleep in the kernel is left alone: the handler could not
 * settle it there (it is not in its own code), and the signal would break
 * the call off (EINTR from the calls SA_RESTART does not restart, such as
 * nanosleep and epoll_wait, which the thread may have entered since its
 * rescue). It is signalled at the first look that finds it running. */
void weft__preempt_poke_rescued(void)
{
    for (int i = 0; i < MAX_RESCUED; i++) {
        int tid = atomic_load_explicit(&pre.rescued[i], memory_order_relaxed);
        if (tid > 0 && !asleep_in_kernel(tid))
            syscall(SYS_tgkill, pre.pid, tid, WEFT__PREEMPT_SIGNAL);
    }
}

int weft__preempt_rescues_out(void)
{
    for (int i = 0; i < MAX_RESCUED; i++)
        if (atomic_load_explicit(&pre.rescued[i], memory_order_relaxed))
            return 1;
    return 0;
}

/* The handler's part of a rescue: t, running on w, blocks in the kernel.
 * A call the signal broke off with EINTR (io_uring_enter, ppoll, msgrcv:
 * not restarted whatever SA_RESTART says) is rescued too: t goes on from
 * there on its kernel thread, and a loop that calls again at once (liburing
 * in MariaDB's InnoDB) blocks there without its worker. Refused, it was
 * broken off at every retry and kept the worker for ever. */
static void rescue(struct weft__worker *w, struct weft_thread *t, uint64_t req,
                   const ucontext_t *uc)
{
    if (!in_kernel_call(uc) || !stack_clean(t, (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]))
        return;
    int tid = tid_self();
    if (!note_rescued(tid))
        return;
    if (weft__rescue_lend(w) != 0) {
        forget_rescued(tid);
        return;
    }
    atomic_compare_exchange_strong_explicit(&w->preempt_req, &req, 0, memory_order_relaxed,
                                            memory_order_relaxed);
}

/* Makes the alternate signal stack that sigreturn restores from the frame
 * the resuming kernel thread's own (a thread resumed by a switch may be on
 * another kernel thread than the one it was interrupted on). */
static void own_altstack(ucontext_t *uc)
{
    int e = errno;
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0) {
        ss.ss_flags &= ~SS_ONSTACK;
        uc->uc_stack = ss;
    }
    errno = e;
}

/* ---- the handler ------------------------------------------------------------ */

/* Commit of a quantum preemption on several workers: the thread goes to
 * the injection queue, the runtime-wide FIFO every worker takes from, so
 * that spinners spread over the workers instead of staying where they
 * were spawned (Go's global run queue plays this part). */
static int to_injection(void *arg, struct weft_thread *self)
{
    (void)arg;
    weft__inject(self);
    return 1;
}

static void preempted(struct weft__worker *w, struct weft_thread *t, int cause, int saved_errno,
                      ucontext_t *uc)
{
    /* On several workers a quantum's loser waits where every worker looks
     * (the injection queue, a FIFO), so that spinners spread evenly. */
    int spread = weft__rt.nworkers > 1 && !t->pinned && cause == WEFT__PREEMPT_QUANTUM;
    /* WEFT_TRACE: the next RUN (recorded by the pick) ends t's slice as
     * preempted, or weft__trace_leave does */
    if (WEFT_UNLIKELY(weft__trace_on))
        weft__trace_pending(w, WEFT__RUN_PREEMPTED);
    struct weft_thread *next = weft__pick_local(w);
    if (!next && spread && !weft__reclaimed(w)) {
        const struct weft__pool_ops *pool = weft__pool();
        next = pool->steal ? pool->steal(w) : NULL; /* what waits elsewhere */
        if (!next)
            next = weft__inject_pop();
        if (next && WEFT_UNLIKELY(weft__trace_on))
            weft__trace(w, WEFT__EV_RUN, next, 0);
    }
    if (!next && cause != WEFT__PREEMPT_PRIO && !weft__reclaimed(w)) {
        if (WEFT_UNLIKELY(weft__trace_on))
            weft__trace_pending(w, 0);
        errno = saved_errno;
        return; /* what waited was taken meanwhile: go on */
    }
    if (WEFT_UNLIKELY(weft__trace_on) && !next)
        weft__trace_leave(w, t);
    /* A priority preemption with nothing here: the scheduler context
     * steals the higher class from where it waits. */
    __atomic_store_n(&w->npreempt[cause - 1], w->npreempt[cause - 1] + 1, __ATOMIC_RELAXED);
    errno = saved_errno; /* saved as t's by the switch */
    TT(9, w->id, next ? weft__cls(next) : -99);
    struct weft__parkx inj = { t, to_injection, NULL };
    weft__switch(w, t, next, spread ? (uintptr_t)&inj | XF_PARK : (uintptr_t)t | XF_YIELD);
    /* Resumed, maybe on another kernel thread: its errno holds ours. */
    if (uc)
        own_altstack(uc);
}

void weft__preempt_deferred(void)
{
    weft__spin_deferred = 0;
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *t = w ? w->current : NULL;
    if (!t)
        return; /* rescued meanwhile: the monitor's pokes settle it */
    uint64_t req = atomic_load_explicit(&w->preempt_req, memory_order_relaxed);
    if (!req || (req >> 2) != w->tick)
        return;
    atomic_store_explicit(&w->preempt_req, 0, memory_order_relaxed);
    int cause = (int)(req & 3);
    preempted(w, t, cause == WEFT__PREEMPT_RESCUE ? WEFT__PREEMPT_QUANTUM : cause, errno, NULL);
}

/* Arms w's retry timer for a refused request (see the design block).
 * Raw system calls: async-signal-safe, and glibc's timer_create wrapper
 * is not needed for a signal to one thread. A timer that cannot be made
 * leaves the retries to the monitor. */
static void retry_soon(struct weft__worker *w, uint64_t req)
{
    if (w->retry_req != req) {
        w->retry_req = req;
        w->retry_n = 0;
    }
    if (w->retry_n >= RETRY_FAST_MAX) {
        if (w->retry_n++ == RETRY_FAST_MAX)
            weft__monitor_poke_now(); /* once: its retries take over */
        return;
    }
    /* w's kernel thread is ours (no gettid: the handler's every system
     * call widens the window in which its own retry could interrupt it,
     * in libc, and be refused). */
    int tid = atomic_load_explicit(&w->ktid, memory_order_relaxed);
    if (tid <= 0)
        tid = tid_self();
    if (w->retry_timer && w->retry_tid != tid) {
        syscall(SYS_timer_delete, w->retry_timer - 1); /* w moved to another kernel thread */
        w->retry_timer = 0;
    }
    if (!w->retry_timer) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = WEFT__PREEMPT_SIGNAL;
        sev.sigev_value.sival_ptr = &pre; /* tells the handler the timer is ours */
        sev._sigev_un._tid = tid;
        int id;
        if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id) != 0)
            return;
        w->retry_timer = id + 1;
        w->retry_tid = tid;
    }
    /* A random delay within [d, 3d/2) (see the design block): the clock's
     * nanoseconds mixed with the request (splitmix64's finaliser). The
     * handler's last system call, for the same reason as above. */
    long d = RETRY_FAST_NS << (w->retry_n++ / 2);
    uint64_t z = weft__now_ns() ^ (req * 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    struct itimerspec its = { { 0, 0 }, { 0, d + (long)(z % (uint64_t)(d / 2)) } };
    TT(5, w->id, its.it_value.tv_nsec);
    syscall(SYS_timer_settime, w->retry_timer - 1, 0, &its, NULL);
}

void (*weft__preempt_hook)(void);

#if WEFT_POSIX
void (*weft__preempt_cancel_hook)(void *uc, int goes_on);
#endif

/* The drop-in's asynchronous cancellation point (preempt.h); errno is the
 * thread's on return. Nothing in native libweft. */
static inline void cancel_point(void *uc, int goes_on)
{
#if WEFT_POSIX
    if (weft__preempt_cancel_hook) {
        int e = errno;
        weft__preempt_cancel_hook(uc, goes_on);
        errno = e;
    }
#else
    (void)uc;
    (void)goes_on;
#endif
}

#if defined(WEFT_SANITIZE_THREAD)
#define RACY __attribute__((no_sanitize("thread")))
#else
#define RACY
#endif

/* 1 when a thread of class c or higher may wait for a worker: in a
 * worker's lists, the injection queue, or behind a worker's attention bits
 * (its mailbox: counted whatever they hold). Racy hints: a priority request
 * whose thread was taken meanwhile by the other worker asked (see
 * weft__preempt_for_class) is dropped, not honoured by a switch to a
 * thread of the interrupted one's own class. */
static int (*prio_top)(struct weft__worker *w); /* relaxed __atomic; set once */

void weft__preempt_set_top(int (*top)(struct weft__worker *w))
{
    __atomic_store_n(&prio_top, top, __ATOMIC_RELAXED);
}

RACY static int higher_waits(int c)
{
    int (*top)(struct weft__worker *) = __atomic_load_n(&prio_top, __ATOMIC_RELAXED);
    if (!top)
        return 1; /* no priority pool: nothing to tell */
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        if (top(v) >= c || atomic_load_explicit(&v->attn, memory_order_relaxed))
            return 1;
    }
    for (int k = c; k <= WEFT_PRIO_URGENT; k++)
        if (__atomic_load_n(&weft__rt.inj[k - WEFT_PRIO_BACKGROUND].head, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* Nesting. The kernel blocks the preemption signal while on_signal runs
 * (no SA_NODEFER), so that signals arriving in a burst (a retry timer
 * firing in one of the handler's own system calls, the monitor's next
 * request) wait for it instead of stacking one more signal frame each
 * (some 3 KB with AVX-512 state) on the thread's stack, with no bound
 * while the thread stays in the runtime's code: a 16 KiB pthread stack
 * overflowed (Open POSIX pthread_create/14-1, under the drop-in). Before
 * anything that may switch away or end the thread, the handler unblocks
 * the signal itself (unblock_own): the kernel thread goes on running other
 * threads, which must stay preemptible, and a thread that ends in its
 * handler never returns through the frame that would restore the mask. A
 * resumed thread's return through its frame restores the mask it was
 * interrupted with. */
static void unblock_own(void)
{
    int e = errno;
    uint64_t set = (uint64_t)1 << (WEFT__PREEMPT_SIGNAL - 1);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, sizeof set);
    errno = e;
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
    int saved_errno = errno;
    ucontext_t *uc = ucv;
    struct weft__worker *w = weft__tls_worker;
    /* Not ours (another process's, or the program's own use of the signal):
     * the previous handler's business. */
    int ours = (si->si_code == SI_TKILL && si->si_pid == pre.pid) ||
               (si->si_code == SI_TIMER && si->si_value.sival_ptr == &pre);
    if (!ours) {
        if (pre.old.sa_flags & SA_SIGINFO) {
            if (pre.old.sa_sigaction)
                pre.old.sa_sigaction(sig, si, ucv);
        } else if (pre.old.sa_handler != SIG_IGN && pre.old.sa_handler != SIG_DFL) {
            pre.old.sa_handler(sig);
        }
        errno = saved_errno;
        return;
    }
    if (!w) {
        /* A rescued thread back in its own code rejoins the scheduler;
         * anything else here (a bound thread, a weft_blocking call, an idle
         * machine) is left alone. */
        if (weft__rescued() && !weft__spin_held &&
            pc_ok((uintptr_t)uc->uc_mcontext.gregs[REG_RIP])) {
            unblock_own(); /* it may switch away */
            errno = saved_errno;
            if (weft__rescue_settle() == 2)
                own_altstack(uc);
            cancel_point(uc, 1);
            return;
        }
        goto out;
    }
    uint64_t req = atomic_load_explicit(&w->preempt_req, memory_order_relaxed);
    struct weft_thread *t = w->current;
    if (!req || !t) {
        TT(4, w->id, 4);
        goto out;
    }
    if ((req >> 2) != w->tick) {
        TT(4, w->id, 3);
        /* the thread it was meant for switched since: stale */
        atomic_compare_exchange_strong_explicit(&w->preempt_req, &req, 0, memory_order_relaxed,
                                                memory_order_relaxed);
        goto out;
    }
    int pc_fine = pc_ok((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]);
    if (!pc_fine || weft__spin_held) {
        TT(4, w->id, !pc_fine ? 1 : 2);
        /* A spin lock's holder blocked in the kernel may still be rescued:
         * it keeps its kernel thread, and its count with it. */
        if ((req & 3) == WEFT__PREEMPT_RESCUE && !pc_fine)
            rescue(w, t, req, uc);
        else if (weft__spin_held)
            weft__spin_deferred = 1; /* the unlock honours it (preempt.h) */
        else if (!in_kernel_call(uc)) {
            if ((req & 3) == WEFT__PREEMPT_PRIO && weft__rt.nworkers > 1)
                weft__preempt_for_class(weft__cls(t) + 1); /* another worker too */
            retry_soon(w, req); /* and the monitor retries too (monitor.c) */
        }
        /* else only the monitor retries, once the thread runs again
         * (weft__preempt_retry): a fast retry would break the call off */
        goto out;
    }
    unblock_own(); /* what follows may switch away or end the thread */
    atomic_store_explicit(&w->preempt_req, 0, memory_order_relaxed);
    cancel_point(uc, 0); /* a pthread_cancel's request: the quantum's cause */
    int cause = (int)(req & 3);
    if (cause == WEFT__PREEMPT_PRIO && !higher_waits(weft__cls(t) + 1)) {
        TT(4, w->id, 5);
        cancel_point(uc, 1);
        goto out; /* served by another worker */
    }
    TT(4, w->id, 0);
    preempted(w, t, cause == WEFT__PREEMPT_RESCUE ? WEFT__PREEMPT_QUANTUM : cause, saved_errno, uc);
    if (weft__preempt_hook) {
        int e = errno; /* t's, restored by preempted */
        weft__preempt_hook();
        errno = e;
    }
    cancel_point(uc, 1); /* asked while it waited to run again */
    return;
out:
    errno = saved_errno;
}

/* ---- requests ---------------------------------------------------------------- */

static void signal_worker(struct weft__worker *v)
{
    int tid = atomic_load_explicit(&v->ktid, memory_order_relaxed);
    if (tid > 0)
        syscall(SYS_tgkill, pre.pid, tid, WEFT__PREEMPT_SIGNAL);
}

void weft__preempt_request(struct weft__worker *v, uint64_t tick, int cause)
{
    uint64_t old = atomic_load_explicit(&v->preempt_req, memory_order_relaxed);
    /* One request per running thread: a pending one for this tick stands;
     * one left from an earlier tick (its thread switched) is replaced.
     * relaxed: the handler checks the tick itself; the signal orders. */
    do {
        if (old && (old >> 2) == tick)
            return;
    } while (!atomic_compare_exchange_weak_explicit(&v->preempt_req, &old,
                                                    tick << 2 | (uint64_t)cause,
                                                    memory_order_relaxed, memory_order_relaxed));
    TT(3, v->id, cause);
    signal_worker(v); /* a refusal retries by itself (retry_soon), then via the monitor */
    /* v's kernel thread may be off the CPU for milliseconds (a loaded
     * host): the monitor looks again within 0.1 ms and asks another
     * worker (monitor.c, Watch). */
    if (cause == WEFT__PREEMPT_PRIO)
        weft__monitor_watch();
}

int weft__preempt_escalate(struct weft__worker *v, uint64_t tick)
{
    uint64_t req = atomic_load_explicit(&v->preempt_req, memory_order_relaxed);
    if (!req || (req >> 2) != tick)
        return 0;
    /* The handler takes an idle machine, never makes one. A rescue asked
     * for already failed if another took the one kept idle meanwhile: keep
     * one again, for the monitor's next retry. */
    weft__machines_reserve();
    if ((req & 3) == WEFT__PREEMPT_RESCUE)
        return 0;
    /* A worker may have several threads away at once: the one rescued
     * first may wait in the kernel for a thread that is ready behind the
     * next one to block there (one rescue per worker deadlocked so). Only
     * the count's own limit stops it. */
    if ((atomic_load_explicit(&v->attn, memory_order_relaxed) & WEFT__ATTN_RESCUE) ==
        WEFT__ATTN_RESCUE)
        return 0;
    return atomic_compare_exchange_strong_explicit(&v->preempt_req, &req,
                                                   (req & ~(uint64_t)3) | WEFT__PREEMPT_RESCUE,
                                                   memory_order_relaxed, memory_order_relaxed);
}

int weft__preempt_retry(struct weft__worker *v, uint64_t tick, int rescue_due)
{
    uint64_t req = atomic_load_explicit(&v->preempt_req, memory_order_relaxed);
    if (!req)
        return 0;
    if ((req >> 2) != tick) {
        atomic_compare_exchange_strong_explicit(&v->preempt_req, &req, 0, memory_order_relaxed,
                                                memory_order_relaxed);
        return 0;
    }
    int tid = atomic_load_explicit(&v->ktid, memory_order_relaxed);
    int asleep = tid > 0 && asleep_in_kernel(tid);
    if (asleep && ((req & 3) != WEFT__PREEMPT_RESCUE || !rescue_due))
        return 1;
    TT(6, v->id, (long)(req & 3));
    signal_worker(v);
    return asleep ? 2 : 1;
}

RACY void weft__preempt_for_class(int c)
{
    if (!pre.on || c <= WEFT_PRIO_BACKGROUND)
        return;
    struct weft__worker *low = NULL;
    int low_cls = c, low_asked = 1;
    uint64_t low_tick = 0;
#ifdef WEFT_TAIL_TRACE
    long skipped = 0;
#endif
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        /* racy reads of owner-only fields: a hint, checked by the handler */
        struct weft_thread *cur = __atomic_load_n(&v->current, __ATOMIC_RELAXED);
        if (!cur) {
            if (atomic_load_explicit(&v->sleeping, memory_order_relaxed)) {
                TT(2, v->id, 1000);
                return; /* an idle worker is woken to take it */
            }
#ifdef WEFT_TAIL_TRACE
            skipped++;
#endif
            /* Switching: it may have picked its next thread already, and
             * if that is of a lower class too the thread readied waits for
             * the monitor's next look (a p99.9 of ~1.06 ms in
             * bench_prio_flood). The others are asked as if it ran one. */
            continue;
        }
        int k = weft__cls(cur);
        if (k >= c) {
            TT(2, v->id, 2000);
            return; /* not every worker runs a lower class */
        }
        uint64_t tick = __atomic_load_n(&v->tick, __ATOMIC_RELAXED);
        uint64_t req = atomic_load_explicit(&v->preempt_req, memory_order_relaxed);
        /* Asked already and not honoured yet: its kernel thread is off
         * the CPU (descheduled, or its virtual CPU taken by the host: the
         * request and its retries then wait milliseconds) or in code the
         * handler must not interrupt. Of the workers of the lowest class,
         * one not asked yet serves sooner. */
        int asked = req && (req >> 2) == tick;
        if (k < low_cls || (k == low_cls && low_asked && !asked)) {
            low = v;
            low_cls = k;
            low_tick = tick;
            low_asked = asked;
        }
    }
    TT(2, low ? low->id : -1, skipped * 10 + low_asked);
    if (!low)
        return;
    weft__preempt_request(low, low_tick, WEFT__PREEMPT_PRIO);
    if (low_asked)
        return;
    /* A second worker of that class, not asked yet, is asked too: under a
     * flood, the first one's kernel thread was off the CPU in every wake
     * that took over 0.5 ms, and the monitor that would re-aim the request
     * (monitor.c, Watch) was as often kept off its CPU for as long. The
     * one that comes second finds the thread taken and goes on
     * (higher_waits). Never one of a higher class: that would preempt a
     * thread the lowest one should yield to. */
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        struct weft_thread *cur = __atomic_load_n(&v->current, __ATOMIC_RELAXED);
        if (v == low || !cur || weft__cls(cur) != low_cls)
            continue;
        uint64_t tick = __atomic_load_n(&v->tick, __ATOMIC_RELAXED);
        uint64_t req = atomic_load_explicit(&v->preempt_req, memory_order_relaxed);
        if (req && (req >> 2) == tick)
            continue;
        weft__preempt_request(v, tick, WEFT__PREEMPT_PRIO);
        return;
    }
}

/* ---- set-up ------------------------------------------------------------------- */

void weft__preempt_own(struct weft__worker *w)
{
    atomic_store_explicit(&w->ktid, (int)syscall(SYS_gettid), memory_order_relaxed);
}

void weft__preempt_forget(struct weft__worker *w)
{
    if (w->retry_timer)
        syscall(SYS_timer_delete, w->retry_timer - 1);
    w->retry_timer = 0;
}

int weft__preempt_on(void)
{
    return pre.on;
}

#if defined(WEFT_SANITIZE_THREAD)
#define UNDER_TSAN 1
#else
#define UNDER_TSAN 0
#endif

int weft__preempt_setup(void)
{
    if (UNDER_TSAN)
        return -1;
    pre.nr = 0;
    pre.pid = getpid();
    int weft_static = 0;
    dl_iterate_phdr(note_object, &weft_static);
    if (weft_static) {
        if (!__start_weft_text || !__stop_weft_text)
            return -1;
        add_range((uintptr_t)__start_weft_text, (uintptr_t)__stop_weft_text);
        pre.weft = (struct range){ (uintptr_t)__start_weft_text, (uintptr_t)__stop_weft_text };
    }
    /* The threads' first frames: libweft's own code too (outside weft_text
     * in a static link), and where a thread's own frames end. */
    if (!pre.weft_path[0] || find_section(pre.weft_path, pre.weft_base, ENTRY_SECTION, &pre.entry))
        return -1;
    add_range(pre.entry.lo, pre.entry.hi);
    if (pre.nr == MAX_RANGES)
        return -1; /* could not note every object: do not guess */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    /* No SA_NODEFER: blocked while the handler decides, unblocked by the
     * handler before it switches away (see on_signal's nesting block). */
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    pre.on = 1;
    if (sigaction(WEFT__PREEMPT_SIGNAL, &sa, &pre.old) != 0) {
        pre.on = 0;
        return -1;
    }
    return 0;
}

void weft__preempt_teardown(void)
{
    if (!pre.on)
        return;
    sigaction(WEFT__PREEMPT_SIGNAL, &pre.old, NULL);
    pre.on = 0;
#ifdef WEFT_TAIL_TRACE
    tt_dump();
#endif
}
