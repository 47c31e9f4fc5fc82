/* pshared.c: process-shared waits and robust mutexes of the drop-in.
 *
 * Design
 * ------
 * A PTHREAD_PROCESS_SHARED object lives in memory that other processes map
 * at other addresses, so park.c (buckets hashed by this process's
 * addresses) cannot wake across processes. Such objects wait on the
 * kernel's futex of the shared word (never FUTEX_PRIVATE); a user thread on
 * a worker makes that wait inside weft_blocking, so its worker goes on with
 * other user threads meanwhile and a wake from any process reaches it. A
 * wake of a shared object is always the real FUTEX_WAKE. The objects keep
 * the layouts of sync.c, which both processes agree on since both run this
 * library (a child of fork runs glibc's threads but the drop-in's
 * functions); private objects never come here.
 *
 * Process-shared and robust mutexes ("x-mutexes") share one algorithm on a
 * word that keeps the layout glibc's robust mutexes and the kernel use:
 * owner id | FUTEX_WAITERS | FUTEX_OWNER_DIED. The owner id names the
 * process, the owner token at offset 8 the thread in it (user threads share
 * kernel threads, so a TID cannot name them). The id is the pid, except for
 * a robust shared mutex, whose id is the TID of this process's anchor: a
 * kernel thread of ours, made at the first such lock, that blocks every
 * signal and sleeps for ever with a robust list head of ours registered
 * (set_robust_list). Every robust mutex held in the process is linked in
 * that list (next at offset 24, the kernel's robust_list; prev at 16, ours)
 * under one lock, with list_op_pending naming the mutex being locked or
 * unlocked. The anchor dies only with the process, however it dies, and
 * the kernel then marks each listed mutex whose word holds the anchor's TID
 * FUTEX_OWNER_DIED and wakes one waiter. A user thread (or a kernel thread
 * that used the drop-in) that ends holding robust mutexes releases them the
 * same way at its end (robust_exit, thread.c's hook). The next locker gets
 * EOWNERDEAD and the mutex is inconsistent (a meta bit) until
 * pthread_mutex_consistent; unlocked while inconsistent, it becomes not
 * recoverable (ENOTRECOVERABLE for every locker after).
 * Rejected: linking each mutex into its current kernel thread's own
 * (glibc's) robust list: a user thread may lock on one worker and unlock on
 * another, so lists would be shared between kernel threads that glibc and
 * the kernel assume private to one, and the TID in the word would stop
 * naming the owner after a migration.
 * Private robust mutexes run the same algorithm with park.c's waits (only
 * their owner's end matters; a dead process takes them along).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "posix/posix.h"
#include "sync/wait.h"

extern long weft__real_syscall(long nr, ...);
extern __typeof__(pthread_create) weft__real_pthread_create;
extern __typeof__(pthread_attr_init) weft__real_pthread_attr_init;
extern __typeof__(pthread_attr_destroy) weft__real_pthread_attr_destroy;
extern __typeof__(pthread_attr_setdetachstate) weft__real_pthread_attr_setdetachstate;
extern __typeof__(pthread_attr_setstacksize) weft__real_pthread_attr_setstacksize;
extern __typeof__(pthread_attr_setsigmask_np) weft__real_pthread_attr_setsigmask_np;

/* ---- the kernel's futex on a shared word ------------------------------------ */

struct kwait {
    _Atomic uint32_t *addr;
    uint32_t val;
    int realtime;               /* abs is on CLOCK_REALTIME */
    const struct timespec *abs; /* NULL: no limit */
    int err;                    /* out: 0, EAGAIN, ETIMEDOUT, EINTR */
};

static void kwait_run(void *arg)
{
    struct kwait *k = arg;
    long r = weft__real_syscall(SYS_futex, k->addr,
                                FUTEX_WAIT_BITSET | (k->realtime ? FUTEX_CLOCK_REALTIME : 0),
                                k->val, k->abs, NULL, FUTEX_BITSET_MATCH_ANY);
    k->err = r == 0 ? 0 : errno;
}

/* The wait itself; nothing breaks it off but the kernel's own signals. */
static int kwait_plain(_Atomic uint32_t *addr, uint32_t val, clockid_t clk,
                       const struct timespec *abs)
{
    struct kwait k = { addr, val, clk == CLOCK_REALTIME, abs, 0 };
    if (atomic_load(addr) != val)
        return EAGAIN;
    if (weft__posix_on_user() && !weft__posix_forked) {
        /* the worker goes on with others while this kernel thread waits */
        if (weft_blocking(kwait_run, &k) != 0)
            kwait_run(&k);
    } else {
        kwait_run(&k);
    }
    return k.err == EAGAIN || k.err == ETIMEDOUT || k.err == EINTR ? k.err : 0;
}

/* A user thread's wait is listed while it lasts, so that pthread_cancel
 * and a signal routed to the thread break it off as they break off a
 * park.c wait (weft__posix_interrupt calls kinterrupt, a hook): the
 * interrupter marks the entry and wakes the word. Nothing can make a
 * wait on another process's word fail for one waiter only, and the wake
 * may come between the listing and the sleep: the interrupter repeats it
 * until the waiter has left (a few microseconds: the waiter is on its own
 * kernel thread). The wake is the word's FUTEX_WAKE of all: the other
 * waiters wake spuriously, which every caller allows.
 * Rejected: a signal to the waiting kernel thread (it too is lost before
 * the sleep, unless the handler inspects where the thread stopped, as
 * glibc's cancellation does); waits in slices that look for a request
 * (a wake-up per slice for every waiter, and a slice's delay). */
struct kwaiter {
    struct pt *p;           /* the waiting user thread; immutable while listed */
    struct kwaiter *next;   /* under kw_lock */
    _Atomic uint32_t *addr; /* the word it waits on; immutable while listed */
    int kicked;             /* 1: an interrupt broke the wait off; under kw_lock */
};
static weft__lock kw_lock;      /* kw_list and the entries' kicked */
static struct kwaiter *kw_list; /* the listed waits; under kw_lock */
static _Atomic uint32_t kw_len; /* listed waits; seq_cst (kinterrupt) */
/* 1 once a pending cancellation broke a wait off at its start: a wait that
 * is no cancellation point (a barrier's) then sleeps, as on park.c,
 * instead of breaking off at once again and again. The thread only. */
static __thread int cancel_seen __attribute__((tls_model("initial-exec")));

/* Under kw_lock: p's listed wait, or NULL (a thread waits in one place). */
static struct kwaiter *kw_find(struct pt *p)
{
    struct kwaiter *w = kw_list;
    while (w && w->p != p)
        w = w->next;
    return w;
}

int weft__posix_kwait(_Atomic uint32_t *addr, uint32_t val, clockid_t clk,
                      const struct timespec *abs)
{
    struct pt *p = weft__posix_self_if_any();
    if (!p || !p->h || !weft__posix_on_user() || weft__posix_forked)
        return kwait_plain(addr, val, clk, abs); /* a kernel thread: glibc's cancellation */
    struct kwaiter me = { p, NULL, addr, 0 };
    /* seq_cst, and the fence: the interrupter wrote its request (the
     * cancel flag, a pending signal), then reads kw_len; we count
     * ourselves, then read the request */
    atomic_fetch_add(&kw_len, 1);
    atomic_thread_fence(memory_order_seq_cst);
    weft__sync_lock(&kw_lock);
    me.next = kw_list;
    kw_list = &me;
    int due = weft__posix_sig_ready(p) || (weft__posix_cancel_acts(p) && !cancel_seen);
    weft__sync_unlock(&kw_lock);
    int r = due ? EINTR : kwait_plain(addr, val, clk, abs);
    weft__sync_lock(&kw_lock);
    struct kwaiter **l = &kw_list;
    while (*l != &me)
        l = &(*l)->next;
    *l = me.next;
    due |= me.kicked;
    weft__sync_unlock(&kw_lock);
    atomic_fetch_sub(&kw_len, 1);
    if (!due)
        return r;
    if (weft__posix_cancel_acts(p))
        cancel_seen = 1;
    return EINTR;
}

static void kinterrupt(struct pt *p)
{
    /* seq_cst: pairs with weft__posix_kwait's count and fence */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load(&kw_len))
        return;
    weft__sync_lock(&kw_lock);
    struct kwaiter *w = kw_find(p);
    _Atomic uint32_t *addr = w ? w->addr : NULL;
    if (w)
        w->kicked = 1;
    weft__sync_unlock(&kw_lock);
    for (uint64_t pause = 2000; addr; pause = pause < 1000000 ? pause * 2 : pause) {
        weft__posix_kwake(addr, INT_MAX);
        weft__sync_lock(&kw_lock);
        /* the same wait, still there: not yet woken (a new wait of p's
         * at the same address is not kicked) */
        int still = kw_find(p) == w && w->kicked;
        weft__sync_unlock(&kw_lock);
        if (!still)
            return;
        weft__posix_sleep_ns(pause);
    }
}

void weft__posix_kwake(_Atomic uint32_t *addr, int n)
{
    weft__real_syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* ---- x-mutexes: process-shared and robust ------------------------------------ */

struct xmutex {
    _Atomic uint32_t word;   /* owner id | FUTEX_WAITERS | FUTEX_OWNER_DIED; 0: free */
    uint32_t count;          /* recursive: extra holds; the owner only */
    _Atomic uintptr_t token; /* the owner's weft__sync_owner() in its process; the owner */
    struct xmutex *prev;     /* robust: in the holder's list; under list_lock */
    struct xmutex *next;     /* robust: the kernel's robust_list.next; under list_lock */
    _Atomic uint32_t meta;   /* sync.c's PT_M_* bits */
    uint32_t unused;         /* sync.c's recursion count of private mutexes */
};
_Static_assert(sizeof(struct xmutex) == sizeof(pthread_mutex_t), "glibc's mutex size");
_Static_assert(offsetof(struct xmutex, meta) == 32, "sync.c's meta word");

/* The kernel's struct robust_list_head. */
static struct {
    struct xmutex *next;                /* the first entry, or the head itself */
    long futex_offset;                  /* word - entry: the entry is &m->next */
    struct xmutex *volatile op_pending; /* &m->next being locked or unlocked */
} head = { NULL, -(long)offsetof(struct xmutex, next), NULL };

static weft__lock list_lock;        /* the list and op_pending */
static _Atomic uint32_t anchor_tid; /* 0: none, 1: being made, else its TID */
static _Atomic uint32_t my_pid;     /* getpid(), 0: not read since the last fork */
static _Atomic uint32_t list_len;   /* robust mutexes in the list; racy hint */

/* The list holds entries by their next field, as the kernel walks it. */
#define ENTRY(m) ((struct xmutex *)(void *)&(m)->next)
#define OF(e)    ((struct xmutex *)(void *)((char *)(e)-offsetof(struct xmutex, next)))
#define HEAD     ((struct xmutex *)(void *)&head)

static void list_reset(void)
{
    head.next = HEAD;
    head.op_pending = NULL;
}

/* In a child of fork: no anchor, another pid, an empty list (the parent's
 * holds stay the parent's), no listed waits, and no holder of either lock. */
static void pshared_child(void)
{
    atomic_store_explicit(&anchor_tid, 0, memory_order_relaxed);
    atomic_store_explicit(&my_pid, 0, memory_order_relaxed);
    atomic_store_explicit(&list_len, 0, memory_order_relaxed);
    list_reset();
    weft__sync_unlock(&list_lock);
    kw_list = NULL; /* the parent's waiters */
    atomic_store_explicit(&kw_len, 0, memory_order_relaxed);
    weft__sync_unlock(&kw_lock);
}

static void robust_exit(void);

__attribute__((constructor(103))) static void pshared_load(void)
{
    list_reset();
    weft__posix_robust_exit = robust_exit;
    weft__posix_kinterrupt = kinterrupt;
    pthread_atfork(NULL, NULL, pshared_child); /* glibc's (libc_nonshared) */
}

static uint32_t pid_id(void)
{
    uint32_t p = atomic_load_explicit(&my_pid, memory_order_relaxed);
    if (WEFT_UNLIKELY(!p)) {
        p = (uint32_t)getpid();
        atomic_store_explicit(&my_pid, p, memory_order_relaxed);
    }
    return p;
}

static _Atomic uint32_t forever;

static void *anchor_main(void *arg)
{
    (void)arg;
    weft__real_syscall(SYS_set_robust_list, &head, sizeof head);
    uint32_t tid = (uint32_t)weft__real_syscall(SYS_gettid);
    /* release: the list head registered; pairs with anchor_id's acquire */
    atomic_store_explicit(&anchor_tid, tid, memory_order_release);
    weft__real_syscall(SYS_futex, &anchor_tid, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    for (;;)
        weft__real_syscall(SYS_futex, &forever, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

/* The TID of this process's anchor, made on first use; 0 if it cannot be
 * made. */
static uint32_t anchor_id(void)
{
    uint32_t t = atomic_load_explicit(&anchor_tid, memory_order_acquire);
    if (WEFT_LIKELY(t > 1))
        return t;
    uint32_t z = 0;
    if (atomic_compare_exchange_strong(&anchor_tid, &z, 1)) {
        pthread_attr_t a;
        pthread_t th;
        sigset_t all;
        sigfillset(&all);
        weft__real_pthread_attr_init(&a);
        weft__real_pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        weft__real_pthread_attr_setstacksize(&a, 64u << 10);
        weft__real_pthread_attr_setsigmask_np(&a, &all);
        int r = weft__real_pthread_create(&th, &a, anchor_main, NULL);
        weft__real_pthread_attr_destroy(&a);
        if (r != 0) {
            atomic_store(&anchor_tid, 0);
            return 0;
        }
    }
    while ((t = atomic_load_explicit(&anchor_tid, memory_order_acquire)) == 1)
        weft__real_syscall(SYS_futex, &anchor_tid, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
    return t;
}

static int shared_of(uint32_t meta)
{
    return (meta & PT_M_PSHARED) != 0;
}

/* The owner id the caller's process writes into m's word. */
static uint32_t id_for(uint32_t meta)
{
    if ((meta & (PT_M_PSHARED | PT_M_ROBUST)) == (PT_M_PSHARED | PT_M_ROBUST))
        return anchor_id();
    return pid_id();
}

static int xwait(struct xmutex *m, uint32_t meta, uint32_t v, clockid_t clk,
                 const struct timespec *abs)
{
    if (shared_of(meta))
        return kwait_plain(&m->word, v, clk, abs); /* a lock is no cancellation point */
    return weft__posix_park(&m->word, v, clk, abs);
}

static void xwake(struct xmutex *m, uint32_t meta)
{
    if (shared_of(meta))
        weft__posix_kwake(&m->word, 1);
    else
        weft__posix_unpark(&m->word, 1);
}

static int held_by_me(struct xmutex *m, uint32_t id)
{
    uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
    return id && (v & FUTEX_TID_MASK) == id &&
           atomic_load_explicit(&m->token, memory_order_relaxed) == weft__sync_owner();
}

/* One attempt to take a free word (v: its value read) for id, with the
 * waiters bit if contended; for a robust mutex, linked into the list
 * atomically with respect to the kernel's walk. 1 if taken. */
static int take(struct xmutex *m, uint32_t meta, uint32_t v, uint32_t id, int contended)
{
    uint32_t nv = id | (v & FUTEX_WAITERS) | (contended ? FUTEX_WAITERS : 0);
    if (!(meta & PT_M_ROBUST))
        /* acquire: the critical section; pairs with xunlock's release */
        return atomic_compare_exchange_strong_explicit(&m->word, &v, nv, memory_order_acquire,
                                                       memory_order_relaxed);
    weft__sync_lock(&list_lock);
    head.op_pending = ENTRY(m);
    atomic_signal_fence(memory_order_seq_cst);
    int ok = atomic_compare_exchange_strong_explicit(&m->word, &v, nv, memory_order_acquire,
                                                     memory_order_relaxed);
    if (ok) {
        m->prev = HEAD;
        m->next = head.next;
        if (head.next != HEAD)
            OF(head.next)->prev = ENTRY(m);
        atomic_signal_fence(memory_order_seq_cst); /* linked, then published */
        head.next = ENTRY(m);
        atomic_fetch_add_explicit(&list_len, 1, memory_order_relaxed);
    }
    atomic_signal_fence(memory_order_seq_cst);
    head.op_pending = NULL;
    weft__sync_unlock(&list_lock);
    return ok;
}

/* Under list_lock: m out of the list. */
static void unlink_entry(struct xmutex *m)
{
    struct xmutex *prev = m->prev, *next = m->next;
    if (prev == HEAD)
        head.next = next;
    else
        OF(prev)->next = next;
    if (next != HEAD)
        OF(next)->prev = prev;
    atomic_fetch_sub_explicit(&list_len, 1, memory_order_relaxed);
}

int weft__posix_xmutex_lock(pthread_mutex_t *mx, int try, clockid_t clk, const struct timespec *abs)
{
    struct xmutex *m = (struct xmutex *)(void *)mx;
    uint32_t meta = atomic_load_explicit(&m->meta, memory_order_acquire);
    if (meta & PT_M_NOTREC)
        return ENOTRECOVERABLE;
    uint32_t id = id_for(meta);
    if (!id)
        return EAGAIN;
    if (held_by_me(m, id)) {
        if ((meta & PT_M_TYPE) == PTHREAD_MUTEX_RECURSIVE) {
            if (m->count == UINT32_MAX)
                return EAGAIN;
            m->count++;
            return 0;
        }
        return try ? EBUSY : EDEADLK;
    }
    int contended = 0;
    uint32_t died;
    for (;;) {
        uint32_t v = atomic_load_explicit(&m->word, memory_order_relaxed);
        if ((v & FUTEX_TID_MASK) == 0) {
            if (!take(m, meta, v, id, contended))
                continue;
            died = v & FUTEX_OWNER_DIED;
            break;
        }
        if (try)
            return EBUSY;
        if (!(v & FUTEX_WAITERS) &&
            !atomic_compare_exchange_strong(&m->word, &v, v | FUTEX_WAITERS))
            continue;
        int e = xwait(m, meta, v | FUTEX_WAITERS, clk, abs);
        if (e == ETIMEDOUT)
            return ETIMEDOUT;
        if (abs && weft__posix_timed_out(clk, abs))
            return ETIMEDOUT;
        contended = 1;
        if (atomic_load_explicit(&m->meta, memory_order_relaxed) & PT_M_NOTREC)
            return ENOTRECOVERABLE;
    }
    atomic_store_explicit(&m->token, weft__sync_owner(), memory_order_relaxed);
    m->count = 0;
    uint32_t now = atomic_load_explicit(&m->meta, memory_order_relaxed);
    if (now & PT_M_NOTREC) {
        weft__posix_xmutex_unlock(mx);
        return ENOTRECOVERABLE;
    }
    if (died) {
        /* the previous owner died: the hold is ours, the state suspect */
        atomic_fetch_or_explicit(&m->meta, PT_M_INCONS, memory_order_relaxed);
        return EOWNERDEAD;
    }
    return 0;
}

/* Gives the word up: the release, then one waiter woken if any. owner_died
 * leaves FUTEX_OWNER_DIED for the next locker. */
static void release(struct xmutex *m, uint32_t meta, int owner_died)
{
    if (meta & PT_M_ROBUST) {
        weft__sync_lock(&list_lock);
        head.op_pending = ENTRY(m);
        atomic_signal_fence(memory_order_seq_cst);
        unlink_entry(m);
    }
    atomic_store_explicit(&m->token, 0, memory_order_relaxed);
    /* release: the critical section; pairs with take's acquire */
    uint32_t v =
        atomic_exchange_explicit(&m->word, owner_died ? FUTEX_OWNER_DIED : 0, memory_order_release);
    if (meta & PT_M_ROBUST) {
        atomic_signal_fence(memory_order_seq_cst);
        head.op_pending = NULL;
        weft__sync_unlock(&list_lock);
    }
    if (v & FUTEX_WAITERS)
        xwake(m, meta);
}

int weft__posix_xmutex_unlock(pthread_mutex_t *mx)
{
    struct xmutex *m = (struct xmutex *)(void *)mx;
    uint32_t meta = atomic_load_explicit(&m->meta, memory_order_acquire);
    if (!held_by_me(m, id_for(meta)))
        return EPERM;
    if (m->count) {
        m->count--;
        return 0;
    }
    if (meta & PT_M_INCONS) {
        /* unlocked without pthread_mutex_consistent: unusable for good */
        atomic_fetch_or_explicit(&m->meta, PT_M_NOTREC, memory_order_relaxed);
        atomic_fetch_and_explicit(&m->meta, ~(uint32_t)PT_M_INCONS, memory_order_relaxed);
        release(m, meta, 0);
        weft__posix_kwake(&m->word, INT_MAX);
        if (!shared_of(meta))
            weft__posix_unpark(&m->word, INT_MAX);
        return 0;
    }
    release(m, meta, 0);
    return 0;
}

/* The caller's whole hold (count: its recursion) released for a condition
 * wait, and taken back after. */
uint32_t weft__posix_xmutex_drop(pthread_mutex_t *mx)
{
    struct xmutex *m = (struct xmutex *)(void *)mx;
    uint32_t c = m->count;
    m->count = 0;
    weft__posix_xmutex_unlock(mx);
    return c;
}

int weft__posix_xmutex_held(pthread_mutex_t *mx)
{
    struct xmutex *m = (struct xmutex *)(void *)mx;
    return held_by_me(m, id_for(atomic_load_explicit(&m->meta, memory_order_relaxed)));
}

void weft__posix_xmutex_setcount(pthread_mutex_t *mx, uint32_t count)
{
    ((struct xmutex *)(void *)mx)->count = count;
}

int weft__posix_xmutex_consistent(pthread_mutex_t *mx)
{
    struct xmutex *m = (struct xmutex *)(void *)mx;
    uint32_t meta = atomic_load_explicit(&m->meta, memory_order_acquire);
    if (!(meta & PT_M_ROBUST) || !(meta & PT_M_INCONS) || !held_by_me(m, id_for(meta)))
        return EINVAL;
    atomic_fetch_and_explicit(&m->meta, ~(uint32_t)PT_M_INCONS, memory_order_relaxed);
    return 0;
}

/* At a thread's end: the robust mutexes it holds are released as
 * owner-died, so that the next locker gets EOWNERDEAD. */
static void robust_exit(void)
{
    if (!atomic_load_explicit(&list_len, memory_order_relaxed))
        return;
    uintptr_t me = weft__sync_owner();
    for (;;) {
        struct xmutex *found = NULL;
        weft__sync_lock(&list_lock);
        for (struct xmutex *e = head.next; e != HEAD; e = OF(e)->next) {
            struct xmutex *m = OF(e);
            if (atomic_load_explicit(&m->token, memory_order_relaxed) == me) {
                found = m;
                break;
            }
        }
        weft__sync_unlock(&list_lock);
        if (!found)
            return;
        found->count = 0;
        release(found, atomic_load_explicit(&found->meta, memory_order_relaxed), 1);
    }
}
