/* sync.c: pthread mutexes, condition variables, read-write locks, spin
 * locks, barriers and unnamed semaphores, in glibc's sizes.
 *
 * Layouts (glibc's sizes, checked below):
 *  - pthread_mutex_t (40): weft_mutex in bytes 0-31 (its owner word makes
 *    it error-checking for user and kernel threads alike), then a meta
 *    word (READY | type | flags) and a recursion count. glibc's static
 *    initialisers put the kind at byte 16, inside weft_mutex: the first
 *    use of an object whose meta is 0 reads that kind, zeroes it and
 *    publishes meta (one CAS decides who converts; others wait the few
 *    instructions it takes). A thread with asynchronous cancellation on
 *    waits for a held mutex on park.c, on meta (M_PARKED: lock_intr), as
 *    weft_mutex's wait cannot be broken off.
 *  - pthread_cond_t (48): a sequence word, a waiter count and the clock;
 *    futex-style on park.c (so a wait can be broken off by a signal or a
 *    cancellation).
 *  - pthread_rwlock_t (56): a word (readers, WRITER), a wake sequence, the
 *    waiter count and the writer's owner token; futex-style on park.c.
 *  - pthread_spinlock_t (4), pthread_barrier_t (32), sem_t (32; value in
 *    the low 32 bits of the first word and waiters in the high, as glibc's,
 *    so sem_open's objects work too): futex-style on park.c; a kernel
 *    thread waits for a semaphore on the kernel's futex (sem_on_kernel).
 * Timed mutex locks retry with growing sleeps (weft_mutex has no timed
 * lock); everything else waits in park.c with its deadline.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "posix/posix.h"
#include "sync/mutex.h"
#include "sync/wait.h"

extern __typeof__(sched_yield) weft__real_sched_yield;

/* ---- mutexes ------------------------------------------------------------- */

struct pmutex {
    weft_mutex m;
    _Atomic uint32_t meta; /* READY | BUSY | type | flags; 0: not yet converted */
    uint32_t count;        /* recursive: extra locks held by the owner; owner only */
};
_Static_assert(sizeof(struct pmutex) == sizeof(pthread_mutex_t), "glibc's mutex size");

enum {
    M_TYPE = PT_M_TYPE,
    M_ROBUST = PT_M_ROBUST,
    M_PSHARED = PT_M_PSHARED,
    M_X = M_ROBUST | M_PSHARED, /* pshared.c's mutexes */
    M_SLOW = 1u << 5,           /* recursive or M_X: one test sends these off the fast path */
    M_PROTECT = 1u << 6,        /* PTHREAD_PRIO_PROTECT: the ceiling is kept at M_CEIL_SHIFT */
    M_CEIL_SHIFT = 16,          /* 8 bits: SCHED_FIFO's range is 1..99 */
    M_PARKED = 1u << 29,        /* threads may be parked in lock_intr (on meta) */
    M_BUSY = 1u << 30,          /* being converted */
    M_READY = 1u << 31,
};
/* pthread_mutexattr_t (4): type in 0-3, robust 4, protocol 8-9, pshared
 * 12, prioceiling 16-31. */
enum { A_ROBUST = 1u << 4, A_PROTO_SHIFT = 8, A_PSHARED = 1u << 12, A_CEIL_SHIFT = 16 };

#define PM(m) ((struct pmutex *)(void *)(m))

/* meta with M_SLOW if its type or flags need more than weft_mutex. */
static uint32_t with_slow(uint32_t meta)
{
    return meta | (((meta & M_TYPE) == PTHREAD_MUTEX_RECURSIVE || (meta & M_X)) ? M_SLOW : 0);
}

WEFT_NOINLINE static uint32_t convert(struct pmutex *m)
{
    for (;;) {
        uint32_t v = atomic_load_explicit(&m->meta, memory_order_acquire);
        if (v & M_READY)
            return v;
        if (v == 0 && atomic_compare_exchange_strong(&m->meta, &v, M_BUSY)) {
            int kind;
            memcpy(&kind, (char *)m + 16, sizeof kind);
            memset((char *)m + 16, 0, sizeof kind);
            uint32_t meta =
                with_slow(M_READY | ((uint32_t)kind & M_TYPE) | ((uint32_t)kind & M_ROBUST));
            /* release: the zeroed weft_mutex; pairs with the acquire above */
            atomic_store_explicit(&m->meta, meta, memory_order_release);
            return meta;
        }
        weft__cpu_relax();
    }
}

static inline uint32_t meta_of(struct pmutex *m)
{
    uint32_t v = atomic_load_explicit(&m->meta, memory_order_acquire);
    return WEFT_LIKELY(v & M_READY) ? v : convert(m);
}

/* An attribute's priority ceiling; unset, SCHED_FIFO's lowest, as glibc. */
static uint32_t attr_ceiling(uint32_t at)
{
    uint32_t c = at >> A_CEIL_SHIFT;
    int min = sched_get_priority_min(SCHED_FIFO);
    return c ? c : (uint32_t)(min > 0 ? min : 1);
}

PT_API int pthread_mutex_init(pthread_mutex_t *mx, const pthread_mutexattr_t *a)
{
    uint32_t at = a ? *(const uint32_t *)(const void *)a : 0;
    memset(mx, 0, sizeof *mx);
    uint32_t prot = 0;
    if (((at >> A_PROTO_SHIFT) & 3) == PTHREAD_PRIO_PROTECT)
        prot = M_PROTECT | (attr_ceiling(at) & 0xffu) << M_CEIL_SHIFT;
    atomic_store_explicit(&PM(mx)->meta,
                          with_slow(M_READY | (at & M_TYPE) | (at & A_ROBUST) |
                                    ((at & A_PSHARED) ? M_PSHARED : 0)) |
                              prot,
                          memory_order_release);
    return 0;
}

PT_API int pthread_mutex_destroy(pthread_mutex_t *mx)
{
    if (meta_of(PM(mx)) & M_X)
        return (*(_Atomic uint32_t *)(void *)mx & 0x3fffffffu) ? EBUSY : 0;
    return weft_mutex_destroy(&PM(mx)->m);
}

/* The initial thread may hold mutexes it took before the runtime started,
 * as a kernel thread, under that kernel thread's owner token; it is a user
 * thread with a token of its own since. The first time it acts on such a
 * mutex as its owner, the hold moves to its new token: one CAS of the
 * owner bits of weft_mutex's word (owner | K | W | L, checked at the start:
 * thread.c, pre_start_token), once the internal lock bit L is clear. */
/* Moves a hold of m by owner token from (0: by anyone) to the caller: one
 * CAS of the owner bits of weft_mutex's word (owner | K | W | L), once the
 * internal lock bit L is clear. 1 if the caller holds it now. */
static int take_hold(struct pmutex *m, uintptr_t from)
{
    _Atomic uint64_t *word = (_Atomic uint64_t *)(void *)&m->m;
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
    for (;;) {
        uint64_t owner = v & ~(uint64_t)7;
        if (!owner || (from && owner != from))
            return 0;
        if (v & 1) {
            weft__cpu_relax();
            v = atomic_load_explicit(word, memory_order_relaxed);
            continue;
        }
        /* acquire: we hold it, and read what it protects, as its owner */
        if (atomic_compare_exchange_weak_explicit(word, &v, weft__sync_owner() | (v & 6),
                                                  memory_order_acquire, memory_order_relaxed))
            return 1;
    }
}

/* 1 if owner is the token the initial thread held things under before
 * the runtime started, and the caller is the initial thread. */
static int main_before_start(uintptr_t owner)
{
    return owner && owner == weft__posix_pre_token && weft__posix_self_if_any() == weft__posix_main;
}

WEFT_NOINLINE static int adopt(struct pmutex *m)
{
    return main_before_start(weft__posix_pre_token) && take_hold(m, weft__posix_pre_token);
}

/* The owner relocks a normal mutex: it waits for ever, as under glibc.
 * Signal handlers still run, and an asynchronous cancellation acts (the
 * way out glibc's programs take); a deferred one does not (the lock is no
 * cancellation point), and the wait goes on without a park that its
 * pending cancellation would break off at once. */
WEFT_NOINLINE __attribute__((noreturn)) static void relock(void)
{
    static _Atomic uint32_t never;
    for (;;) {
        int r = weft__posix_park(&never, 0, CLOCK_MONOTONIC, NULL);
        weft__posix_deliver();
        struct pt *p = weft__posix_self_if_any();
        if (r != EINTR || !p || !atomic_load(&p->cancel))
            continue;
        if (p->cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS)
            weft__posix_testcancel();
        weft_sleep_ns(10 * 1000 * 1000);
    }
}

/* A wait that is no cancellation point (a rwlock's, a barrier's) was
 * broken off: pending signals run their handlers, an asynchronous
 * cancellation acts, and the wait goes on. What broke it off may stay (a
 * deferred cancellation, which acts only at a cancellation point): then
 * the next wait begins after a pause, not at once. */
static void interrupted_wait(void)
{
    int ran = weft__posix_deliver();
    weft__posix_async_point(weft__posix_pt_tls);
    if (!ran)
        weft_sleep_ns(1000 * 1000);
}

/* An unlock by a thread that does not hold m (weft_mutex said EPERM): the
 * initial thread's hold from before the start; a normal mutex, unlocked
 * by any thread as glibc allows (0 if it was not locked at all); EPERM
 * for error-checking, recursive and robust ones. */
WEFT_NOINLINE static int unlock_other(struct pmutex *m, uint32_t meta)
{
    if (weft__posix_pre_token && adopt(m))
        return weft_mutex_unlock(&m->m);
    uint32_t type = meta & M_TYPE;
    if ((meta & M_ROBUST) || (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_ADAPTIVE_NP))
        return EPERM;
    if (take_hold(m, 0))
        return weft_mutex_unlock(&m->m);
    return 0;
}

static inline int is_owner(struct pmutex *m)
{
    return weft__mutex_held(&m->m, weft__sync_owner()) || (weft__posix_pre_token && adopt(m));
}

/* Asynchronous cancellation acts while the caller waits for a mutex: the
 * caller is a user thread with it enabled (its own fields). */
static int async_waiter(const struct pt *p)
{
    return p && p->h && p->cancel_state == PTHREAD_CANCEL_ENABLE &&
           __atomic_load_n(&p->cancel_type, __ATOMIC_RELAXED) == PTHREAD_CANCEL_ASYNCHRONOUS;
}

/* The wait of async_waiter, one pthread_cancel can break off (park.c's
 * interrupt): futex-style on meta, whose M_PARKED tells unlockers to wake
 * it (unlock_parked). An unlock that read meta before M_PARKED was set
 * and frees m after our trylock wakes nobody, and a pthread_cancel that
 * comes between two parks interrupts nothing: each park ends after
 * PARKED_POLL_NS, to look again at both. weft_mutex's own wait cannot be
 * broken off; its waiters and these share the lock word (trylock). */
#define PARKED_POLL_NS (10 * 1000 * 1000)
WEFT_NOINLINE static int lock_intr(struct pmutex *m, struct pt *p)
{
    for (;;) {
        weft__posix_async_point(p);
        /* seq_cst: M_PARKED, then the lock word; the unlocker frees the
         * word after it read meta */
        uint32_t v = atomic_fetch_or(&m->meta, M_PARKED) | M_PARKED;
        if (weft_mutex_trylock(&m->m) == 0)
            return 0;
        struct timespec abs = weft__posix_deadline_ns(PARKED_POLL_NS);
        int e = weft__posix_park(&m->meta, v, CLOCK_MONOTONIC, &abs);
        if (e == EINTR)
            weft__posix_deliver(); /* signal handlers run meanwhile */
        else if (e == EAGAIN && atomic_load(&m->meta) == v)
            weft_yield(); /* no timer to be had: the holder runs first */
    }
}

/* Waits for m, held by another thread. */
static int lock_other(struct pmutex *m)
{
    struct pt *p = weft__posix_pt_tls;
    if (WEFT_UNLIKELY(async_waiter(p)))
        return lock_intr(m, p);
    return weft_mutex_lock(&m->m);
}

/* pthread_mutex_unlock of m (meta) with threads parked in lock_intr,
 * maybe: M_PARKED is cleared while m is still held, and the wake names
 * m's address only (park.c never reads the word), so m may be destroyed
 * as soon as it is free, as POSIX allows. */
WEFT_NOINLINE static int unlock_parked(struct pmutex *m, uint32_t meta)
{
    atomic_fetch_and(&m->meta, ~(uint32_t)M_PARKED);
    int r = weft_mutex_unlock(&m->m);
    if (r == EPERM)
        r = unlock_other(m, meta);
    weft__posix_unpark(&m->meta, INT_MAX);
    return r;
}

/* Recursive mutexes and pshared.c's, off the fast path. */
WEFT_NOINLINE static int lock_slow(pthread_mutex_t *mx, uint32_t meta, int try)
{
    struct pmutex *m = PM(mx);
    if (meta & M_X)
        return weft__posix_xmutex_lock(mx, try, CLOCK_REALTIME, NULL);
    if (is_owner(m)) {
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    if (!try)
        return lock_other(m);
    int r = weft_mutex_trylock(&m->m);
    return r == EDEADLK ? EBUSY : r;
}

/* pthread_mutex_lock of m (meta), held when it looked. */
WEFT_NOINLINE static int lock_busy(struct pmutex *m, uint32_t meta)
{
    if (is_owner(m)) {
        if ((meta & M_TYPE) == PTHREAD_MUTEX_ERRORCHECK)
            return EDEADLK;
        relock(); /* POSIX: a normal mutex relocked by its owner deadlocks */
    }
    return lock_other(m);
}

PT_API int pthread_mutex_lock(pthread_mutex_t *mx)
{
    struct pmutex *m = PM(mx);
    uint32_t meta = meta_of(m);
    if (WEFT_UNLIKELY(meta & M_SLOW))
        return lock_slow(mx, meta, 0);
    /* weft_mutex_lock's first step, so that a contended lock chooses its
     * wait (lock_other) */
    if (WEFT_LIKELY(weft__mutex_take_free(&m->m, weft__sync_owner())))
        return 0;
    return lock_busy(m, meta);
}

PT_API int pthread_mutex_trylock(pthread_mutex_t *mx)
{
    struct pmutex *m = PM(mx);
    uint32_t meta = meta_of(m);
    if (WEFT_UNLIKELY(meta & M_SLOW))
        return lock_slow(mx, meta, 1);
    int r = weft_mutex_trylock(&m->m);
    return r == EDEADLK ? EBUSY : r;
}

PT_API int pthread_mutex_unlock(pthread_mutex_t *mx)
{
    struct pmutex *m = PM(mx);
    uint32_t meta = meta_of(m);
    if (WEFT_UNLIKELY(meta & (M_SLOW | M_PARKED))) {
        if (meta & M_X)
            return weft__posix_xmutex_unlock(mx);
        if (m->count && is_owner(m)) {
            m->count--;
            return 0;
        }
        if (meta & M_PARKED)
            return unlock_parked(m, meta);
    }
    int r = weft_mutex_unlock(&m->m);
    if (WEFT_UNLIKELY(r == EPERM))
        r = unlock_other(m, meta);
    return r;
}

PT_API int pthread_mutex_clocklock(pthread_mutex_t *mx, clockid_t clk, const struct timespec *abs)
{
    if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)
        return EINVAL;
    if (meta_of(PM(mx)) & M_X) {
        if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000)
            return EINVAL;
        return weft__posix_xmutex_lock(mx, 0, clk, abs);
    }
    int r = pthread_mutex_trylock(mx);
    if (r != EBUSY)
        return r;
    if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000)
        return EINVAL;
    if ((meta_of(PM(mx)) & M_TYPE) == PTHREAD_MUTEX_ERRORCHECK && is_owner(PM(mx)))
        return EDEADLK;
    uint64_t ns = 1000;
    for (;;) {
        if (weft__posix_timed_out(clk, abs))
            return ETIMEDOUT;
        weft__posix_sleep_ns(ns);
        if (ns < 1000000)
            ns *= 2;
        r = pthread_mutex_trylock(mx);
        if (r != EBUSY)
            return r;
    }
}

PT_API int pthread_mutex_timedlock(pthread_mutex_t *mx, const struct timespec *abs)
{
    return pthread_mutex_clocklock(mx, CLOCK_REALTIME, abs);
}

PT_API int pthread_mutex_consistent(pthread_mutex_t *mx)
{
    return (meta_of(PM(mx)) & M_ROBUST) ? weft__posix_xmutex_consistent(mx) : EINVAL;
}
/* Priority ceilings: kept for PTHREAD_PRIO_PROTECT mutexes (user threads
 * are not run at them); EINVAL for the others, as glibc. */
PT_API int pthread_mutex_getprioceiling(const pthread_mutex_t *mx, int *ceil)
{
    uint32_t meta = meta_of(PM(mx));
    if (!(meta & M_PROTECT))
        return EINVAL;
    *ceil = (int)((meta >> M_CEIL_SHIFT) & 0xffu);
    return 0;
}
PT_API int pthread_mutex_setprioceiling(pthread_mutex_t *mx, int ceil, int *old)
{
    struct pmutex *m = PM(mx);
    uint32_t meta = meta_of(m);
    if (!(meta & M_PROTECT) || ceil < sched_get_priority_min(SCHED_FIFO) ||
        ceil > sched_get_priority_max(SCHED_FIFO))
        return EINVAL;
    /* POSIX: locks the mutex, changes the ceiling, unlocks it */
    int owned = is_owner(m);
    if (!owned) {
        int r = weft_mutex_lock(&m->m);
        if (r)
            return r;
    }
    uint32_t prev = atomic_load_explicit(&m->meta, memory_order_relaxed);
    while (!atomic_compare_exchange_weak(&m->meta, &prev,
                                         (prev & ~(0xffu << M_CEIL_SHIFT)) | (uint32_t)ceil
                                                                                 << M_CEIL_SHIFT))
        ;
    if (old)
        *old = (int)((prev >> M_CEIL_SHIFT) & 0xffu);
    if (!owned)
        weft_mutex_unlock(&m->m);
    return 0;
}

/* The attribute initialisers: all bits 0. */
static int attr_zero(void *a, size_t n)
{
    memset(a, 0, n);
    return 0;
}
PT_API int pthread_mutexattr_init(pthread_mutexattr_t *a)
{
    return attr_zero(a, sizeof *a);
}
PT_API int pthread_mutexattr_destroy(pthread_mutexattr_t *a)
{
    (void)a;
    return 0;
}
#define ATTR(a)  (*(uint32_t *)(void *)(a))
#define CATTR(a) (*(const uint32_t *)(const void *)(a))

/* The attribute setters: EINVAL unless ok, else the bits of mask in the
 * attribute word become v. */
static int attr_put(void *a, int ok, uint32_t mask, uint32_t v)
{
    if (!ok)
        return EINVAL;
    ATTR(a) = (ATTR(a) & ~mask) | v;
    return 0;
}
/* The two-valued getters: yes if bit is set in the attribute word. */
static int attr_flag(const void *a, uint32_t bit, int yes, int no)
{
    return (CATTR(a) & bit) ? yes : no;
}

PT_API int pthread_mutexattr_settype(pthread_mutexattr_t *a, int t)
{
    return attr_put(a, t >= 0 && t <= 3, M_TYPE, (uint32_t)t);
}
PT_API int pthread_mutexattr_gettype(const pthread_mutexattr_t *a, int *t)
{
    return weft__posix_get_int(t, (int)(CATTR(a) & M_TYPE));
}
PT_API int pthread_mutexattr_setrobust(pthread_mutexattr_t *a, int r)
{
    return attr_put(a, r == PTHREAD_MUTEX_STALLED || r == PTHREAD_MUTEX_ROBUST, A_ROBUST,
                    r ? A_ROBUST : 0);
}
PT_API int pthread_mutexattr_getrobust(const pthread_mutexattr_t *a, int *r)
{
    return weft__posix_get_int(r,
                               attr_flag(a, A_ROBUST, PTHREAD_MUTEX_ROBUST, PTHREAD_MUTEX_STALLED));
}
PT_API int pthread_mutexattr_setprotocol(pthread_mutexattr_t *a, int p)
{
    return attr_put(a,
                    p == PTHREAD_PRIO_NONE || p == PTHREAD_PRIO_INHERIT ||
                        p == PTHREAD_PRIO_PROTECT,
                    3u << A_PROTO_SHIFT, (uint32_t)p << A_PROTO_SHIFT);
}
PT_API int pthread_mutexattr_getprotocol(const pthread_mutexattr_t *a, int *p)
{
    return weft__posix_get_int(p, (int)((CATTR(a) >> A_PROTO_SHIFT) & 3));
}
PT_API int pthread_mutexattr_setpshared(pthread_mutexattr_t *a, int s)
{
    return attr_put(a, s == PTHREAD_PROCESS_PRIVATE || s == PTHREAD_PROCESS_SHARED, A_PSHARED,
                    s ? A_PSHARED : 0);
}
PT_API int pthread_mutexattr_getpshared(const pthread_mutexattr_t *a, int *s)
{
    return weft__posix_get_int(s, attr_flag(a, A_PSHARED, PTHREAD_PROCESS_SHARED,
                                            PTHREAD_PROCESS_PRIVATE));
}
PT_API int pthread_mutexattr_setprioceiling(pthread_mutexattr_t *a, int c)
{
    return attr_put(a,
                    c >= sched_get_priority_min(SCHED_FIFO) &&
                        c <= sched_get_priority_max(SCHED_FIFO),
                    ~0xffffu, (uint32_t)c << A_CEIL_SHIFT);
}
PT_API int pthread_mutexattr_getprioceiling(const pthread_mutexattr_t *a, int *c)
{
    return weft__posix_get_int(c, (int)attr_ceiling(CATTR(a)));
}

/* A futex-style wait on w while it holds v, and a wake of n waiters: the
 * kernel's shared futex for a process-shared object (pshared.c: a wake
 * from another process reaches it), park.c for the others. */
static inline int word_wait(int shared, _Atomic uint32_t *w, uint32_t v, clockid_t clk,
                            const struct timespec *abs)
{
    return WEFT_UNLIKELY(shared) ? weft__posix_kwait(w, v, clk, abs)
                                 : weft__posix_park(w, v, clk, abs);
}
static inline void word_wake(int shared, _Atomic uint32_t *w, int n)
{
    if (WEFT_UNLIKELY(shared))
        weft__posix_kwake(w, n);
    else
        weft__posix_unpark(w, n);
}

/* ---- condition variables -------------------------------------------------- */

/* A sequence word that every signal bumps, on park.c: a waiter reads it,
 * counts itself, drops the mutex and parks unless the word moved; park.c's
 * FIFO makes a signal wake the oldest waiter, which was waiting before the
 * signal if any was. Waits on park.c can be broken off, so a cancelled or
 * signalled thread leaves its wait (with the mutex taken again) as POSIX
 * says; weft_cond's waits cannot. */
struct pcond {
    _Atomic uint32_t seq;     /* bumped by every signal and broadcast with waiters */
    _Atomic uint32_t waiters; /* threads between their count and their wake */
    uint32_t clock;           /* clockid + 1 (0: CLOCK_REALTIME) | C_PSHARED */
    uint32_t pad[9];
};
_Static_assert(sizeof(struct pcond) == sizeof(pthread_cond_t), "glibc's cond size");
#define PC(c)     ((struct pcond *)(void *)(c))
#define C_PSHARED 0x100u /* the condattr's bit too */

PT_API int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    memset(c, 0, sizeof *c);
    uint32_t at = a ? CATTR(a) : 0;
    PC(c)->clock = at & (0xffu | C_PSHARED);
    return 0;
}
/* Waiters woken by a signal or broadcast may still be leaving the wait
 * (their count goes last): destroy waits for them, as glibc does, so the
 * object may be freed at once after it returns. Destroying a condition
 * variable with threads blocked on it is undefined (glibc waits for
 * ever; so does this). */
PT_API int pthread_cond_destroy(pthread_cond_t *c)
{
    while (atomic_load(&PC(c)->waiters))
        weft__posix_sleep_ns(1000);
    return 0;
}
/* Wakes n waiters of c, if it has any. seq_cst: a waiter counts itself
 * before it drops the mutex; a signaller that saw no waiter had nobody to
 * wake. */
static int cond_wake(pthread_cond_t *c, int n)
{
    if (atomic_load(&PC(c)->waiters)) {
        atomic_fetch_add(&PC(c)->seq, 1);
        word_wake(PC(c)->clock & C_PSHARED, &PC(c)->seq, n);
    }
    return 0;
}
PT_API int pthread_cond_signal(pthread_cond_t *c)
{
    return cond_wake(c, 1);
}
PT_API int pthread_cond_broadcast(pthread_cond_t *c)
{
    return cond_wake(c, INT_MAX);
}

/* A wait on a process-shared condition variable, or with a process-shared
 * or robust mutex, or one that threads wait for in lock_intr: the kernel's
 * futex for a shared one (pshared.c; broken off by pthread_kill and
 * pthread_cancel as park.c's), park.c otherwise. EOWNERDEAD if the
 * mutex's owner died meanwhile. */
static int cond_xwait(pthread_cond_t *cv, pthread_mutex_t *mx, clockid_t clk,
                      const struct timespec *abs)
{
    struct pcond *c = PC(cv);
    int x = (meta_of(PM(mx)) & M_X) != 0;
    if (x ? !weft__posix_xmutex_held(mx) : !is_owner(PM(mx)))
        return EPERM;
    weft__posix_testcancel();
    uint32_t s = atomic_load(&c->seq);
    atomic_fetch_add(&c->waiters, 1);
    uint32_t count;
    if (x) {
        count = weft__posix_xmutex_drop(mx);
    } else {
        count = PM(mx)->count;
        PM(mx)->count = 0;
        if (atomic_load(&PM(mx)->meta) & M_PARKED)
            unlock_parked(PM(mx), meta_of(PM(mx)));
        else
            weft_mutex_unlock(&PM(mx)->m);
    }
    int r = word_wait(c->clock & C_PSHARED, &c->seq, s, clk, abs);
    atomic_fetch_sub(&c->waiters, 1);
    int l = pthread_mutex_lock(mx);
    if (x)
        weft__posix_xmutex_setcount(mx, count);
    else
        PM(mx)->count = count;
    if (l == EOWNERDEAD || l == ENOTRECOVERABLE)
        return l;
    if (r == EINTR) {
        weft__posix_deliver();
        weft__posix_testcancel();
    }
    return r == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* A wait on a recursive mutex held once or more: the whole hold is
 * released and taken back, as glibc does. */
static int cond_wait(pthread_cond_t *cv, pthread_mutex_t *mx, clockid_t clk,
                     const struct timespec *abs)
{
    struct pmutex *m = PM(mx);
    struct pcond *c = PC(cv);
    if (WEFT_UNLIKELY((meta_of(m) & (M_X | M_PARKED)) || (c->clock & C_PSHARED)))
        return cond_xwait(cv, mx, clk, abs); /* M_PARKED: its unlock wakes them */
    if (!is_owner(m))
        return EPERM;
    weft__posix_testcancel();
    uint32_t s = atomic_load(&c->seq);
    atomic_fetch_add(&c->waiters, 1);
    uint32_t count = m->count;
    m->count = 0;
    weft_mutex_unlock(&m->m);
    int r;
    for (;;) {
        r = weft__posix_park(&c->seq, s, clk, abs);
        if (r != EINTR)
            break;
        /* a signal or a cancellation: with the mutex held again, the
         * handler runs (then a spurious wake-up, which POSIX allows), or
         * the thread is cancelled */
        weft_mutex_lock(&m->m);
        m->count = count;
        /* the count back first, once: a cancellation does not return, and
         * one that does not act (a thread already ending) goes on here */
        atomic_fetch_sub(&c->waiters, 1);
        weft__posix_deliver();
        struct pt *p = weft__posix_self_if_any();
        if (p && atomic_load(&p->cancel) && p->cancel_state == PTHREAD_CANCEL_ENABLE)
            weft__posix_testcancel();
        return 0;
    }
    atomic_fetch_sub(&c->waiters, 1);
    weft_mutex_lock(&m->m);
    m->count = count;
    weft__posix_deliver();
    return r == ETIMEDOUT ? ETIMEDOUT : 0;
}

PT_API int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return cond_wait(c, m, CLOCK_REALTIME, NULL);
}
PT_API int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
    if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000)
        return EINVAL;
    uint32_t k = PC(c)->clock & 0xffu; /* the clock, without C_PSHARED */
    return cond_wait(c, m, k ? (clockid_t)(k - 1) : CLOCK_REALTIME, abs);
}
PT_API int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                  const struct timespec *abs)
{
    if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)
        return EINVAL;
    if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000)
        return EINVAL;
    return cond_wait(c, m, clk, abs);
}

PT_API int pthread_condattr_init(pthread_condattr_t *a)
{
    return attr_zero(a, sizeof *a);
}
PT_API int pthread_condattr_destroy(pthread_condattr_t *a)
{
    (void)a;
    return 0;
}
PT_API int pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clk)
{
    return attr_put(a, clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC, 0xffu, (uint32_t)(clk + 1));
}
PT_API int pthread_condattr_getclock(const pthread_condattr_t *a, clockid_t *clk)
{
    uint32_t k = CATTR(a) & 0xff;
    *clk = k ? (clockid_t)(k - 1) : CLOCK_REALTIME;
    return 0;
}
PT_API int pthread_condattr_setpshared(pthread_condattr_t *a, int s)
{
    return attr_put(a, s == PTHREAD_PROCESS_PRIVATE || s == PTHREAD_PROCESS_SHARED, 0x100u,
                    s ? 0x100u : 0);
}
PT_API int pthread_condattr_getpshared(const pthread_condattr_t *a, int *s)
{
    return weft__posix_get_int(s, attr_flag(a, 0x100u, PTHREAD_PROCESS_SHARED,
                                            PTHREAD_PROCESS_PRIVATE));
}

/* ---- read-write locks ----------------------------------------------------- */

struct prw {
    _Atomic uint32_t word;    /* readers | WRITER */
    _Atomic uint32_t seq;     /* bumped by every unlock; the park word */
    _Atomic uint32_t waiters; /* threads parked or about to park on seq */
    uint32_t pshared;         /* 1: process-shared (the kernel's futex); immutable */
    _Atomic uintptr_t writer; /* owner token of the write holder, 0: none */
    _Atomic uint32_t wpid;    /* pshared: the write holder's pid */
    char rest[28];
};
_Static_assert(sizeof(struct prw) == sizeof(pthread_rwlock_t), "glibc's rwlock size");
#define PR(l)     ((struct prw *)(void *)(l))
#define RW_WRITER (1u << 31)

PT_API int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
    memset(l, 0, sizeof *l);
    PR(l)->pshared = a && ((const int *)(const void *)a)[1] == PTHREAD_PROCESS_SHARED;
    return 0;
}

/* A writer's identity: its owner token, and its pid for a shared lock
 * (tokens of two processes may be equal). */
static int rw_mine(struct prw *r)
{
    return atomic_load_explicit(&r->writer, memory_order_relaxed) == weft__sync_owner() &&
           (!r->pshared ||
            atomic_load_explicit(&r->wpid, memory_order_relaxed) == (uint32_t)getpid());
}
/* EBUSY only while threads wait on it. A lock still held is destroyed, as
 * glibc does (POSIX leaves it undefined): its holder may have ended
 * without unlocking it, which the Open POSIX suite's timed-lock tests
 * (pthread_rwlock_timedrdlock/6-2) do before they destroy it. */
PT_API int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    return atomic_load(&PR(l)->waiters) ? EBUSY : 0;
}

static int rw_try(struct prw *r, int write)
{
    uint32_t v = atomic_load_explicit(&r->word, memory_order_relaxed);
    for (;;) {
        if (write ? v != 0 : (v & RW_WRITER) != 0)
            return EBUSY;
        if (!write && (v & ~RW_WRITER) == RW_WRITER - 1)
            return EAGAIN;
        /* acquire: the critical section after; pairs with unlock's release */
        if (atomic_compare_exchange_weak_explicit(&r->word, &v, write ? RW_WRITER : v + 1,
                                                  memory_order_acquire, memory_order_relaxed)) {
            if (write) {
                atomic_store_explicit(&r->writer, weft__sync_owner(), memory_order_relaxed);
                if (r->pshared)
                    atomic_store_explicit(&r->wpid, (uint32_t)getpid(), memory_order_relaxed);
            }
            return 0;
        }
    }
}

/* 1 if the caller is r's write holder: under its own token, or the
 * initial thread under the one it had before the runtime started (the
 * hold moves to its new token, as adopt does for mutexes). */
static int rw_writer_is_me(struct prw *r)
{
    if (rw_mine(r))
        return 1;
    if (r->pshared || !main_before_start(atomic_load_explicit(&r->writer, memory_order_relaxed)))
        return 0;
    atomic_store_explicit(&r->writer, weft__sync_owner(), memory_order_relaxed);
    return 1;
}

static int rw_lock(pthread_rwlock_t *l, int write, clockid_t clk, const struct timespec *abs)
{
    struct prw *r = PR(l);
    if ((atomic_load(&r->word) & RW_WRITER) && rw_writer_is_me(r))
        return EDEADLK;
    for (;;) {
        uint32_t s = atomic_load(&r->seq);
        int e = rw_try(r, write);
        if (e != EBUSY)
            return e;
        if (abs && weft__posix_timed_out(clk, abs))
            return ETIMEDOUT;
        atomic_fetch_add(&r->waiters, 1);
        e = word_wait(r->pshared, &r->seq, s, clk, abs);
        atomic_fetch_sub(&r->waiters, 1);
        if (e == ETIMEDOUT)
            return ETIMEDOUT;
        if (e == EINTR)
            interrupted_wait(); /* the handler runs; the wait goes on (POSIX) */
    }
}

PT_API int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    return rw_lock(l, 0, CLOCK_REALTIME, NULL);
}
PT_API int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    return rw_lock(l, 1, CLOCK_REALTIME, NULL);
}
PT_API int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    return rw_try(PR(l), 0);
}
PT_API int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    return rw_try(PR(l), 1);
}
static int bad_time(const struct timespec *abs)
{
    return !abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000;
}
PT_API int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk,
                                      const struct timespec *abs)
{
    if ((clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) || bad_time(abs))
        return EINVAL;
    return rw_lock(l, 0, clk, abs);
}
PT_API int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk,
                                      const struct timespec *abs)
{
    if ((clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) || bad_time(abs))
        return EINVAL;
    return rw_lock(l, 1, clk, abs);
}
PT_API int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    return pthread_rwlock_clockrdlock(l, CLOCK_REALTIME, abs);
}
PT_API int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    return pthread_rwlock_clockwrlock(l, CLOCK_REALTIME, abs);
}
PT_API int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    struct prw *r = PR(l);
    uint32_t v = atomic_load_explicit(&r->word, memory_order_relaxed);
    if (v & RW_WRITER) {
        if (!rw_writer_is_me(r))
            return EPERM;
        atomic_store_explicit(&r->writer, 0, memory_order_relaxed);
        /* release: the critical section; pairs with rw_try's acquire */
        atomic_store_explicit(&r->word, 0, memory_order_release);
    } else if (v == 0) {
        return EPERM;
    } else {
        atomic_fetch_sub_explicit(&r->word, 1, memory_order_release);
    }
    /* seq_cst: bump seq, then look for waiters; a waiter counts itself,
     * then parks only if seq has not moved (park.c reads it under its
     * bucket lock): one of the two sees the other. */
    atomic_fetch_add(&r->seq, 1);
    if (atomic_load(&r->waiters))
        word_wake(r->pshared, &r->seq, INT_MAX);
    return 0;
}

PT_API int pthread_rwlockattr_init(pthread_rwlockattr_t *a)
{
    return attr_zero(a, sizeof *a);
}
PT_API int pthread_rwlockattr_destroy(pthread_rwlockattr_t *a)
{
    (void)a;
    return 0;
}
PT_API int pthread_rwlockattr_setkind_np(pthread_rwlockattr_t *a, int k)
{
    return weft__posix_set_int(&((int *)(void *)a)[0], k, k >= 0 && k <= 2);
}
PT_API int pthread_rwlockattr_getkind_np(const pthread_rwlockattr_t *a, int *k)
{
    return weft__posix_get_int(k, ((const int *)(const void *)a)[0]);
}
PT_API int pthread_rwlockattr_setpshared(pthread_rwlockattr_t *a, int s)
{
    return weft__posix_set_int(&((int *)(void *)a)[1], s,
                               s == PTHREAD_PROCESS_PRIVATE || s == PTHREAD_PROCESS_SHARED);
}
PT_API int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t *a, int *s)
{
    return weft__posix_get_int(s, ((const int *)(const void *)a)[1]);
}

/* ---- spin locks ----------------------------------------------------------- */

/* A spinner that does not get the lock soon yields its worker, so that a
 * holder preempted or parked on the same worker runs: no livelock with
 * more spinners than workers. */
PT_API int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
    (void)pshared;
    atomic_store((_Atomic int *)s, 0);
    return 0;
}
PT_API int pthread_spin_destroy(pthread_spinlock_t *s)
{
    (void)s;
    return 0;
}
PT_API int pthread_spin_trylock(pthread_spinlock_t *s)
{
    int z = 0;
    return atomic_compare_exchange_strong_explicit((_Atomic int *)s, &z, 1, memory_order_acquire,
                                                   memory_order_relaxed)
               ? 0
               : EBUSY;
}
PT_API int pthread_spin_lock(pthread_spinlock_t *s)
{
    _Atomic int *w = (_Atomic int *)s;
    for (unsigned i = 0;; i++) {
        int z = 0;
        /* acquire: pairs with the release in pthread_spin_unlock */
        if (atomic_load_explicit(w, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(w, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 0;
        if (i % 64 == 63) {
            if (weft_self()) {
                weft_yield();
                weft__posix_deliver(); /* handlers run while it spins */
                /* in the drop-in, where preemption does not end it */
                weft__posix_async_point(weft__posix_pt_tls);
            } else
                weft__real_sched_yield();
        } else {
            weft__cpu_relax();
        }
    }
}
PT_API int pthread_spin_unlock(pthread_spinlock_t *s)
{
    atomic_store_explicit((_Atomic int *)s, 0, memory_order_release);
    return 0;
}

/* ---- barriers ------------------------------------------------------------- */

struct pbar {
    uint32_t count;           /* threads per round; immutable */
    _Atomic uint32_t arrived; /* this round's arrivals */
    _Atomic uint32_t gen;     /* round number: the park word */
    uint32_t pshared;         /* 1: process-shared (the kernel's futex); immutable */
    uint32_t pad[4];
};
_Static_assert(sizeof(struct pbar) == sizeof(pthread_barrier_t), "glibc's barrier size");
#define PB(b) ((struct pbar *)(void *)(b))

PT_API int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                unsigned count)
{
    if (count == 0 || count > INT_MAX)
        return EINVAL;
    memset(b, 0, sizeof *b);
    PB(b)->count = count;
    PB(b)->pshared = a && CATTR(a) == PTHREAD_PROCESS_SHARED;
    return 0;
}
PT_API int pthread_barrier_destroy(pthread_barrier_t *b)
{
    return atomic_load(&PB(b)->arrived) ? EBUSY : 0;
}
PT_API int pthread_barrier_wait(pthread_barrier_t *bb)
{
    struct pbar *b = PB(bb);
    uint32_t g = atomic_load(&b->gen);
    if (atomic_fetch_add(&b->arrived, 1) + 1 == b->count) {
        atomic_store(&b->arrived, 0);
        atomic_fetch_add(&b->gen, 1); /* seq_cst: after arrived's reset */
        word_wake(b->pshared, &b->gen, INT_MAX);
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    while (atomic_load(&b->gen) == g) {
        int e = word_wait(b->pshared, &b->gen, g, CLOCK_MONOTONIC, NULL);
        if (e == EINTR)
            interrupted_wait(); /* the handler runs; the wait goes on (POSIX) */
    }
    return 0;
}
PT_API int pthread_barrierattr_init(pthread_barrierattr_t *a)
{
    return attr_zero(a, sizeof *a);
}
PT_API int pthread_barrierattr_destroy(pthread_barrierattr_t *a)
{
    (void)a;
    return 0;
}
PT_API int pthread_barrierattr_setpshared(pthread_barrierattr_t *a, int s)
{
    return attr_put(a, s == PTHREAD_PROCESS_PRIVATE || s == PTHREAD_PROCESS_SHARED, ~0u,
                    (uint32_t)s);
}
PT_API int pthread_barrierattr_getpshared(const pthread_barrierattr_t *a, int *s)
{
    return weft__posix_get_int(s, (int)CATTR(a));
}

/* ---- unnamed semaphores ----------------------------------------------------- */

struct psem {
    _Atomic uint32_t value;    /* glibc: the low half of its 64-bit word */
    _Atomic uint32_t waiters;  /* glibc: the high half */
    uint32_t shared;           /* glibc's private field: S_SHARED (sem_open's too), or 0 */
    _Atomic uint32_t kwaiters; /* private: those of waiters on the kernel's futex (glibc: pad) */
    uint32_t rest[4];
};
#define S_SHARED 128u /* glibc's FUTEX_SHARED */
_Static_assert(sizeof(struct psem) == sizeof(sem_t), "glibc's sem_t size");
#define PS(s) ((struct psem *)(void *)(s))

PT_API int sem_init(sem_t *s, int pshared, unsigned value)
{
    if (value > SEM_VALUE_MAX) {
        errno = EINVAL;
        return -1;
    }
    memset(s, 0, sizeof *s);
    PS(s)->shared = pshared ? S_SHARED : 0;
    atomic_store(&PS(s)->value, value);
    return 0;
}
PT_API int sem_destroy(sem_t *s)
{
    (void)s;
    return 0;
}
PT_API int sem_trywait(sem_t *ss)
{
    struct psem *s = PS(ss);
    uint32_t v = atomic_load_explicit(&s->value, memory_order_relaxed);
    while (v > 0)
        /* acquire: pairs with sem_post's increment */
        if (atomic_compare_exchange_weak_explicit(&s->value, &v, v - 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 0;
    errno = EAGAIN;
    return -1;
}
/* A waiter that is no user thread of the running runtime (the program's
 * kernel threads, a process that never made a thread, a child of fork)
 * waits on the kernel's futex of the value word, as for a shared
 * semaphore, so that a handler the kernel runs there breaks it off
 * (EINTR); park.c's kernel-thread sleep would go on after it. */
static int sem_on_kernel(const struct psem *s)
{
    return s->shared || !weft__posix_on_user() || weft__posix_forked;
}

static int sem_wait_until(sem_t *ss, clockid_t clk, const struct timespec *abs)
{
    struct psem *s = PS(ss);
    weft__posix_testcancel();
    for (;;) {
        if (sem_trywait(ss) == 0)
            return 0;
        if (abs && (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000)) {
            errno = EINVAL;
            return -1;
        }
        if (abs && weft__posix_timed_out(clk, abs)) {
            errno = ETIMEDOUT;
            return -1;
        }
        int kernel = sem_on_kernel(s);
        /* seq_cst, kwaiters first: a sem_post that counts this waiter in
         * waiters sees it in kwaiters too */
        if (kernel && !s->shared)
            atomic_fetch_add(&s->kwaiters, 1);
        atomic_fetch_add(&s->waiters, 1);
        int e = word_wait(kernel, &s->value, 0, clk, abs);
        atomic_fetch_sub(&s->waiters, 1);
        if (kernel && !s->shared)
            atomic_fetch_sub(&s->kwaiters, 1);
        if (e == EINTR) {
            int raised = weft__posix_deliver();
            weft__posix_testcancel(); /* a cancellation point */
            /* a kernel futex wait broken off: a handler ran there, in
             * this kernel thread or (a user thread's shared one) in the
             * one that waited for it */
            if (raised || kernel) {
                errno = EINTR; /* a handler ran: POSIX's sem_wait returns */
                return -1;
            }
        }
        if (e == ETIMEDOUT && sem_trywait(ss) != 0) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
}
PT_API int sem_wait(sem_t *s)
{
    return sem_wait_until(s, CLOCK_REALTIME, NULL);
}
PT_API int sem_timedwait(sem_t *s, const struct timespec *abs)
{
    return sem_wait_until(s, CLOCK_REALTIME, abs);
}
PT_API int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *abs)
{
    if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) {
        errno = EINVAL;
        return -1;
    }
    return sem_wait_until(s, clk, abs);
}
PT_API int sem_post(sem_t *ss)
{
    struct psem *s = PS(ss);
    uint32_t v = atomic_load_explicit(&s->value, memory_order_relaxed);
    do {
        if (v == SEM_VALUE_MAX) {
            errno = EOVERFLOW;
            return -1;
        }
    } while (!atomic_compare_exchange_weak(&s->value, &v, v + 1)); /* seq_cst: then waiters */
    if (atomic_load(&s->waiters)) {
        word_wake(s->shared, &s->value, 1); /* shared: any process's waiters, glibc's too */
        if (!s->shared && atomic_load(&s->kwaiters))
            weft__posix_kwake(&s->value, 1); /* sem_on_kernel's */
    }
    return 0;
}
PT_API int sem_getvalue(sem_t *s, int *v)
{
    *v = (int)atomic_load(&PS(s)->value);
    return 0;
}

/* glibc's older names of the robust-mutex calls, for binaries built
 * against headers that did not redirect them. */
PT_API int posix_consistent_np(pthread_mutex_t *mx) __asm__("pthread_mutex_consistent_np");
PT_API int posix_consistent_np(pthread_mutex_t *mx)
{
    return pthread_mutex_consistent(mx);
}
PT_API int posix_getrobust_np(const pthread_mutexattr_t *a,
                              int *r) __asm__("pthread_mutexattr_getrobust_np");
PT_API int posix_getrobust_np(const pthread_mutexattr_t *a, int *r)
{
    return pthread_mutexattr_getrobust(a, r);
}
PT_API int posix_setrobust_np(pthread_mutexattr_t *a,
                              int r) __asm__("pthread_mutexattr_setrobust_np");
PT_API int posix_setrobust_np(pthread_mutexattr_t *a, int r)
{
    return pthread_mutexattr_setrobust(a, r);
}
