/* posix.h: what the files of libweft-pthread share (src/posix).
 *
 * Design
 * ------
 * libweft-pthread is weft's core built with WEFT_POSIX=1 (posix.cmake)
 * plus this layer, which defines the names of <pthread.h>, <threads.h>,
 * unnamed <semaphore.h> and sched_yield on top of weft's public API and a
 * few hooks:
 *  - A thread made by pthread_create is a weft user thread. Its pthread_t is
 *    the address of a glibc thread block of its own (glibc's struct pthread
 *    with the static TLS below it, from ld.so's _dl_allocate_tls), so that
 *    __thread variables, errno, locale, the canary and C++ exception state
 *    are per user thread and pthread_self() is glibc's own, unchanged.
 *    The core points %fs at it in weft__switch_in (sched/switch.h).
 *  - The drop-in's per-thread record (struct pt) is found through a
 *    __thread variable of this library (pt_tls), hence at a fixed offset
 *    from any thread block: pthread_t -> record without a table.
 *  - The runtime starts at the first pthread_create; the caller becomes
 *    weft's initial user thread (weft_init adopts it) on its own block.
 *  - Objects keep glibc's sizes; their layouts are in sync.c. Every wait
 *    that weft's public objects cannot express (timeouts, rwlocks,
 *    barriers, once, semaphores) waits on a word through park.c, a futex
 *    for weft: a user thread parks, a kernel thread sleeps.
 * Rejected: a table from pthread_t to record (a lock or a hash on every
 * pthread_self-based call); wrapping pthread_self (glibc's internals read
 * the thread pointer directly, and two identities would disagree).
 */
#ifndef WEFT_POSIX_POSIX_H
#define WEFT_POSIX_POSIX_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "weft.h"

#define PT_API __attribute__((visibility("default")))

/* glibc 2.36 x86-64 thread block fields (sysdeps/x86_64/nptl/tls.h). */
enum {
    TCB_TCB = 0x0,            /* void *tcb: the block itself */
    TCB_SELF = 0x10,          /* struct pthread *self: the block itself */
    TCB_MULTIPLE = 0x18,      /* int multiple_threads */
    TCB_STACK_GUARD = 0x28,   /* uintptr_t stack_guard */
    TCB_POINTER_GUARD = 0x30, /* uintptr_t pointer_guard */
    TCB_LIST = 0x2c0,         /* list_t list: glibc's stack lists (nptl/descr.h) */
    TCB_TID = 0x2d0,          /* pid_t tid */
};

enum { PT_KEYS_MAX = 1024, PT_KEY_BLOCK = 32 };

struct pt_keyval {
    uint64_t seq; /* the key's generation this value belongs to */
    void *value;
};

/* Exit/detach handshake of a user thread's record (pt.state). */
enum { PT_RUNNING = 0, PT_DETACHED = 1, PT_EXITED = 2 };

/* The drop-in's record of a thread: one per user thread (made by
 * pthread_create; lives as long as its block), one per other kernel thread
 * that uses keys or cancellation (made on demand). */
struct pt {
    void *tcb;         /* its glibc thread block (= its pthread_t); immutable */
    weft_thread *h;    /* its weft thread; NULL: not a user thread, or joined */
    int user;          /* 1: made by pthread_create here; immutable */
    _Atomic int state; /* PT_*: CAS by the thread's end and by pthread_detach */
    void *result;      /* set by the thread before its end */
    struct pt_keyval *keys[PT_KEYS_MAX / PT_KEY_BLOCK]; /* blocks on demand; the thread only */
    uint32_t keymask;   /* bit i: keys[i] allocated; the thread only */
    _Atomic int cancel; /* 1: cancellation requested (any thread) */
    int cancel_state;   /* PTHREAD_CANCEL_ENABLE/DISABLE; the thread only */
    int cancel_type;    /* deferred/asynchronous (async.c); the thread writes, seq_cst */
    int had_clock;      /* 1: it got a CPU clock slot (thread.c); the getter only */
    int exiting;        /* 1 once pthread_exit (or the end) began; the thread writes,
                           signal.c's router reads (seq_cst at the end) */
    void *cleanup;      /* innermost registered cleanup buffer; the thread only */
    char name[16];      /* pthread_setname_np; racy reads */
    size_t stack_size;  /* as asked at creation; immutable */
    size_t guard_size;  /* as asked at creation; immutable */
    char *ustack;       /* the caller's stack (pthread_attr_setstack), NULL: weft's;
                           immutable */
    int sched_policy;   /* kept and returned; the thread and setters, racy */
    struct sched_param sched_param;
    /* 1: switched away by the preemption handler, which checks async
     * cancellation when it goes on (async.c); its hook writes, seq_cst */
    _Atomic int preempted;
    void *(*fn)(void *);         /* start routine; immutable */
    void *arg;                   /* its argument; immutable */
    _Atomic uint32_t done;       /* 1 once the thread ended (park.c word for joins); seq_cst */
    _Atomic uint32_t joiners;    /* joiners parked on done; seq_cst */
    _Atomic uint64_t sigpending; /* signals pending for this thread: bit sig-1 (signal.c) */
    void *_Atomic parked;        /* its park.c waiter while parked there, else NULL;
                                    set by the thread before it takes the waiter's
                                    bucket lock, cleared under that lock */
    cpu_set_t *affinity;         /* recorded by pthread_setaffinity_np; the thread only */
    pid_t ktid;                  /* a bound thread's kernel thread (bound.c); set at its start,
                                    or when a named one binds itself; the thread only */
    _Atomic int bind_want;       /* 1: named into WEFT_POSIX_BOUND by another thread; it
                                    binds itself at its start or next cancellation point */
    struct pt *next_free;        /* recycled records (thread.c); under its lock */
    /* signal.c: a user thread's signal state (bit sig-1 of each set) */
    _Atomic uint64_t sigmask;    /* blocked signals; written by the thread, read by routers */
    _Atomic uint64_t sigwaiting; /* the set its sigwait waits for, 0: none; the thread */
    _Atomic uint32_t sigword;    /* its sigwait parks here; routers bump it */
    /* Kept when a record is reused (thread.c's pt_get clears up to here):
     * a pending bit's code and value are written before the bit. */
    int sigcode[64];             /* si_code of each pending signal (SI_TKILL, SI_QUEUE) */
    union sigval sigval[64];     /* pthread_sigqueue's value of each pending signal */
    struct pt *_Atomic all_next; /* every record ever made (signal.c's list) */
};

/* The int fields of the attribute objects (thread.c, sync.c): a setter's
 * EINVAL unless ok, else *field = v; a getter's *out = v. */
static inline int weft__posix_set_int(int *field, int v, int ok)
{
    if (!ok)
        return EINVAL;
    *field = v;
    return 0;
}
static inline int weft__posix_get_int(int *out, int v)
{
    *out = v;
    return 0;
}

/* ---- tcb.c: glibc thread blocks, the glibc check, the load ---- */
void weft__posix_real_init(void);
/* glibc's definition of name (dlsym RTLD_NEXT), or a message and exit
 * 127 if glibc has none: real.c's and rw.c's thunks jump through it. */
void *weft__posix_real_sym(const char *name);
/* The thunk weft__real_<name>: one jump through the hidden pointer
 * <ptr><name>, which the library's constructors fill. */
#define WEFT__REAL_THUNK(ptr, name)                                                                \
    __attribute__((visibility("hidden"))) void *ptr##name;                                         \
    __asm__(".text\n.globl weft__real_" #name "\n.hidden weft__real_" #name                        \
            "\n.type weft__real_" #name ",@function\nweft__real_" #name ":\n\tjmp *" #ptr #name    \
            "(%rip)\n.size weft__real_" #name ",.-weft__real_" #name "\n");
void weft__posix_check_glibc(void);
/* A fresh block (TLS initialised), NULL: ENOMEM; *rec: the record a
 * recycled block had (it stays with its block on the free list), or NULL. */
void *weft__posix_tcb_get(struct pt **rec);
/* Back to the free list, with its record; returns the record when the
 * block went back to glibc instead (the caller recycles it), else NULL. */
struct pt *weft__posix_tcb_put(void *tcb);
struct pt *weft__posix_pt_of(void *tcb);   /* the record a block's pt_tls names, or NULL */
struct pt *weft__posix_self(void);         /* the caller's record, made on demand; NULL: ENOMEM */
struct pt *weft__posix_self_if_any(void);  /* the caller's record, or NULL */
void weft__posix_thread_end(struct pt *p); /* key destructors (thread.c) */
extern void (*weft__posix_on_end)(struct pt *p); /* tcb.c calls thread_end through it */
void weft__posix_set_pt(void *tcb, struct pt *p);

/* ---- thread.c ---- */
int weft__posix_start(void); /* lazy start of the runtime; 0 or an errno */
/* 1 in a child of fork once the runtime ran in the parent: threads made
 * there are glibc's (docs/posix.md). */
extern int weft__posix_forked;
/* The initial thread's weft owner token from before the runtime started
 * (a kernel thread's), 0: unknown; and its record (sync.c: adopt). */
extern uintptr_t weft__posix_pre_token;
extern struct pt *weft__posix_main;
void weft__posix_testcancel(void);

/* ---- park.c: a futex for weft ---- */
/* Waits while *addr == val, until woken, or the absolute time abs on clock
 * clk passes (abs NULL: no limit). 0 (woken, or spuriously), EAGAIN
 * (*addr != val), ETIMEDOUT. Blocks the user thread (or the kernel thread). */
int weft__posix_park(_Atomic uint32_t *addr, uint32_t val, clockid_t clk,
                     const struct timespec *abs);
void weft__posix_unpark(_Atomic uint32_t *addr, int n); /* wakes up to n waiters */
/* Breaks p's park.c wait off (its weft__posix_park returns EINTR). */
void weft__posix_interrupt(struct pt *p);
/* ---- signal.c: per-user-thread masks, actions, routing ---- */
/* Runs the caller's pending signals that it does not block (their
 * actions run now, on the caller); 1 if any ran. Inline: the test that
 * none is pending runs on every yield and wake-up, through the
 * caller's record (tcb.c's pt_tls). */
extern __thread struct pt *weft__posix_pt_tls __attribute__((tls_model("initial-exec")));
int weft__posix_deliver_pending(struct pt *p);
static inline int weft__posix_deliver(void)
{
    struct pt *p = weft__posix_pt_tls;
    /* relaxed: the run rechecks the bits with its own atomics */
    if (__builtin_expect(!p || !atomic_load_explicit(&p->sigpending, memory_order_relaxed), 1))
        return 0;
    return weft__posix_deliver_pending(p);
}
int weft__posix_sig_run_ready(struct pt *p); /* the same, p the caller's record */
/* A mirrored call of the caller was broken off (ECANCELED from the ring):
 * runs its signals and acts on a cancellation. EINTR if the call must
 * return EINTR (a handler ran, and restart is 0 or the handler's action
 * lacks SA_RESTART), 0 to make the call again. */
int weft__posix_sig_broken(int restart);
/* The signals pending for p that end a park.c wait: those it does not
 * block, and those its sigwait waits for. */
static inline uint64_t weft__posix_sig_ready(struct pt *p)
{
    return atomic_load_explicit(&p->sigpending, memory_order_relaxed) &
           (~atomic_load_explicit(&p->sigmask, memory_order_relaxed) |
            atomic_load_explicit(&p->sigwaiting, memory_order_relaxed));
}
/* signal.c's entry points for the files below it (thread.c, tcb.c),
 * which it registers at load: signal.c sits above them (it parks, reads
 * records, tests the fork state), so they reach it only through these.
 * The table and the flag live in tcb.c. */
struct weft__posix_sig_ops {
    int (*run_ready)(struct pt *p);     /* weft__posix_sig_run_ready */
    void (*start)(struct pt *m);        /* the runtime starts */
    void (*inherit_slow)(struct pt *p); /* a new thread's mask, the slow way */
    void (*track)(struct pt *p);        /* a record made by calloc */
    void (*forked)(struct pt *p);       /* in a child of fork */
    _Atomic uint64_t *proc_pending;     /* its signals pending for the process */
};
extern struct weft__posix_sig_ops weft__posix_sig_ops;
/* 1: a signal is managed but the router is not running yet (the runtime
 * had not started): the next pthread_create starts it. */
extern _Atomic int weft__posix_sig_router_owed;

/* The runtime starts (thread.c, before weft_init): the caller's kernel
 * mask becomes its record's and is opened for the workers to inherit. */
static inline void weft__posix_sig_start(struct pt *m)
{
    if (weft__posix_sig_ops.start)
        weft__posix_sig_ops.start(m);
}
/* A record made by calloc joins the list signal.c routes over. */
static inline void weft__posix_sig_track(struct pt *p)
{
    if (weft__posix_sig_ops.track)
        weft__posix_sig_ops.track(p);
}
/* In a child of fork: the caller's mask goes back to its kernel thread. */
static inline void weft__posix_sig_forked(struct pt *p)
{
    if (weft__posix_sig_ops.forked)
        weft__posix_sig_ops.forked(p);
}
/* A new user thread p's mask: its creator's (thread.c). The fast path
 * inline: a user thread creates, and the router is not owed a start. */
static inline void weft__posix_sig_inherit(struct pt *p)
{
    struct pt *c = weft__posix_self_if_any();
    /* relaxed: a hint; the slow path decides under its own atomics */
    if (__builtin_expect(c && c->h &&
                             !atomic_load_explicit(&weft__posix_sig_router_owed,
                                                   memory_order_relaxed),
                         1)) {
        atomic_store_explicit(&p->sigmask, atomic_load_explicit(&c->sigmask, memory_order_relaxed),
                              memory_order_relaxed);
        return;
    }
    if (weft__posix_sig_ops.inherit_slow)
        weft__posix_sig_ops.inherit_slow(p);
}

/* ---- pshared.c: process-shared waits, robust mutexes ---- */
/* sync.c's mutex meta word (offset 32 of pthread_mutex_t). */
enum {
    PT_M_TYPE = 3,          /* PTHREAD_MUTEX_NORMAL .. ADAPTIVE_NP (0..3) */
    PT_M_ROBUST = 1u << 4,  /* glibc's kind bit for robust */
    PT_M_PSHARED = 1u << 7, /* glibc's kind bit for process-shared */
    PT_M_INCONS = 1u << 8,  /* robust: the owner died; until consistent */
    PT_M_NOTREC = 1u << 9,  /* robust: unlocked while inconsistent */
};
/* park's contract on the kernel's futex of a shared word (any process);
 * a user thread waits inside weft_blocking, and weft__posix_interrupt
 * breaks its wait off (EINTR) as it breaks off a park.c wait. */
int weft__posix_kwait(_Atomic uint32_t *addr, uint32_t val, clockid_t clk,
                      const struct timespec *abs);
/* Breaks p's weft__posix_kwait off, if it waits there; may wait a few
 * microseconds for p to leave the wait. A hook that pshared.c registers at
 * load and park.c's weft__posix_interrupt calls: park.c needs nothing of
 * pshared.c, which sits above it. */
extern void (*weft__posix_kinterrupt)(struct pt *p);
void weft__posix_kwake(_Atomic uint32_t *addr, int n); /* the real FUTEX_WAKE */
/* Mutexes whose meta has PT_M_PSHARED or PT_M_ROBUST: pthread's codes. */
int weft__posix_xmutex_lock(pthread_mutex_t *m, int try, clockid_t clk, const struct timespec *abs);
int weft__posix_xmutex_unlock(pthread_mutex_t *m);
int weft__posix_xmutex_consistent(pthread_mutex_t *m);
int weft__posix_xmutex_held(pthread_mutex_t *m);      /* 1: the caller owns it */
uint32_t weft__posix_xmutex_drop(pthread_mutex_t *m); /* full release; returns the count */
void weft__posix_xmutex_setcount(pthread_mutex_t *m, uint32_t count);
/* The caller's end: its robust holds owner-died (pshared.c registers it
 * at load; thread.c calls it: a hook, so that thread.c needs nothing of
 * pshared.c). */
extern void (*weft__posix_robust_exit)(void);

/* ---- bound.c: WEFT_POSIX_BOUND ---- */
int weft__posix_bound_all(void);               /* 1: WEFT_POSIX_BOUND has * */
int weft__posix_bound_named(const char *name); /* 1: WEFT_POSIX_BOUND lists name */
/* The calling user thread p becomes a bound thread in place: its kernel
 * thread is its own from now on (bound.c). 0 or EAGAIN. */
int weft__posix_bind_self(struct pt *p);
void weft__posix_bound_enter(struct pt *p); /* a bound thread's start: its block */
void weft__posix_bound_leave(void);         /* back to its kernel thread's block */
int weft__posix_bound_setaffinity(struct pt *p, size_t n, const cpu_set_t *set);
int weft__posix_bound_getaffinity(struct pt *p, size_t n, cpu_set_t *set);

/* ---- async.c: asynchronous cancellation ---- */
/* p, cancelled with asynchronous cancellation enabled: asks the worker
 * that runs it to preempt it, where the handler ends it; looks again a
 * few times if none runs it now (yielding the caller's worker). */
void weft__posix_async_kick(struct pt *p);
/* Ends the caller (p, its record; NULL: none) if its asynchronous cancellation is due:
 * for the drop-in's calls that are no cancellation point but keep the
 * thread in the runtime's code, where the preemption handler leaves it be
 * (a sched_yield loop). */
void weft__posix_async_point(struct pt *p);

/* ---- helpers ---- */
/* 1 if a cancellation of p's acts at a cancellation point now: requested,
 * enabled, and p a user thread not ending already (acting on one). */
static inline int weft__posix_cancel_acts(const struct pt *p)
{
    return p->h && atomic_load(&p->cancel) && p->cancel_state == PTHREAD_CANCEL_ENABLE &&
           !p->exiting;
}
static inline int weft__posix_on_user(void)
{
    return weft_self() != NULL;
}
void weft__posix_sleep_ns(uint64_t ns);
struct timespec weft__posix_deadline_ns(uint64_t ns); /* CLOCK_MONOTONIC, ns from now */
int weft__posix_sleep_until(clockid_t clk, const struct timespec *abs); /* 0 or EINTR */
int weft__posix_timed_out(clockid_t clk, const struct timespec *abs);

#endif
