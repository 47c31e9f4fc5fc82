/* signal.c: signal masks per user thread, the program's signal actions
 * reached through one dispatcher, and the routing of signals to user
 * threads.
 *
 * Design
 * ------
 * A kernel thread's mask is shared by every user thread it runs, so the
 * masks of user threads live in their records (pt.sigmask) and the
 * workers' kernel masks stay open: pthread_sigmask and sigprocmask on a
 * user thread write the record only, never the kernel (no system call on a
 * switch). The kernel then delivers a signal to whichever worker it likes,
 * running whatever user thread; the program's actions are therefore
 * reached through one dispatcher (on_signal): sigaction and signal are
 * wrapped, keep the program's action in acts[], and install on_signal in
 * the kernel for every "managed" signal that has a handler, that some user
 * thread blocked, or that some thread waited for (watched). on_signal:
 *  - thread-directed (tgkill to this kernel thread, SIGPIPE and SIGXFSZ,
 *    which the kernel sends to the thread that wrote): for the user thread
 *    running now; it runs the action unless that thread blocks the signal
 *    or waits for it in sigwait, else the signal stays pending in its
 *    record (pt.sigpending);
 *  - process-directed (kill, sigqueue, timers, SIGCHLD, terminals): runs
 *    the action on the user thread running now if it does not block the
 *    signal and no sigwait waits for it; else the signal becomes pending
 *    for the process (proc_pending) and a router is woken;
 *  - not on a user thread (a worker between threads, the runtime's own
 *    kernel threads): process-directed ones go to the router; on a kernel
 *    thread the program made otherwise, or before the runtime starts, or
 *    in a child of fork, the action runs there (glibc's meaning: that
 *    kernel thread's own mask decided).
 * The router is a kernel thread of this library (made at the first
 * managed signal once the runtime runs; every signal blocked), woken
 * through a pipe (write is async-signal-safe; weft's locks are not, so
 * on_signal never wakes a user thread itself). It hands each process
 * signal to a sigwait that waits for it (wakes it: the waiter consumes
 * it), else moves it to a user thread that does not block it (its
 * sigpending) and breaks off that thread's park.c wait, else leaves it
 * pending for the process until a thread unblocks it or waits for it.
 * A pending signal runs in weft__posix_deliver, on its thread, at the
 * thread's next call into the drop-in and when its mask is lowered
 * (pthread_sigmask delivers an unblocked pending signal before it
 * returns, as POSIX says).
 *
 * Kept meanings: SIG_DFL of a signal whose default is to end the process
 * ends it (default restored, re-raised: the exit status names the
 * signal); SIG_IGN is installed as is (the kernel discards, SIGCHLD's
 * reaping holds); SA_SIGINFO, SA_RESTART, SA_ONSTACK and SA_NODEFER go to
 * the kernel with the dispatcher; the handler's sa_mask and its own signal
 * are added to the user thread's mask while it runs; SA_RESETHAND resets
 * the action here. Not managed (the kernel's, on the kernel thread):
 * SIGKILL, SIGSTOP, the synchronous signals (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP, SIGSYS: they go to the thread that caused them),
 * SIGABRT (abort's own unblock-and-raise), the job-control stops and
 * SIGCONT, glibc's two internal signals and the runtime's preemption
 * signal (WEFT__PREEMPT_SIGNAL), which no mask ever blocks in the kernel:
 * a user thread that blocks it reads it back as blocked.
 * One pending instance per signal (real-time signals do not queue).
 * Rejected: switching the kernel mask with each user thread (a system
 * call on every switch); blocking every signal in the workers with one
 * signal thread (exec'd programs, posix_spawn children and system()
 * would inherit the blocked masks, which exec keeps but handlers it
 * does not).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "policy/preempt.h"
#include "posix/posix.h"
#include "posix/rw.h"
#include "posix/sig.h"
#include "sched/sched.h"

extern __typeof__(pthread_sigmask) weft__real_pthread_sigmask;
extern __typeof__(pthread_kill) weft__real_pthread_kill;
extern __typeof__(pthread_create) weft__real_pthread_create;
extern __typeof__(pthread_attr_init) weft__real_pthread_attr_init;
extern __typeof__(pthread_attr_destroy) weft__real_pthread_attr_destroy;
extern __typeof__(pthread_attr_setdetachstate) weft__real_pthread_attr_setdetachstate;
extern __typeof__(pthread_attr_setsigmask_np) weft__real_pthread_attr_setsigmask_np;

#define BIT(sig) ((uint64_t)1 << ((sig)-1))

/* Signals this file manages (see the design block). */
static const uint64_t unmanaged = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(SIGSEGV) | BIT(SIGBUS) |
                                  BIT(SIGFPE) | BIT(SIGILL) | BIT(SIGTRAP) | BIT(SIGSYS) |
                                  BIT(SIGABRT) | BIT(SIGTSTP) | BIT(SIGTTIN) | BIT(SIGTTOU) |
                                  BIT(SIGCONT) | BIT(32) | BIT(33) | BIT(WEFT__PREEMPT_SIGNAL);
/* Default action: ignore (the rest end the process, or are unmanaged). */
static const uint64_t dfl_ignore = BIT(SIGCHLD) | BIT(SIGWINCH) | BIT(SIGURG) | BIT(SIGCONT);

int weft__posix_sig_managed(int sig)
{
    return sig >= 1 && sig <= 64 && !(unmanaged & BIT(sig));
}

static struct sigaction acts[65]; /* the program's actions; under act_lock (handler: racy) */
static _Atomic uint64_t have;     /* bit: acts[sig] holds the program's action */
static _Atomic uint64_t watched;  /* bit: blocked or waited by a user thread once (sticky) */
static _Atomic uint64_t waited;   /* bit: some sigwait waits for it, or did (sticky) */
static _Atomic int act_lock;      /* spin lock over acts[] and the kernel's dispositions */
_Atomic uint64_t weft__posix_proc_pending; /* process-directed signals pending */
static siginfo_t proc_info[65];            /* their siginfo; written before the bit (release) */
static struct pt *_Atomic all;             /* every record made (pt.all_next); never freed */
static int router_pipe[2] = { -1, -1 };    /* on_signal -> router */
static _Atomic int router_up;

static void poke(struct pt *p);
static void after_preempt(void);

static void act_acquire(void)
{
    while (atomic_exchange_explicit(&act_lock, 1, memory_order_acquire))
        ;
}
static void act_release(void)
{
    atomic_store_explicit(&act_lock, 0, memory_order_release);
}

static void sig_track(struct pt *p)
{
    struct pt *head = atomic_load(&all);
    do
        atomic_store_explicit(&p->all_next, head, memory_order_relaxed);
    while (!atomic_compare_exchange_weak(&all, &head, p)); /* release: publishes p */
}

/* 1: the caller is a user thread of the running runtime, p its record. */
static int on_user(struct pt *p)
{
    return p && p->h && !weft__posix_forked && weft_self() == p->h;
}

/* The runtime runs here (not before its start, not in a child of fork). */
static int runtime_up(void)
{
    return weft__posix_main && !weft__posix_forked;
}

struct pt *weft__posix_sig_user(void)
{
    struct pt *p = weft__posix_self_if_any();
    return on_user(p) ? p : NULL;
}

#define sigaction_raw    weft__posix_real_sigaction
#define sigtimedwait_raw weft__posix_real_sigtimedwait

uint64_t weft__posix_sig_bits(const sigset_t *s)
{
    uint64_t b = 0;
    for (int sig = 1; sig <= 64; sig++)
        if (sigismember(s, sig) == 1)
            b |= (uint64_t)1 << (sig - 1);
    return b;
}
#define bits_of weft__posix_sig_bits

static void *real_sigaction, *real_sigtimedwait;

__attribute__((constructor(103))) static void sig_load(void)
{
    real_sigaction = dlsym(RTLD_NEXT, "sigaction");
    real_sigtimedwait = dlsym(RTLD_NEXT, "sigtimedwait");
}

int weft__posix_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (__builtin_expect(!real_sigaction, 0))
        sig_load(); /* a constructor that ran before ours */
    return ((__typeof__(sigaction) *)real_sigaction)(sig, act, old);
}

int weft__posix_real_sigtimedwait(const sigset_t *set, siginfo_t *si, const struct timespec *t)
{
    if (__builtin_expect(!real_sigtimedwait, 0))
        sig_load();
    return ((__typeof__(sigtimedwait) *)real_sigtimedwait)(set, si, t);
}

static void set_of(uint64_t b, sigset_t *s)
{
    sigemptyset(s);
    for (int sig = 1; sig <= 64; sig++)
        if (b & BIT(sig))
            sigaddset(s, sig);
}

/* ---- the default action --------------------------------------------------- */

/* The action SIG_DFL gives sig: nothing for those ignored by default, else
 * the kernel's own (the process ends with sig as its cause). */
static void run_default(int sig)
{
    if (dfl_ignore & BIT(sig))
        return;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction_raw(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    weft__real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    syscall_raw3(SYS_tgkill, getpid(), syscall_raw3(SYS_gettid, 0, 0, 0), sig);
}

/* Handlers run on this thread since weft__posix_sig_broken cleared it
 * (per user thread: the drop-in's TLS is the user thread's). */
enum { RAN = 1, RAN_NORESTART = 2 };
static __thread int ran_flags __attribute__((tls_model("initial-exec")));

/* Runs the program's action for sig on the calling thread (p: its record
 * when a user thread, whose mask grows by the handler's sa_mask while it
 * runs). */
static void run_action(struct pt *p, int sig, siginfo_t *si, void *uc)
{
    struct sigaction a;
    if (atomic_load_explicit(&have, memory_order_acquire) & BIT(sig)) {
        a = acts[sig];
    } else {
        memset(&a, 0, sizeof a);
        a.sa_handler = SIG_DFL;
    }
    if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
        return;
    if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) {
        run_default(sig);
        return;
    }
    if (a.sa_flags & SA_RESETHAND) {
        acts[sig].sa_handler = SIG_DFL;
        acts[sig].sa_flags &= ~SA_SIGINFO;
        if (!(atomic_load(&watched) & BIT(sig))) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            sigaction_raw(sig, &dfl, NULL);
        }
    }
    uint64_t old = 0;
    if (p) {
        old = atomic_load_explicit(&p->sigmask, memory_order_relaxed);
        uint64_t add = bits_of(&a.sa_mask) | ((a.sa_flags & SA_NODEFER) ? 0 : BIT(sig));
        atomic_store_explicit(&p->sigmask, old | add, memory_order_relaxed);
    }
    ran_flags |= (a.sa_flags & SA_RESTART) ? RAN : RAN | RAN_NORESTART;
    int e = errno;
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, si, uc);
    else
        a.sa_handler(sig);
    errno = e;
    if (p)
        atomic_store_explicit(&p->sigmask, old, memory_order_relaxed);
}

/* ---- the dispatcher (signal context: atomics and raw calls only) ---------- */

static void wake_router(void)
{
    char c = 0;
    if (router_pipe[1] >= 0)
        syscall_raw3(SYS_write, router_pipe[1], (long)&c, 1);
}

/* sig becomes pending for the process, with its siginfo; the router
 * finds it a thread. */
static void post_process(int sig, const siginfo_t *si)
{
    proc_info[sig] = *si;
    /* release: publishes proc_info; pairs with the acquire in claim */
    atomic_fetch_or_explicit(&weft__posix_proc_pending, BIT(sig), memory_order_release);
    wake_router();
}

static int thread_directed(int sig, const siginfo_t *si)
{
    return si->si_code == SI_TKILL || sig == SIGPIPE || sig == SIGXFSZ;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int e = errno;
    struct pt *p = weft__posix_self_if_any();
    uint64_t bit = BIT(sig);
    if (on_user(p)) {
        uint64_t mask = atomic_load_explicit(&p->sigmask, memory_order_relaxed);
        /* Interrupted in the runtime's own code (a park.c bucket, the
         * scheduler), the thread may hold a lock that the handler's
         * async-signal-safe calls (sem_post) take again: the action waits
         * for the thread's next delivery point (its next call into the
         * drop-in, or its preemption), as for a blocked signal. */
        int in_runtime =
            weft__preempt_pc_in_runtime((uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP]);
        if (thread_directed(sig, si)) {
            if (in_runtime ||
                ((mask | atomic_load_explicit(&p->sigwaiting, memory_order_relaxed)) & bit)) {
                p->sigcode[sig - 1] = SI_TKILL;
                atomic_fetch_or(&p->sigpending, bit);
            } else {
                run_action(p, sig, si, uc);
            }
        } else if (!in_runtime && !(mask & bit) &&
                   !(atomic_load_explicit(&waited, memory_order_relaxed) & bit)) {
            run_action(p, sig, si, uc);
        } else {
            post_process(sig, si);
        }
    } else if (runtime_up() && !thread_directed(sig, si)) {
        post_process(sig, si); /* a worker between threads, or the runtime's */
    } else {
        run_action(NULL, sig, si, uc); /* a kernel thread of the program's */
    }
    errno = e;
}

/* Installs in the kernel what sig needs: the dispatcher, or the program's
 * SIG_DFL/SIG_IGN as is. Under act_lock. */
static void install(int sig)
{
    struct sigaction k;
    uint64_t bit = BIT(sig);
    if (atomic_load(&have) & bit) {
        k = acts[sig];
    } else {
        sigaction_raw(sig, NULL, &k);
        acts[sig] = k;
        atomic_fetch_or_explicit(&have, bit, memory_order_release);
    }
    int handler = (k.sa_flags & SA_SIGINFO) || (k.sa_handler != SIG_DFL && k.sa_handler != SIG_IGN);
    int dfl = !(k.sa_flags & SA_SIGINFO) && k.sa_handler == SIG_DFL;
    if (handler || (dfl && (atomic_load(&watched) & bit))) {
        k.sa_sigaction = on_signal;
        k.sa_flags =
            SA_SIGINFO |
            (k.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER | SA_NOCLDSTOP | SA_NOCLDWAIT));
    }
    sigaction_raw(sig, &k, NULL);
}

/* ---- the router ----------------------------------------------------------- */

static int alive(struct pt *p)
{
    return p->h && !atomic_load_explicit(&p->done, memory_order_relaxed) && !p->exiting;
}

static void route(void)
{
    uint64_t pend = atomic_load(&weft__posix_proc_pending);
    for (int sig = 1; pend; sig++, pend >>= 1) {
        if (!(pend & 1))
            continue;
        uint64_t bit = BIT(sig);
        int given = 0;
        for (struct pt *p = atomic_load(&all); p; p = atomic_load(&p->all_next))
            if (alive(p) && (atomic_load(&p->sigwaiting) & bit)) {
                atomic_fetch_add(&p->sigword, 1); /* it claims it itself */
                weft__posix_unpark(&p->sigword, 1);
                given = 1;
            }
        if (given)
            continue;
        for (struct pt *p = atomic_load(&all); p; p = atomic_load(&p->all_next)) {
            if (!alive(p) || (atomic_load(&p->sigmask) & bit))
                continue;
            if (!(atomic_fetch_and(&weft__posix_proc_pending, ~bit) & bit))
                break; /* claimed meanwhile */
            p->sigcode[sig - 1] = proc_info[sig].si_code;
            p->sigval[sig - 1] = proc_info[sig].si_value;
            atomic_fetch_or(&p->sigpending, bit);
            /* seq_cst: pairs with thread_end's store of exiting before its
             * last run; ending meanwhile, it may have run without this one */
            if (__atomic_load_n(&p->exiting, __ATOMIC_SEQ_CST) &&
                (atomic_fetch_and(&p->sigpending, ~bit) & bit)) {
                atomic_fetch_or(&weft__posix_proc_pending, bit); /* back: another thread */
                continue;
            }
            poke(p);
            break;
        }
    }
}

static void *router(void *arg)
{
    (void)arg;
    char buf[64];
    for (;;) {
        if (weft__real_read(router_pipe[0], buf, sizeof buf) < 0 && errno != EINTR)
            return NULL;
        route();
    }
}

/* Starts the router once the runtime runs and a signal is managed. */
static void router_start(void)
{
    if (atomic_load(&router_up))
        return;
    if (!runtime_up()) {
        atomic_store(&weft__posix_sig_router_owed, 1);
        return;
    }
    if (atomic_exchange(&router_up, 1))
        return;
    atomic_store(&weft__posix_sig_router_owed, 0);
    if (pipe2(router_pipe, O_CLOEXEC) != 0)
        return;
    pthread_attr_t a;
    sigset_t full;
    sigfillset(&full);
    weft__real_pthread_attr_init(&a);
    weft__real_pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    weft__real_pthread_attr_setsigmask_np(&a, &full);
    pthread_t t;
    weft__real_pthread_create(&t, &a, router, NULL);
    weft__real_pthread_attr_destroy(&a);
}

/* A user thread blocks or waits for the managed signals in b: each with
 * SIG_DFL gets the dispatcher, so that the kernel no longer acts on it. */
void weft__posix_sig_watch(uint64_t b)
{
    b &= ~unmanaged;
    uint64_t fresh = b & ~atomic_load(&watched);
    if (fresh) {
        act_acquire();
        atomic_fetch_or(&watched, fresh);
        for (int sig = 1; sig <= 64; sig++)
            if (fresh & BIT(sig))
                install(sig);
        act_release();
    }
    if (b)
        router_start();
}

void weft__posix_sig_wait_mark(uint64_t b)
{
    atomic_fetch_or(&waited, b & ~unmanaged);
}

/* ---- delivery of pending signals ------------------------------------------ */

/* Takes one signal of b pending for p or for the process; fills si. 0:
 * none. */
int weft__posix_sig_claim(struct pt *p, uint64_t b, siginfo_t *si)
{
    uint64_t mine = atomic_load(&p->sigpending) & b;
    while (mine) {
        int sig = __builtin_ctzll(mine) + 1;
        if (atomic_fetch_and(&p->sigpending, ~BIT(sig)) & BIT(sig)) {
            memset(si, 0, sizeof *si);
            si->si_signo = sig;
            si->si_code = p->sigcode[sig - 1] ? p->sigcode[sig - 1] : SI_TKILL;
            si->si_pid = getpid();
            si->si_uid = getuid();
            si->si_value = p->sigval[sig - 1];
            return sig;
        }
        mine &= ~BIT(sig);
    }
    /* acquire: pairs with the release in post_process */
    uint64_t proc = atomic_load_explicit(&weft__posix_proc_pending, memory_order_acquire) & b;
    while (proc) {
        int sig = __builtin_ctzll(proc) + 1;
        if (atomic_fetch_and(&weft__posix_proc_pending, ~BIT(sig)) & BIT(sig)) {
            *si = proc_info[sig];
            return sig;
        }
        proc &= ~BIT(sig);
    }
    return 0;
}

/* The kernel's signals sent to this user thread by another (SIGABRT,
 * SIGSEGV, SIGTRAP ... with pthread_kill): raised here, on the kernel
 * thread that runs it now, so that the kernel's action meets this
 * thread. */
static int raise_unmanaged(struct pt *p)
{
    uint64_t raw = weft__posix_sig_ready(p) & unmanaged;
    if (WEFT_LIKELY(!raw))
        return 0;
    raw = atomic_fetch_and(&p->sigpending, ~raw) & raw;
    for (; raw; raw &= raw - 1)
        syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), __builtin_ctzll(raw) + 1);
    return 1;
}

int weft__posix_sig_run_ready(struct pt *p)
{
    int ran = raise_unmanaged(p);
    for (;;) {
        uint64_t ready = ~atomic_load_explicit(&p->sigmask, memory_order_relaxed) & ~unmanaged;
        siginfo_t si;
        int sig = weft__posix_sig_claim(p, ready, &si);
        if (!sig)
            return ran;
        ucontext_t uc;
        getcontext(&uc);
        run_action(p, sig, &si, &uc);
        ran = 1;
    }
}

/* ---- masks ---------------------------------------------------------------- */

/* On a kernel thread the program made (or any, before the start): glibc's
 * mask, never blocking the preemption signal; a caller that asked for it
 * blocked reads it back as blocked. */
static __thread int urg_blocked __attribute__((tls_model("initial-exec")));

static int kernel_mask(int how, const sigset_t *set, sigset_t *old)
{
    sigset_t mine;
    const sigset_t *use = set;
    int was = urg_blocked;
    if (set && sigismember(set, WEFT__PREEMPT_SIGNAL) == 1) {
        if (how == SIG_BLOCK || how == SIG_SETMASK) {
            mine = *set;
            sigdelset(&mine, WEFT__PREEMPT_SIGNAL);
            use = &mine;
            urg_blocked = 1;
        } else if (how == SIG_UNBLOCK) {
            urg_blocked = 0;
        }
    } else if (set && how == SIG_SETMASK) {
        urg_blocked = 0;
    }
    int r = weft__real_pthread_sigmask(how, use, old);
    if (r == 0 && old && was)
        sigaddset(old, WEFT__PREEMPT_SIGNAL);
    else if (r != 0)
        urg_blocked = was;
    return r;
}

static int set_mask(int how, const sigset_t *set, sigset_t *old)
{
    struct pt *p = weft__posix_self_if_any();
    if (!on_user(p))
        return kernel_mask(how, set, old);
    uint64_t cur = atomic_load_explicit(&p->sigmask, memory_order_relaxed);
    if (set) {
        uint64_t b = bits_of(set) & ~(BIT(SIGKILL) | BIT(SIGSTOP));
        uint64_t next;
        if (how == SIG_BLOCK)
            next = cur | b;
        else if (how == SIG_UNBLOCK)
            next = cur & ~b;
        else if (how == SIG_SETMASK)
            next = b;
        else
            return EINVAL;
        if (next & ~cur)
            weft__posix_sig_watch(next & ~cur);
        atomic_store(&p->sigmask, next);
        if (old)
            set_of(cur, old);
        /* POSIX: an unblocked pending signal is delivered before return */
        if ((atomic_load(&p->sigpending) | atomic_load(&weft__posix_proc_pending)) & ~next)
            weft__posix_sig_run_ready(p);
        return 0;
    }
    if (old)
        set_of(cur, old);
    return 0;
}

PT_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return set_mask(how, set, old);
}

PT_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    int r = set_mask(how, set, old);
    if (r) {
        errno = r;
        return -1;
    }
    return 0;
}

PT_API int sigpending(sigset_t *set)
{
    struct pt *p = weft__posix_self_if_any();
    if (!on_user(p)) {
        sigset_t k;
        if (syscall_raw3(SYS_rt_sigpending, (long)&k, 8, 0) != 0) {
            errno = EFAULT;
            return -1;
        }
        *set = k;
        if (runtime_up()) {
            uint64_t proc = atomic_load(&weft__posix_proc_pending);
            for (int sig = 1; sig <= 64; sig++)
                if (proc & BIT(sig))
                    sigaddset(set, sig);
        }
        return 0;
    }
    uint64_t b = (atomic_load(&p->sigpending) | atomic_load(&weft__posix_proc_pending)) &
                 atomic_load(&p->sigmask);
    set_of(b, set);
    return 0;
}

/* ---- actions -------------------------------------------------------------- */

PT_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!weft__posix_sig_managed(sig))
        return sigaction_raw(sig, act, old) == 0 ? 0 : -1;
    act_acquire();
    uint64_t bit = BIT(sig);
    struct sigaction prev;
    if (atomic_load(&have) & bit)
        prev = acts[sig];
    else
        sigaction_raw(sig, NULL, &prev);
    if (act) {
        acts[sig] = *act;
        atomic_fetch_or_explicit(&have, bit, memory_order_release);
        install(sig);
        int ign = !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN;
        if (ign ||
            (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL && (dfl_ignore & bit))) {
            /* POSIX: pending instances of a signal set to be ignored go */
            atomic_fetch_and(&weft__posix_proc_pending, ~bit);
            for (struct pt *p = atomic_load(&all); p; p = atomic_load(&p->all_next))
                atomic_fetch_and(&p->sigpending, ~bit);
        }
    }
    act_release();
    if (old)
        *old = prev;
    int handler = act && ((act->sa_flags & SA_SIGINFO) ||
                          (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN));
    if (handler)
        router_start();
    return 0;
}

PT_API __sighandler_t signal(int sig, __sighandler_t h)
{
    struct sigaction a, old;
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    a.sa_flags = SA_RESTART; /* glibc's BSD semantics */
    sigemptyset(&a.sa_mask);
    if (sig >= 1 && sig <= 64)
        sigaddset(&a.sa_mask, sig);
    if (sigaction(sig, &a, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
PT_API __sighandler_t bsd_signal(int sig, __sighandler_t h)
{
    return signal(sig, h);
}

/* ---- life cycle ----------------------------------------------------------- */

static void sig_start(struct pt *m)
{
    weft__preempt_hook = after_preempt;
    sig_track(m);
    sigset_t k;
    weft__real_pthread_sigmask(SIG_BLOCK, NULL, &k);
    uint64_t b = bits_of(&k);
    if (urg_blocked)
        b |= BIT(WEFT__PREEMPT_SIGNAL);
    atomic_store(&m->sigmask, b);
    uint64_t open = b & ~unmanaged;
    if (!open)
        return;
    /* the workers, made from here, inherit an open mask; what the kernel
     * holds pending for this thread becomes pending for it */
    weft__posix_sig_watch(open);
    sigset_t pend;
    set_of(open, &k);
    if (syscall_raw3(SYS_rt_sigpending, (long)&pend, 8, 0) == 0) {
        for (int sig = 1; sig <= 64; sig++) {
            if (!(open & BIT(sig)) || sigismember(&pend, sig) != 1)
                continue;
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, sig);
            siginfo_t si;
            struct timespec zero = { 0, 0 };
            if (sigtimedwait_raw(&one, &si, &zero) == sig) {
                m->sigcode[sig - 1] = si.si_code;
                m->sigval[sig - 1] = si.si_value;
                atomic_fetch_or(&m->sigpending, BIT(sig));
            }
        }
    }
    weft__real_pthread_sigmask(SIG_UNBLOCK, &k, NULL);
}

static void sig_inherit_slow(struct pt *p)
{
    if (atomic_load(&weft__posix_sig_router_owed))
        router_start();
    struct pt *c = weft__posix_self_if_any();
    if (c && c->h) {
        atomic_store_explicit(&p->sigmask, atomic_load_explicit(&c->sigmask, memory_order_relaxed),
                              memory_order_relaxed);
        return;
    }
    sigset_t k;
    weft__real_pthread_sigmask(SIG_BLOCK, NULL, &k);
    uint64_t b = bits_of(&k);
    atomic_store_explicit(&p->sigmask, b, memory_order_relaxed);
    weft__posix_sig_watch(b);
}

static void sig_forked(struct pt *p)
{
    atomic_store(&weft__posix_proc_pending, 0);
    router_pipe[0] = router_pipe[1] = -1; /* the router is the parent's */
    atomic_store(&router_up, 1);
    if (!p)
        return;
    sigset_t k;
    uint64_t b = atomic_load(&p->sigmask);
    urg_blocked = (b & BIT(WEFT__PREEMPT_SIGNAL)) != 0;
    set_of(b & ~BIT(WEFT__PREEMPT_SIGNAL), &k);
    weft__real_pthread_sigmask(SIG_SETMASK, &k, NULL);
    atomic_store(&p->sigpending, 0);
}

/* ---- sending to a user thread --------------------------------------------- */

/* The preemption handler's hook (policy/preempt.h): a thread preempted in
 * its own code runs its pending signals when it runs again, in the
 * handler's frame, as if the kernel had delivered them there. */
static void after_preempt(void)
{
    weft__posix_deliver();
}

/* p has a signal to run: its park.c or ring wait is broken off; if it
 * runs on a worker now, that worker is asked to preempt it, so that a
 * thread that computes without calling the drop-in runs it too
 * (after_preempt; with preemption off, at its next call). */
static void poke(struct pt *p)
{
    weft__posix_interrupt(p);
    struct weft_thread *t = (struct weft_thread *)p->h;
    struct weft__worker *w = t ? __atomic_load_n(&t->worker, __ATOMIC_RELAXED) : NULL;
    if (!w || !weft__preempt_on() || __atomic_load_n(&w->current, __ATOMIC_RELAXED) != t)
        return;
    weft__preempt_request(w, __atomic_load_n(&w->tick, __ATOMIC_RELAXED), WEFT__PREEMPT_QUANTUM);
}

/* The record of th if it is a user thread of the running runtime. */
static struct pt *user_of(pthread_t th)
{
    struct pt *p = weft__posix_pt_of((void *)th);
    return p && p->h && !weft__posix_forked ? p : NULL;
}

/* sig becomes pending for p (code, value: its siginfo); p runs it at its
 * next call into the drop-in, at once if p is the caller; a park.c wait
 * of p's ends for it unless p blocks it. */
static int send_to(struct pt *p, int sig, int code, union sigval v)
{
    if (atomic_load(&p->done))
        return ESRCH;
    if (sig == 0)
        return 0;
    if (!weft__posix_sig_managed(sig)) {
        if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCONT)
            return kill(getpid(), sig) == 0 ? 0 : errno; /* they act on the process */
        int blocked = (atomic_load_explicit(&p->sigmask, memory_order_relaxed) & BIT(sig)) != 0;
        if (p == weft__posix_sig_user() && !blocked)
            return syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig) == 0 ? 0 : errno;
        /* raised by the thread itself, once it runs and does not block it */
        atomic_fetch_or(&p->sigpending, BIT(sig));
        if (blocked)
            return 0;
        poke(p);
        return 0;
    }
    p->sigcode[sig - 1] = code;
    p->sigval[sig - 1] = v;
    atomic_fetch_or(&p->sigpending, BIT(sig));
    if (p == weft__posix_sig_user()) {
        weft__posix_deliver();
        return 0;
    }
    if (weft__posix_sig_ready(p) & BIT(sig))
        poke(p);
    return 0;
}

/* A signal to a user thread waits in its record (sigpending) and runs on
 * that thread, whatever kernel thread runs it, at its next call into the
 * drop-in (yield, a lock, a wait, a cancellation test); a thread parked
 * in one of park.c's waits (semaphores, rwlocks, condvars, barriers,
 * once, timed joins, sleeps, sigwait) is woken for it. */
PT_API int pthread_kill(pthread_t th, int sig)
{
    if (sig < 0 || sig >= 65)
        return EINVAL;
    struct pt *p = user_of(th);
    if (!p)
        return weft__real_pthread_kill(th, sig); /* a thread glibc made */
    return send_to(p, sig, SI_TKILL, (union sigval){ 0 });
}

PT_API int pthread_sigqueue(pthread_t th, int sig, const union sigval value)
{
    struct pt *p = user_of(th);
    if (!p) {
        extern __typeof__(pthread_sigqueue) weft__real_pthread_sigqueue;
        return weft__real_pthread_sigqueue(th, sig, value);
    }
    if (sig < 0 || sig >= 65)
        return EINVAL;
    return send_to(p, sig, SI_QUEUE, value);
}

PT_API int raise(int sig)
{
    int r = pthread_kill(pthread_self(), sig);
    if (r) {
        errno = r;
        return -1;
    }
    return 0;
}
PT_API int gsignal(int sig)
{
    return raise(sig);
}

/* glibc's sigsuspend and pause, for the threads that are not user threads
 * (sigwait.c). */
int weft__posix_real_sigsuspend(const sigset_t *mask)
{
    static void *r;
    if (!r)
        r = dlsym(RTLD_NEXT, "sigsuspend");
    return ((__typeof__(sigsuspend) *)r)(mask);
}
int weft__posix_real_pause(void)
{
    static void *r;
    if (!r)
        r = dlsym(RTLD_NEXT, "pause");
    return ((__typeof__(pause) *)r)();
}

int weft__posix_sig_broken(int restart)
{
    ran_flags = 0;
    weft__posix_testcancel(); /* runs the ready signals first */
    int f = ran_flags;
    if (!(f & RAN))
        return 0;
    return restart && !(f & RAN_NORESTART) ? 0 : EINTR;
}

/* The entry points the files below reach this one through (posix.h). */
__attribute__((constructor(102))) static void sig_register(void)
{
    weft__posix_sig_ops.run_ready = weft__posix_sig_run_ready;
    weft__posix_sig_ops.start = sig_start;
    weft__posix_sig_ops.inherit_slow = sig_inherit_slow;
    weft__posix_sig_ops.track = sig_track;
    weft__posix_sig_ops.forked = sig_forked;
    weft__posix_sig_ops.proc_pending = &weft__posix_proc_pending;
}
