/* thread.c: pthread_create and the life of a user thread made by it, the
 * lazy start of the runtime, attributes, keys, once, cancellation,
 * naming, scheduling parameters and yield. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/base.h"
#include "policy/machine.h"
#include "posix/posix.h"
#include "sched/sched.h"
#include "sched/switch.h"
#include "sync/wait.h"
#include "thread/thread.h"

extern __typeof__(pthread_mutex_lock) weft__real_pthread_mutex_lock;
extern __typeof__(pthread_mutex_unlock) weft__real_pthread_mutex_unlock;
extern __typeof__(pthread_exit) weft__real_pthread_exit;
extern __typeof__(pthread_getattr_np) weft__real_pthread_getattr_np;
extern __typeof__(pthread_attr_getstack) weft__real_pthread_attr_getstack;
extern __typeof__(pthread_attr_destroy) weft__real_pthread_attr_destroy;
extern __typeof__(pthread_setname_np) weft__real_pthread_setname_np;
extern __typeof__(sched_yield) weft__real_sched_yield;
extern char __libc_single_threaded;
extern void __call_tls_dtors(void);

/* ---- the lazy start ------------------------------------------------------- */

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER; /* glibc's (real) */
static _Atomic int started;    /* 1 once the runtime runs; release by the starter */
static struct pt *main_pt;     /* the initial thread's record; immutable once started */
static uint64_t main_cpu_base; /* its CPU time at the start (clock_gettime below) */
static struct pt *forked_self; /* in a child of fork: the caller's record, if it had one */
extern __typeof__(clock_gettime) weft__real_clock_gettime;
static _Atomic long live;    /* user threads made here and not ended */
static size_t default_stack; /* RLIMIT_STACK's soft limit, 8 MiB when unlimited */
static size_t page;

int weft__posix_forked;
uintptr_t weft__posix_pre_token;
struct pt *weft__posix_main;

/* The owner token the initial thread's locks carry until the start, if
 * weft_mutex's word is what sync.c's adopt expects: the owner in the bits
 * above 3 flag bits. */
static uintptr_t pre_start_token(void)
{
    weft_mutex probe = WEFT_MUTEX_INIT;
    uintptr_t me = weft__sync_owner();
    if (weft_mutex_lock(&probe) != 0)
        return 0;
    uint64_t v;
    memcpy(&v, &probe, sizeof v);
    int ok = (me & 7) == 0 && v == me;
    weft_mutex_unlock(&probe);
    memcpy(&v, &probe, sizeof v);
    return ok && v == 0 ? me : 0;
}

/* In a child of fork: the caller is the only kernel thread, and no worker
 * runs. It goes on as a plain kernel thread on its own stack and thread
 * block (weft's objects work from those), and the threads it makes are
 * glibc's: the runtime's copy in the child holds the parent's threads and
 * queues, which must never run here. Registered first at load, so it runs
 * before the program's own child handlers (registration order). */
static void forked_child(void)
{
    if (!atomic_load_explicit(&started, memory_order_relaxed))
        return;
    weft__posix_forked = 1;
    weft__tls_worker = NULL;
    weft__tls_lent = NULL;
    struct pt *p = weft__posix_self_if_any();
    weft__posix_sig_forked(p);
    if (p) {
        p->h = NULL;
        p->user = 0;
    }
    forked_self = p;
    atomic_store_explicit(&live, 0, memory_order_relaxed);
}

__attribute__((constructor(102))) static void posix_thread_load(void)
{
    pthread_atfork(NULL, NULL, forked_child); /* glibc's (libc_nonshared) */
}

static void pt_put(struct pt *p);

int weft__posix_start(void)
{
    /* acquire: pairs with the release below */
    if (WEFT_LIKELY(atomic_load_explicit(&started, memory_order_acquire)))
        return 0;
    weft__real_pthread_mutex_lock(&start_lock);
    int r = 0;
    if (!started) {
        page = (size_t)sysconf(_SC_PAGESIZE);
        struct rlimit rl;
        default_stack = 8u << 20;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur >= 16384)
            default_stack = rl.rlim_cur;
        struct pt *p = weft__posix_self();
        weft__posix_pre_token = pre_start_token();
        if (p)
            weft__posix_sig_start(p); /* before the workers: they inherit its mask */
        weft_config cfg;
        weft_config_default(&cfg);
        if (!getenv("WEFT_STACK_SIZE"))
            cfg.stack_size = default_stack; /* POSIX's default: cached slots of that size */
        struct timespec used;
        if (weft__real_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) == 0)
            main_cpu_base = (uint64_t)used.tv_sec * 1000000000u + (uint64_t)used.tv_nsec;
        r = p ? weft_init(&cfg) : ENOMEM;
        if (r == 0) {
            struct weft_thread *t = weft_self();
            t->fs = p->tcb; /* the initial thread keeps its own block */
            /* and the main kernel thread gets a block of its own for the
             * scheduler: the initial thread may run on another kernel
             * thread while the main one runs another user thread's
             * blocking call, and the two in one block would overwrite each
             * other's kernel-thread locals (the home, the worker:
             * sched/switch.h) */
            struct pt *had;
            void *own = weft__posix_tcb_get(&had);
            pt_put(had);
            if (own)
                weft__tls_kfs = own;
            p->h = t;
            main_pt = p;
            weft__posix_main = p;
            __libc_single_threaded = 0;
            /* release: the runtime and main_pt; pairs with the acquire above */
            atomic_store_explicit(&started, 1, memory_order_release);
        }
    }
    weft__real_pthread_mutex_unlock(&start_lock);
    return r;
}

/* ---- records ------------------------------------------------------------- */

static weft__lock pt_lock;
static struct pt *pt_free; /* under pt_lock */

/* memset(d, 0, n) for a small constant n, as 64-byte pieces: GCC makes
 * those a few vector stores, where one memset of more than 128 bytes
 * becomes rep stos, whose start-up alone costs more than the stores. */
static inline void zero_small(void *d, size_t n)
{
    char *c = d;
    for (; n > 64; c += 64, n -= 64)
        memset(c, 0, 64);
    memset(c, 0, n);
}

/* A record for a new thread: p, the one its recycled block had, or NULL
 * for one from the free list or calloc; NULL: ENOMEM. */
static struct pt *pt_get(struct pt *p)
{
    if (!p) {
        weft__lock_acquire(&pt_lock);
        p = pt_free;
        if (p)
            pt_free = p->next_free;
        weft__lock_release(&pt_lock);
    }
    if (!p) {
        if ((p = calloc(1, sizeof *p)))
            weft__posix_sig_track(p);
        return p;
    }
    /* key blocks stay with the record, emptied: most threads use the
     * same few keys (the memsets below keep keys and keymask) */
    for (uint32_t m = p->keymask; m; m &= m - 1)
        memset(p->keys[__builtin_ctz(m)], 0, PT_KEY_BLOCK * sizeof(struct pt_keyval));
    memset(p, 0, offsetof(struct pt, keys));
    zero_small(&p->keymask + 1,
               offsetof(struct pt, sigcode) - offsetof(struct pt, keymask) - sizeof p->keymask);
    return p;
}

/* Back to the free list (NULL: none); a record whose block is on the
 * free list stays there with it instead (weft__posix_tcb_put). */
static void pt_put(struct pt *p)
{
    if (!p)
        return;
    weft__lock_acquire(&pt_lock);
    p->next_free = pt_free;
    pt_free = p;
    weft__lock_release(&pt_lock);
}

/* The record of th, a thread made here (or the initial thread); NULL:
 * none. */
static struct pt *user_pt(pthread_t th)
{
    struct pt *p = weft__posix_pt_of((void *)th);
    return p && p->h ? p : NULL;
}

/* ---- keys ---------------------------------------------------------------- */

static struct {
    _Atomic uint64_t seq; /* odd: in use */
    void (*_Atomic dtor)(void *);
} keys[PT_KEYS_MAX];

PT_API int pthread_key_create(pthread_key_t *key, void (*dtor)(void *))
{
    for (unsigned i = 0; i < PT_KEYS_MAX; i++) {
        uint64_t s = atomic_load_explicit(&keys[i].seq, memory_order_relaxed);
        if (s & 1)
            continue;
        atomic_store_explicit(&keys[i].dtor, dtor, memory_order_relaxed);
        /* acq_rel: publishes the destructor with the key */
        if (atomic_compare_exchange_strong(&keys[i].seq, &s, s + 1)) {
            *key = i;
            return 0;
        }
    }
    return EAGAIN;
}

PT_API int pthread_key_delete(pthread_key_t key)
{
    if (key >= PT_KEYS_MAX)
        return EINVAL;
    uint64_t s = atomic_load(&keys[key].seq);
    if (!(s & 1) || !atomic_compare_exchange_strong(&keys[key].seq, &s, s + 1))
        return EINVAL;
    return 0;
}

PT_API void *pthread_getspecific(pthread_key_t key)
{
    struct pt *p = weft__posix_self_if_any();
    if (!p || key >= PT_KEYS_MAX)
        return NULL;
    struct pt_keyval *b = p->keys[key / PT_KEY_BLOCK];
    if (!b)
        return NULL;
    struct pt_keyval *kv = &b[key % PT_KEY_BLOCK];
    return kv->seq == atomic_load_explicit(&keys[key].seq, memory_order_relaxed) ? kv->value : NULL;
}

PT_API int pthread_setspecific(pthread_key_t key, const void *value)
{
    if (key >= PT_KEYS_MAX)
        return EINVAL;
    uint64_t s = atomic_load_explicit(&keys[key].seq, memory_order_relaxed);
    if (!(s & 1))
        return EINVAL;
    struct pt *p = weft__posix_self();
    if (!p)
        return ENOMEM;
    struct pt_keyval **b = &p->keys[key / PT_KEY_BLOCK];
    if (!*b) {
        if (!(*b = calloc(PT_KEY_BLOCK, sizeof **b)))
            return ENOMEM;
        p->keymask |= 1u << (key / PT_KEY_BLOCK);
    }
    (*b)[key % PT_KEY_BLOCK] = (struct pt_keyval){ s, (void *)value };
    return 0;
}

/* tcb.c runs the key destructors of a foreign kernel thread's record as
 * it ends: through this hook, set before main (tcb.c is below thread.c). */
__attribute__((constructor)) static void set_end_hook(void)
{
    weft__posix_on_end = weft__posix_thread_end;
}

void (*weft__posix_robust_exit)(void);

void weft__posix_thread_end(struct pt *p)
{
    if (weft__posix_robust_exit)
        weft__posix_robust_exit(); /* its robust mutexes: owner died (pshared.c) */
    for (int round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
        int any = 0;
        for (uint32_t mask = p->keymask; mask; mask &= mask - 1) {
            unsigned bi = (unsigned)__builtin_ctz(mask);
            struct pt_keyval *b = p->keys[bi];
            for (unsigned j = 0; j < PT_KEY_BLOCK; j++) {
                unsigned k = bi * PT_KEY_BLOCK + j;
                uint64_t s = atomic_load(&keys[k].seq);
                void *v = b[j].value;
                if (!v || b[j].seq != s || !(s & 1))
                    continue;
                b[j].value = NULL;
                void (*d)(void *) = atomic_load(&keys[k].dtor);
                if (d) {
                    d(v);
                    any = 1;
                }
            }
        }
        if (!any)
            break;
    }
}

/* ---- attributes ---------------------------------------------------------- */

/* pthread_attr_t's storage (56 bytes), glibc's size. */
struct pattr {
    size_t stacksize; /* 0: the default */
    size_t guardsize;
    void *stackaddr; /* the top of the caller's stack, NULL: weft's; glibc's convention,
                        whose pthread_attr_setstackaddr names the top */
    int detach;
    int scope;
    int inherit;
    int policy;
    int prio;
    uint32_t set; /* bits: which fields were set */
};
_Static_assert(sizeof(struct pattr) <= sizeof(pthread_attr_t), "pthread_attr_t holds ours");
#define PA(a)  ((struct pattr *)(void *)(a))
#define CPA(a) ((const struct pattr *)(const void *)(a))

static struct pattr default_attr; /* pthread_setattr_default_np; under start_lock */

PT_API int pthread_attr_init(pthread_attr_t *a)
{
    memset(a, 0, sizeof *a);
    PA(a)->guardsize = page ? page : (size_t)sysconf(_SC_PAGESIZE);
    PA(a)->inherit = PTHREAD_INHERIT_SCHED;
    return 0;
}
PT_API int pthread_attr_destroy(pthread_attr_t *a)
{
    (void)a;
    return 0;
}
PT_API int pthread_attr_setdetachstate(pthread_attr_t *a, int d)
{
    return weft__posix_set_int(&PA(a)->detach, d,
                               d == PTHREAD_CREATE_JOINABLE || d == PTHREAD_CREATE_DETACHED);
}
PT_API int pthread_attr_getdetachstate(const pthread_attr_t *a, int *d)
{
    return weft__posix_get_int(d, CPA(a)->detach);
}
PT_API int pthread_attr_setstacksize(pthread_attr_t *a, size_t s)
{
    if (s < (size_t)PTHREAD_STACK_MIN)
        return EINVAL;
    PA(a)->stacksize = s;
    return 0;
}
PT_API int pthread_attr_getstacksize(const pthread_attr_t *a, size_t *s)
{
    *s = CPA(a)->stacksize ? CPA(a)->stacksize : (default_stack ? default_stack : 8u << 20);
    return 0;
}
PT_API int pthread_attr_setguardsize(pthread_attr_t *a, size_t g)
{
    PA(a)->guardsize = g;
    return 0;
}
PT_API int pthread_attr_getguardsize(const pthread_attr_t *a, size_t *g)
{
    *g = CPA(a)->guardsize;
    return 0;
}
PT_API int pthread_attr_setstack(pthread_attr_t *a, void *addr, size_t s)
{
    if (s < (size_t)PTHREAD_STACK_MIN)
        return EINVAL;
    PA(a)->stackaddr = (char *)addr + s;
    PA(a)->stacksize = s;
    return 0;
}
PT_API int pthread_attr_getstack(const pthread_attr_t *a, void **addr, size_t *s)
{
    pthread_attr_getstacksize(a, s);
    *addr = CPA(a)->stackaddr ? (char *)CPA(a)->stackaddr - *s : NULL;
    return 0;
}
PT_API int pthread_attr_setstackaddr(pthread_attr_t *a, void *addr)
{
    PA(a)->stackaddr = addr;
    return 0;
}
PT_API int pthread_attr_getstackaddr(const pthread_attr_t *a, void **addr)
{
    *addr = CPA(a)->stackaddr;
    return 0;
}
PT_API int pthread_attr_setscope(pthread_attr_t *a, int s)
{
    /* both give a user thread (SPEC) */
    return weft__posix_set_int(&PA(a)->scope, s,
                               s == PTHREAD_SCOPE_SYSTEM || s == PTHREAD_SCOPE_PROCESS);
}
PT_API int pthread_attr_getscope(const pthread_attr_t *a, int *s)
{
    return weft__posix_get_int(s, CPA(a)->scope);
}
PT_API int pthread_attr_setinheritsched(pthread_attr_t *a, int i)
{
    return weft__posix_set_int(&PA(a)->inherit, i,
                               i == PTHREAD_INHERIT_SCHED || i == PTHREAD_EXPLICIT_SCHED);
}
PT_API int pthread_attr_getinheritsched(const pthread_attr_t *a, int *i)
{
    return weft__posix_get_int(i, CPA(a)->inherit);
}
PT_API int pthread_attr_setschedpolicy(pthread_attr_t *a, int p)
{
    return weft__posix_set_int(&PA(a)->policy, p,
                               p == SCHED_OTHER || p == SCHED_FIFO || p == SCHED_RR ||
                                   p == SCHED_BATCH || p == SCHED_IDLE);
}
PT_API int pthread_attr_getschedpolicy(const pthread_attr_t *a, int *p)
{
    return weft__posix_get_int(p, CPA(a)->policy);
}
PT_API int pthread_attr_setschedparam(pthread_attr_t *a, const struct sched_param *sp)
{
    PA(a)->prio = sp->sched_priority;
    return 0;
}
PT_API int pthread_attr_getschedparam(const pthread_attr_t *a, struct sched_param *sp)
{
    sp->sched_priority = CPA(a)->prio;
    return 0;
}
PT_API int pthread_attr_setaffinity_np(pthread_attr_t *a, size_t n, const cpu_set_t *set)
{
    (void)a, (void)n, (void)set; /* recorded nowhere: user threads migrate (docs/posix.md) */
    return 0;
}
PT_API int pthread_attr_getaffinity_np(const pthread_attr_t *a, size_t n, cpu_set_t *set)
{
    (void)a;
    memset(set, 0xff, n);
    return 0;
}
PT_API int pthread_attr_setsigmask_np(pthread_attr_t *a, const sigset_t *m)
{
    (void)a, (void)m;
    return 0;
}
PT_API int pthread_attr_getsigmask_np(const pthread_attr_t *a, sigset_t *m)
{
    (void)a;
    sigemptyset(m);
    return 2; /* PTHREAD_ATTR_NO_SIGMASK_NP */
}
PT_API int pthread_getattr_default_np(pthread_attr_t *a)
{
    pthread_attr_init(a);
    weft__real_pthread_mutex_lock(&start_lock);
    if (default_attr.stacksize)
        PA(a)->stacksize = default_attr.stacksize;
    weft__real_pthread_mutex_unlock(&start_lock);
    return 0;
}
PT_API int pthread_setattr_default_np(const pthread_attr_t *a)
{
    weft__real_pthread_mutex_lock(&start_lock);
    default_attr.stacksize = CPA(a)->stacksize;
    weft__real_pthread_mutex_unlock(&start_lock);
    return 0;
}

/* ---- create, exit, join, detach ------------------------------------------- */

static void unwind_next(struct pt *p);
static void drop_cpu_clock(struct pt *p);

/* Leaves the caller's block for its kernel thread's, for the rest of
 * weft's exit (t: the caller). */
static void leave_block(struct weft_thread *t)
{
    t->fs = NULL; /* libweft's code is never preempted, so no switch comes between */
    weft__fs_enter(weft__tls_worker, NULL);
}

/* The end of a user thread made here, on its way out whether it returned
 * or is unwound by pthread_exit (the cleanup attribute runs in both: this
 * file is built with -fexceptions): thread_local destructors, then key
 * destructors. A joinable thread then ends on its own block, which goes
 * back once weft_join has seen weft's exit done with it (pthread_join, or
 * pthread_detach of an ended thread): no switch of %fs to the kernel
 * thread's block and back. A detached thread leaves its block for its
 * kernel thread's and gives it back now; so does a bound one, which ends
 * in glibc's pthread_exit on its kernel thread. */
static void thread_end(struct pt **pp)
{
    struct pt *p = *pp;
    /* Signals it has not run yet: routed to it (it computed in libc or the
     * runtime, where they wait for its own code), or sent to the process
     * while it did not block them and not routed yet (the router, a kernel
     * thread, comes later): run them while it still lives, as under NPTL,
     * whose kernel picks the thread when the signal is sent; else they are
     * lost with it, or wait for a thread that may never come. exiting
     * first, seq_cst: the router gives it no more, or sees it ending and
     * takes back what it gave after our run (signal.c: route). */
    __atomic_store_n(&p->exiting, 1, __ATOMIC_SEQ_CST);
    _Atomic uint64_t *proc = weft__posix_sig_ops.proc_pending;
    if (atomic_load(&p->sigpending) || (proc && atomic_load(proc)))
        weft__posix_deliver_pending(p);
    __call_tls_dtors();
    weft__posix_thread_end(p);
    drop_cpu_clock(p);
    /* A thread handed off in a system call (sched/machine.c: rescue) runs
     * on a kernel thread without a worker, with the rescue's record in its
     * block: it rejoins a worker while it still has that block. */
    if (!((struct weft_thread *)p->h)->bound)
        p->ktid = 0; /* bound by its name (bound.c): the settle below ends that */
    weft__rescue_settle();
    struct weft_thread *t = weft_self();
    int left = t->bound || atomic_load_explicit(&p->state, memory_order_relaxed) == PT_DETACHED;
    if (left)
        leave_block(t);
    atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
    /* seq_cst: the end is done with p; the store pairs with the acquire
     * loads of joins and of pthread_detach, and with the joiners' count
     * (wait_done): either we see a joiner counted or it sees done */
    atomic_store(&p->done, 1);
    if (atomic_load(&p->joiners))
        weft__posix_unpark(&p->done, INT_MAX);
    int s = PT_RUNNING;
    if (!atomic_compare_exchange_strong(&p->state, &s, PT_EXITED)) {
        /* detached: nobody joins; the block and record go back now */
        if (!left)
            leave_block(t);
        pt_put(weft__posix_tcb_put(p->tcb));
    }
}

/* The first frame of a user thread made here. WEFT_ENTRY (sched.h): the
 * rescue's stack scan (sched/preempt.c) stops at the return address into
 * it, as at weft's own first frames, so a thread blocked in a system call
 * of the program's own is rescued; frames of this file above it (the
 * thread's end) still refuse. */
extern void __ctype_init(void); /* glibc's: a thread's ctype table pointers (TLS) */

static WEFT_ENTRY void *start(void *arg)
{
    struct pt *p = arg;
    p->h = weft_self();
    if (WEFT_UNLIKELY(((struct weft_thread *)p->h)->bound))
        weft__posix_bound_enter(p); /* WEFT_POSIX_BOUND (bound.c) */
    else if (WEFT_UNLIKELY(atomic_load_explicit(&p->bind_want, memory_order_relaxed)))
        weft__posix_bind_self(p); /* named into it before it ran; EAGAIN: stays a user thread */
    __ctype_init();               /* as glibc's start_thread: tolower() and isalpha() read them */
    struct pt *end __attribute__((cleanup(thread_end))) = p;
    p->result = p->fn(p->arg);
    return p->result;
}

/* A glibc thread with our attributes (in a child of fork): the stack (the
 * caller's, or its size), the guard and the detach state. */
static int glibc_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    extern __typeof__(pthread_create) weft__real_pthread_create;
    extern __typeof__(pthread_attr_init) weft__real_pthread_attr_init;
    extern __typeof__(pthread_attr_setstack) weft__real_pthread_attr_setstack;
    extern __typeof__(pthread_attr_setstacksize) weft__real_pthread_attr_setstacksize;
    extern __typeof__(pthread_attr_setguardsize) weft__real_pthread_attr_setguardsize;
    extern __typeof__(pthread_attr_setdetachstate) weft__real_pthread_attr_setdetachstate;
    pthread_attr_t ra;
    weft__real_pthread_attr_init(&ra);
    int r = 0;
    if (attr && CPA(attr)->stackaddr)
        r = weft__real_pthread_attr_setstack(&ra,
                                             (char *)CPA(attr)->stackaddr - CPA(attr)->stacksize,
                                             CPA(attr)->stacksize);
    else if (attr && CPA(attr)->stacksize)
        r = weft__real_pthread_attr_setstacksize(&ra, CPA(attr)->stacksize);
    if (attr && !r)
        r = weft__real_pthread_attr_setguardsize(&ra, CPA(attr)->guardsize);
    if (r) {
        weft__real_pthread_attr_destroy(&ra);
        return r;
    }
    if (attr && CPA(attr)->detach == PTHREAD_CREATE_DETACHED)
        weft__real_pthread_attr_setdetachstate(&ra, PTHREAD_CREATE_DETACHED);
    r = weft__real_pthread_create(th, &ra, fn, arg);
    weft__real_pthread_attr_destroy(&ra);
    return r;
}

PT_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (WEFT_UNLIKELY(weft__posix_forked))
        return glibc_create(th, attr, fn, arg);
    if (weft__posix_start() != 0)
        return EAGAIN;
    struct pattr a = attr ? *CPA(attr) : default_attr;
    struct pt *p;
    void *tcb = weft__posix_tcb_get(&p);
    if (!tcb)
        return EAGAIN;
    if (!(p = pt_get(p))) {
        pt_put(weft__posix_tcb_put(tcb));
        return EAGAIN;
    }
    p->tcb = tcb;
    p->user = 1;
    p->fn = fn;
    p->arg = arg;
    p->stack_size = a.stacksize ? a.stacksize : default_stack;
    p->guard_size = a.guardsize;
    if (a.stackaddr) { /* the caller's stack, below the top it names */
        p->ustack = (char *)a.stackaddr - p->stack_size;
        p->guard_size = 0; /* POSIX: ignored with a user stack */
    }
    p->sched_policy = a.policy;
    p->sched_param.sched_priority = a.prio;
    if (a.inherit == PTHREAD_INHERIT_SCHED) {
        /* the creator's (recorded) policy and priority, not the attribute's */
        struct pt *me = weft__posix_self_if_any();
        p->sched_policy = me ? me->sched_policy : SCHED_OTHER;
        p->sched_param = me ? me->sched_param : (struct sched_param){ 0 };
    }
    /* relaxed: p is not shared yet; the spawn publishes it */
    atomic_store_explicit(&p->state, a.detach == PTHREAD_CREATE_DETACHED ? PT_DETACHED : PT_RUNNING,
                          memory_order_relaxed);
    weft__posix_sig_inherit(p);
    weft__posix_set_pt(tcb, p);
    weft_attr wa = WEFT_ATTR_INIT;
    wa.stack_size = p->stack_size;
    wa.detached = a.detach == PTHREAD_CREATE_DETACHED;
    wa.bound = !p->ustack && weft__posix_bound_all(); /* a bound one runs on its kernel thread's */
    atomic_fetch_add_explicit(&live, 1, memory_order_relaxed);
    weft_thread *h;
    *th = (pthread_t)tcb; /* before the child runs: it may read it */
    weft__tls_spawn_fs = tcb;
    /* A joinable, unbound thread of the runtime's default stack size
     * (default_stack unless WEFT_STACK_SIZE says otherwise: posix_start)
     * takes weft_spawn's path for no attribute. */
    int plain = !wa.detached && !wa.bound && p->stack_size == weft__rt.stack_size;
    int r = WEFT_UNLIKELY(p->ustack) /* the size is the region's (weft__spawn_on) */
                ? weft__spawn_on(&h, start, p, &wa, p->ustack, p->stack_size)
                : weft_spawn(&h, start, p, plain ? NULL : &wa);
    weft__tls_spawn_fs = NULL;
    /* The child writes p->h too, first thing; a joinable record lives
     * until its join, a detached one may be gone by now. */
    if (r == 0 && !wa.detached)
        p->h = h;
    if (r != 0) {
        atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
        pt_put(weft__posix_tcb_put(tcb));
        return r == ENOMEM ? EAGAIN : r;
    }
    return 0;
}

PT_API void pthread_exit(void *result)
{
    struct pt *p = weft__posix_self();
    if (!p || (!p->h && p != forked_self)) {
        weft__real_pthread_exit(result); /* a kernel thread not made here */
    }
    p->result = result;
    /* no asynchronous cancellation from here (async.c): the handler that
     * reads it runs on this thread, after the store */
    p->exiting = 1;
    atomic_signal_fence(memory_order_seq_cst);
    unwind_next(p);
    __builtin_unreachable();
}

static void unwind_next(struct pt *p)
{
    /* C cleanup handlers first (pthread_cleanup_push's buffers), each
     * reached by a jump into the frame that pushed it */
    if (p->cleanup) {
        void **buf = p->cleanup;
        siglongjmp((struct __jmp_buf_tag *)buf, 1);
    }
    if (p == main_pt || p == forked_self) {
        /* The initial thread (or, in a child of fork, the thread that
         * forked, on our stack and block): the process lives on until the
         * last thread made here ends, then exits with 0, as glibc does. */
        __call_tls_dtors();
        weft__posix_thread_end(p);
        while (atomic_load_explicit(&live, memory_order_relaxed) > 0)
            weft__posix_sleep_ns(1000000);
        exit(0);
    }
    if (((struct weft_thread *)p->h)->bound) {
        /* glibc unwinds a bound thread: on its kernel thread's block */
        __call_tls_dtors();
        weft__posix_bound_leave();
    }
    weft_exit(p->result);
}

/* 1 if the caller is a thread made here or the initial thread: other
 * kernel threads (made by glibc internals, or in a child of fork) keep
 * glibc's own cancellation state and cleanup buffers. */
static int mine(void)
{
    struct pt *p = weft__posix_self_if_any();
    return p && p->h;
}

/* pthread_cleanup_push/pop in C (glibc's pthread.h): the buffer is glibc's
 * __pthread_unwind_buf_t, a jmp_buf and four spare words; the first spare
 * word links to the next outer buffer. */
struct unwind_buf {
    struct {
        long jb[8];
        int mask_was_saved;
    } jmp[1];
    void *pad[4];
};

PT_API void __pthread_register_cancel(void *b)
{
    if (!mine()) {
        extern void weft__real___pthread_register_cancel(void *);
        weft__real___pthread_register_cancel(b);
        return;
    }
    struct unwind_buf *buf = b;
    struct pt *p = weft__posix_self();
    buf->pad[0] = p->cleanup;
    p->cleanup = buf;
}
PT_API void __pthread_unregister_cancel(void *b)
{
    if (!mine()) {
        extern void weft__real___pthread_unregister_cancel(void *);
        weft__real___pthread_unregister_cancel(b);
        return;
    }
    struct unwind_buf *buf = b;
    struct pt *p = weft__posix_self();
    p->cleanup = buf->pad[0];
}
PT_API void __pthread_register_cancel_defer(void *b)
{
    __pthread_register_cancel(b);
}
PT_API void __pthread_unregister_cancel_restore(void *b)
{
    __pthread_unregister_cancel(b);
}
PT_API __attribute__((noreturn)) void __pthread_unwind_next(void *b)
{
    if (!mine()) {
        extern __attribute__((noreturn)) void weft__real___pthread_unwind_next(void *);
        weft__real___pthread_unwind_next(b);
    }
    struct unwind_buf *buf = b;
    struct pt *p = weft__posix_self();
    p->cleanup = buf->pad[0];
    unwind_next(p);
    __builtin_unreachable();
}

/* The record of th if it was made here, alive or not: its block keeps
 * pointing at it until both are reused. NULL: glibc's thread. */
static struct pt *made_pt(pthread_t th)
{
    struct pt *p = weft__posix_pt_of((void *)th);
    return p && p->user ? p : NULL;
}

/* Waits until p's end is done with it (0), or until abs on clk
 * (ETIMEDOUT; NULL: no deadline), on park.c, where pthread_cancel breaks
 * the wait off: a cancelled joiner leaves before its weft_join (which
 * nothing breaks off), and p stays joinable, as POSIX wants. */
static WEFT_NOINLINE int wait_done(struct pt *p, clockid_t clk, const struct timespec *abs)
{
    /* seq_cst, with thread_end's store of done and its load of joiners:
     * either the end sees us counted or we see done */
    atomic_fetch_add(&p->joiners, 1);
    int r = 0;
    while (!atomic_load(&p->done)) {
        if (abs && weft__posix_timed_out(clk, abs)) {
            r = ETIMEDOUT;
            break;
        }
        if (weft__posix_park(&p->done, 0, clk, abs) == EINTR) {
            atomic_fetch_sub(&p->joiners, 1);
            weft__posix_testcancel(); /* a cancellation point */
            atomic_fetch_add(&p->joiners, 1);
        }
    }
    atomic_fetch_sub(&p->joiners, 1);
    return r;
}

PT_API int pthread_join(pthread_t th, void **res)
{
    struct pt *p = made_pt(th);
    if (!p) {
        extern __typeof__(pthread_join) weft__real_pthread_join;
        return weft__real_pthread_join(th, res); /* glibc's own thread */
    }
    struct pt *me = weft__posix_self_if_any();
    if (p == me)
        return EDEADLK;
    if (atomic_load(&p->state) == PT_DETACHED)
        return EINVAL;
    if (!p->h)
        return ESRCH; /* joined already */
    weft__posix_testcancel();
    /* acquire: pairs with thread_end's store of done */
    if (!atomic_load_explicit(&p->done, memory_order_acquire))
        wait_done(p, CLOCK_MONOTONIC, NULL);
    void *r;
    int e = weft_join(p->h, &r);
    if (e != 0)
        return e == EDEADLK ? EDEADLK : (e == EINVAL ? EINVAL : ESRCH);
    if (res)
        *res = p->exiting && r == PTHREAD_CANCELED ? PTHREAD_CANCELED : r;
    p->h = NULL; /* a second join finds ESRCH */
    pt_put(weft__posix_tcb_put(p->tcb));
    return 0;
}

PT_API int pthread_clockjoin_np(pthread_t th, void **res, clockid_t clk, const struct timespec *abs)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user)
        return ESRCH;
    if (abs && (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000))
        return EINVAL;
    int r = wait_done(p, clk, abs);
    return r ? r : pthread_join(th, res);
}
PT_API int pthread_timedjoin_np(pthread_t th, void **res, const struct timespec *abs)
{
    return pthread_clockjoin_np(th, res, CLOCK_REALTIME, abs);
}
PT_API int pthread_tryjoin_np(pthread_t th, void **res)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user)
        return ESRCH;
    if (!atomic_load_explicit(&p->done, memory_order_acquire))
        return EBUSY;
    return pthread_join(th, res);
}

PT_API int pthread_detach(pthread_t th)
{
    struct pt *p = made_pt(th);
    if (!p) {
        extern __typeof__(pthread_detach) weft__real_pthread_detach;
        return weft__real_pthread_detach(th); /* glibc's own thread */
    }
    if (atomic_load(&p->state) == PT_DETACHED)
        return EINVAL;
    if (!p->h)
        return ESRCH; /* joined already */
    int s = PT_RUNNING;
    if (atomic_compare_exchange_strong(&p->state, &s, PT_DETACHED)) {
        weft_detach(p->h);
        return 0;
    }
    if (s == PT_DETACHED)
        return EINVAL;
    /* it ended and nobody joined it: its resources go now, once weft's
     * exit is done with its block (thread_end: a joinable thread ends on
     * it), which weft_join waits for */
    weft_join(p->h, NULL);
    p->h = NULL;
    pt_put(weft__posix_tcb_put(p->tcb));
    return 0;
}

/* pthread_self and pthread_equal stay glibc's: the block is the identity. */

/* ---- once ---------------------------------------------------------------- */

enum { ONCE_INIT = 0, ONCE_RUNNING = 1, ONCE_WAITERS = 2, ONCE_DONE = 4 };

static void once_cancelled(_Atomic uint32_t **w)
{
    /* the routine was unwound (cancelled): the next caller runs it */
    if (*w && atomic_exchange(*w, ONCE_INIT) & ONCE_WAITERS)
        weft__posix_unpark(*w, INT_MAX);
}

PT_API int pthread_once(pthread_once_t *once, void (*init)(void))
{
    _Atomic uint32_t *w = (_Atomic uint32_t *)once;
    for (;;) {
        /* acquire: pairs with the release store of DONE */
        uint32_t v = atomic_load_explicit(w, memory_order_acquire);
        if (v == ONCE_DONE)
            return 0;
        if (v == ONCE_INIT) {
            if (!atomic_compare_exchange_strong(w, &v, ONCE_RUNNING))
                continue;
            {
                _Atomic uint32_t *guard __attribute__((cleanup(once_cancelled))) = w;
                init();
                guard = NULL;
                (void)guard;
            }
            if (atomic_exchange_explicit(w, ONCE_DONE, memory_order_release) & ONCE_WAITERS)
                weft__posix_unpark(w, INT_MAX);
            return 0;
        }
        if (!(v & ONCE_WAITERS) && !atomic_compare_exchange_strong(w, &v, v | ONCE_WAITERS))
            continue;
        weft__posix_park(w, v | ONCE_WAITERS, CLOCK_MONOTONIC, NULL);
    }
}
PT_API int __pthread_once(pthread_once_t *once, void (*init)(void))
{
    return pthread_once(once, init);
}

/* ---- cancellation (deferred; asynchronous in async.c) --------------------- */

/* Named into WEFT_POSIX_BOUND by another thread after it started: p binds
 * itself at its next cancellation point (bound.c), or at a later one if it
 * runs on no worker now (inside a hand-off). */
static WEFT_NOINLINE void bind_wanted(struct pt *p)
{
    if (!p->h || !weft__tls_worker)
        return;
    atomic_store_explicit(&p->bind_want, 0, memory_order_relaxed);
    weft__posix_bind_self(p); /* EAGAIN: stays a user thread */
}

void weft__posix_testcancel(void)
{
    weft__posix_deliver();
    struct pt *p = weft__posix_self_if_any();
    if (p && WEFT_UNLIKELY(atomic_load_explicit(&p->bind_want, memory_order_relaxed)))
        bind_wanted(p);
    if (p && weft__posix_cancel_acts(p))
        pthread_exit(PTHREAD_CANCELED);
}
PT_API void pthread_testcancel(void)
{
    if (!mine()) {
        extern __typeof__(pthread_testcancel) weft__real_pthread_testcancel;
        weft__real_pthread_testcancel();
        return;
    }
    weft__posix_testcancel();
}
PT_API int pthread_cancel(pthread_t th)
{
    struct pt *p = user_pt(th);
    if (!p) {
        extern __typeof__(pthread_cancel) weft__real_pthread_cancel;
        return weft__real_pthread_cancel(th); /* a thread glibc made */
    }
    /* seq_cst, as the type's store and load: a target that turns
     * asynchronous cancellation on sees the request, or we see its type */
    atomic_store(&p->cancel, 1);
    int async = __atomic_load_n(&p->cancel_type, __ATOMIC_SEQ_CST) == PTHREAD_CANCEL_ASYNCHRONOUS;
    if (p == weft__posix_self_if_any()) {
        if (async)
            weft__posix_testcancel();
    } else if (p->cancel_state == PTHREAD_CANCEL_ENABLE) {
        weft__posix_interrupt(p); /* a park.c wait ends: condvars, sem_wait */
        if (async)
            weft__posix_async_kick(p); /* preempted where it computes */
    }
    return 0;
}
/* The two cancellation setters on a user thread: EINVAL unless ok, else the
 * calling thread's cancel_type (type) or cancel_state (!type) becomes v. */
static int set_cancel_field(int type, int v, int *old, int ok)
{
    if (!ok)
        return EINVAL;
    struct pt *p = weft__posix_self();
    if (!p)
        return ENOMEM;
    int *field = type ? &p->cancel_type : &p->cancel_state;
    if (old)
        *old = *field;
    __atomic_store_n(field, v, __ATOMIC_SEQ_CST); /* pairs with pthread_cancel's */
    /* a pending request acts at once once both allow it, as in glibc */
    if (p->cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS)
        weft__posix_testcancel();
    return 0;
}
PT_API int pthread_setcancelstate(int state, int *old)
{
    if (!mine()) {
        extern __typeof__(pthread_setcancelstate) weft__real_pthread_setcancelstate;
        return weft__real_pthread_setcancelstate(state, old);
    }
    return set_cancel_field(0, state, old,
                            state == PTHREAD_CANCEL_ENABLE || state == PTHREAD_CANCEL_DISABLE);
}
PT_API int pthread_setcanceltype(int type, int *old)
{
    if (!mine()) {
        extern __typeof__(pthread_setcanceltype) weft__real_pthread_setcanceltype;
        return weft__real_pthread_setcanceltype(type, old);
    }
    return set_cancel_field(1, type, old,
                            type == PTHREAD_CANCEL_DEFERRED || type == PTHREAD_CANCEL_ASYNCHRONOUS);
}

/* ---- yield, names, scheduling, signals ------------------------------------ */

PT_API int sched_yield(void)
{
    /* a user thread on a worker: weft_self's first case, inline */
    struct weft__worker *w = weft__tls_worker;
    if (WEFT_LIKELY(w && w->current) || weft_self()) {
        weft_yield();
        weft__posix_deliver();
        struct pt *p = weft__posix_pt_tls; /* relaxed: a later yield sees it */
        if (WEFT_UNLIKELY(p && atomic_load_explicit(&p->cancel, memory_order_relaxed)))
            weft__posix_async_point(p);
        return 0;
    }
    return weft__real_sched_yield();
}
/* pthread.h redirects pthread_yield to sched_yield; the name is defined
 * for programs built against older headers (sysbench). */
PT_API int posix_pthread_yield(void) __asm__("pthread_yield");
PT_API int posix_pthread_yield(void)
{
    return sched_yield();
}

PT_API int pthread_setname_np(pthread_t th, const char *name)
{
    if (strlen(name) >= 16)
        return ERANGE;
    struct pt *p = user_pt(th);
    if (!p || !p->user)
        return weft__real_pthread_setname_np(th, name);
    strcpy(p->name, name);
    ((struct weft_thread *)p->h)->name = p->name;
    if (WEFT_UNLIKELY(weft__posix_bound_named(name)) && !((struct weft_thread *)p->h)->bound) {
        /* WEFT_POSIX_BOUND names it (bound.c): the caller binds itself
         * now; another thread at its start or its next cancellation point
         * (relaxed: a flag it alone acts on, and rereads there) */
        if (p == weft__posix_self_if_any())
            return weft__posix_bind_self(p);
        atomic_store_explicit(&p->bind_want, 1, memory_order_relaxed);
    }
    return 0;
}
PT_API int pthread_getname_np(pthread_t th, char *buf, size_t len)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user) {
        extern __typeof__(pthread_getname_np) weft__real_pthread_getname_np;
        return weft__real_pthread_getname_np(th, buf, len);
    }
    if (len < strlen(p->name) + 1)
        return ERANGE;
    strcpy(buf, p->name);
    return 0;
}

PT_API int pthread_getattr_np(pthread_t th, pthread_attr_t *attr)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user) {
        pthread_attr_t ra;
        int r = weft__real_pthread_getattr_np(th, &ra);
        if (r)
            return r;
        void *addr;
        size_t size;
        weft__real_pthread_attr_getstack(&ra, &addr, &size);
        weft__real_pthread_attr_destroy(&ra);
        pthread_attr_init(attr);
        PA(attr)->stackaddr = (char *)addr + size;
        PA(attr)->stacksize = size;
        return 0;
    }
    struct weft_thread *t = (struct weft_thread *)p->h;
    pthread_attr_init(attr);
    /* a caller's stack as it was given (weft's descriptor is at its top) */
    char *lo = p->ustack ? p->ustack : t->stack_lo;
    size_t size = p->ustack ? p->stack_size : t->stack_size;
    PA(attr)->stackaddr = lo + size;
    PA(attr)->stacksize = size;
    PA(attr)->guardsize = p->guard_size;
    PA(attr)->detach =
        atomic_load(&p->state) == PT_DETACHED ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE;
    PA(attr)->policy = p->sched_policy;
    PA(attr)->prio = p->sched_param.sched_priority;
    return 0;
}

PT_API int pthread_setschedparam(pthread_t th, int policy, const struct sched_param *sp)
{
    struct pt *p = weft__posix_pt_of((void *)th);
    if (!p)
        p = th == pthread_self() ? weft__posix_self() : NULL;
    if (!p)
        return ESRCH;
    if (!sp ||
        (policy != SCHED_OTHER && policy != SCHED_FIFO && policy != SCHED_RR &&
         policy != SCHED_BATCH && policy != SCHED_IDLE) ||
        sp->sched_priority < sched_get_priority_min(policy) ||
        sp->sched_priority > sched_get_priority_max(policy))
        return EINVAL;
    p->sched_policy = policy;
    p->sched_param = *sp;
    return 0;
}
PT_API int pthread_getschedparam(pthread_t th, int *policy, struct sched_param *sp)
{
    struct pt *p = weft__posix_pt_of((void *)th);
    if (!p)
        p = th == pthread_self() ? weft__posix_self() : NULL;
    if (!p)
        return ESRCH;
    *policy = p->sched_policy;
    *sp = p->sched_param;
    return 0;
}
PT_API int pthread_setschedprio(pthread_t th, int prio)
{
    struct pt *p = weft__posix_pt_of((void *)th);
    if (!p)
        return ESRCH;
    p->sched_param.sched_priority = prio;
    return 0;
}

static int concurrency;
PT_API int pthread_setconcurrency(int n)
{
    if (n < 0)
        return EINVAL;
    concurrency = n;
    return 0;
}
PT_API int pthread_getconcurrency(void)
{
    return concurrency;
}

PT_API int pthread_setaffinity_np(pthread_t th, size_t n, const cpu_set_t *set)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user) {
        extern __typeof__(pthread_setaffinity_np) weft__real_pthread_setaffinity_np;
        return weft__real_pthread_setaffinity_np(th, n, set);
    }
    if (((struct weft_thread *)p->h)->bound || p->ktid)
        return weft__posix_bound_setaffinity(p, n, set);
    (void)n, (void)set; /* recorded only: a user thread runs on any worker */
    return 0;
}
PT_API int pthread_getaffinity_np(pthread_t th, size_t n, cpu_set_t *set)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user) {
        extern __typeof__(pthread_getaffinity_np) weft__real_pthread_getaffinity_np;
        return weft__real_pthread_getaffinity_np(th, n, set);
    }
    if (((struct weft_thread *)p->h)->bound || p->ktid)
        return weft__posix_bound_getaffinity(p, n, set);
    return sched_getaffinity(0, n, set) == 0 ? 0 : errno;
}

/* pthread_kill, pthread_sigqueue: signal.c. */

/* A user thread's CPU clock: an id no kernel clock has (low bits 7; the
 * kernel's CPU clocks use 0-2, per-thread ones with bit 2) naming a slot
 * of cpu_clocks, which clock_gettime and clock_getres below read through
 * weft_thread_info_get (statistical, to about 1 ms: docs/posix.md). */
#define CLOCK_SLOTS 4096
static struct pt *_Atomic cpu_clocks[CLOCK_SLOTS];
#define CLOCK_OF(i)      ((clockid_t)((~(unsigned)(i) << 3) | 7u))
#define IS_USER_CLOCK(c) ((c) < 0 && ((c)&7) == 7)
#define SLOT_OF(c)       (~((unsigned)(c) >> 3) & ((1u << 29) - 1))

PT_API int pthread_getcpuclockid(pthread_t th, clockid_t *clk)
{
    struct pt *p = user_pt(th);
    if (!p || !p->user) {
        extern __typeof__(pthread_getcpuclockid) weft__real_pthread_getcpuclockid;
        return weft__real_pthread_getcpuclockid(th, clk);
    }
    for (unsigned i = 0; i < CLOCK_SLOTS; i++) {
        struct pt *cur = atomic_load(&cpu_clocks[i]);
        if (cur == p) {
            *clk = CLOCK_OF(i);
            return 0;
        }
    }
    for (unsigned i = 0; i < CLOCK_SLOTS; i++) {
        struct pt *none = NULL;
        if (atomic_compare_exchange_strong(&cpu_clocks[i], &none, p)) {
            p->had_clock = 1;
            *clk = CLOCK_OF(i);
            return 0;
        }
    }
    return ENOENT;
}

/* The thread's end gives its clock slot back (thread_end). */
static void drop_cpu_clock(struct pt *p)
{
    if (!p->had_clock)
        return;
    for (unsigned i = 0; i < CLOCK_SLOTS; i++) {
        struct pt *cur = p;
        if (atomic_compare_exchange_strong(&cpu_clocks[i], &cur, NULL))
            return;
    }
}

extern __typeof__(clock_gettime) weft__real_clock_gettime;
extern __typeof__(clock_getres) weft__real_clock_getres;

static int user_clock(clockid_t clk, struct timespec *ts)
{
    unsigned i = SLOT_OF(clk);
    struct pt *p = i < CLOCK_SLOTS ? atomic_load(&cpu_clocks[i]) : NULL;
    weft_thread_info info;
    if (!p || !p->h || weft_thread_info_get(p->h, &info) != 0) {
        errno = EINVAL;
        return -1;
    }
    ts->tv_sec = (time_t)(info.cpu_ns / 1000000000u);
    ts->tv_nsec = (long)(info.cpu_ns % 1000000000u);
    return 0;
}

/* CLOCK_THREAD_CPUTIME_ID on a user thread: its own CPU time (the kernel
 * thread's would mix every user thread its worker ran). The initial
 * thread's counts on from what it had used before the runtime started. */
static int own_clock(struct pt *p, struct timespec *ts)
{
    weft_thread_info info;
    if (weft_thread_info_get(p->h, &info) != 0)
        return weft__real_clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts);
    uint64_t ns = info.cpu_ns + (p == main_pt ? main_cpu_base : 0);
    ts->tv_sec = (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
    return 0;
}

PT_API int clock_gettime(clockid_t clk, struct timespec *ts)
{
    if (WEFT_UNLIKELY(IS_USER_CLOCK(clk)))
        return user_clock(clk, ts);
    if (WEFT_UNLIKELY(clk == CLOCK_THREAD_CPUTIME_ID)) {
        struct pt *p = weft__posix_self_if_any();
        if (p && p->h && !weft__posix_forked)
            return own_clock(p, ts);
    }
    return weft__real_clock_gettime(clk, ts);
}

PT_API int clock_getres(clockid_t clk, struct timespec *ts)
{
    if (WEFT_UNLIKELY(IS_USER_CLOCK(clk))) {
        if (ts) {
            ts->tv_sec = 0;
            ts->tv_nsec = 1000000;
        }
        return 0;
    }
    return weft__real_clock_getres(clk, ts);
}
