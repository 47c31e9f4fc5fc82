/* desc.h: the descriptors every layer shares, as Go's runtime2.go keeps
 * its g, m and p: the user thread (struct weft_thread) and the worker
 * (struct weft__worker), with the few types they embed (a worker's deque
 * and stack cache). Types only: the operations stay with their owners
 * (sched/ queues and switches them, stack/ carves and caches the slots,
 * thread/ runs the life cycle), which all include this header from above.
 *
 * A descriptor lives at the top of its own stack slot (stack/stack.c), so a
 * spawn allocates one object. Who owns a thread, by state:
 *  - running: the worker in thread->worker; only that kernel thread touches
 *    sp/err;
 *  - ready: the queue holding it (deque, yield queue, injection queue);
 *  - parked: the wait object it is enqueued on (after commit ran) — whoever
 *    dequeues it calls weft__ready exactly once;
 *  - finished: its joiner (or the stack cache for a detached thread);
 *  - freed (join word FREED): the stack cache or the bound spare list; only
 *    stale handles still point at it, and every call refuses them.
 * Each owner's fields form one unnamed sub-struct (its members keep their
 * plain names: t->sp, t->join, t->prio).
 */
#ifndef WEFT_DESC_DESC_H
#define WEFT_DESC_DESC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/fifo.h"
#include "weft.h"

struct weft__worker;
struct weft__stack_class;
struct weft__prio_q;
struct weft__trace_ring;
struct weft__io_state;

/* How a stack slot is protected against overflow. */
enum {
    WEFT__GUARD_NONE,     /* not ours (the initial thread, bound threads) */
    WEFT__GUARD_MADVISE,  /* MADV_GUARD_INSTALL region: no extra mapping */
    WEFT__GUARD_MPROTECT, /* PROT_NONE page: two mappings per stack */
    WEFT__GUARD_CANARY,   /* no guard page; a canary word checked at switches */
};

/* Join word states (thread->join). A joiner's descriptor (or a kernel
 * waiter record) is 64-byte aligned, so the low bits are free for tags.
 * FREED: the thread was joined, or detached and finished; its slot is back
 * in a cache. Descriptors stay mapped while the runtime runs (stack slabs,
 * recycled bound descriptors), so a stale handle reads FREED and is refused
 * until a new thread reuses the slot. */
#define WEFT__J_RUNNING  ((uintptr_t)0)
#define WEFT__J_DONE     ((uintptr_t)2)
#define WEFT__J_DETACHED ((uintptr_t)4)
#define WEFT__J_KWAIT    ((uintptr_t)8) /* tag: pointer is a struct weft__kwaiter */
#define WEFT__J_FREED    ((uintptr_t)16)
/* A group member (thread/member.h): nobody joins or detaches it; its exit
 * counts it out of its group and it is freed with no CAS. Set at spawn. */
#define WEFT__J_MEMBER ((uintptr_t)32)
#define WEFT__J_PTR(s) ((s) & ~(uintptr_t)63)

/* A plain kernel thread waiting in the kernel (join from a pthread). */
struct weft__kwaiter {
    _Atomic uint32_t word; /* an os/kwait.h wait word: WAITING until the exit wakes it */
} WEFT_ALIGNED;

/* weft_thread.pinned: the initial thread runs on worker 0 only; with more
 * than one worker its spawns also choose their policy (thread.c:
 * plan_run), a bit of its own so that the spawn fast path tests one byte. */
#define WEFT__PIN_WORKER0 1u
#define WEFT__PIN_CHOOSE  2u

struct weft_thread {
    /* The switch and the run queues (sched/): the first 32 bytes, read by
     * every switch; arch/context_push.h knows where `next` is. */
    struct {
        void *sp;                    /* saved context; the thread itself, while it switches out */
        struct weft__worker *worker; /* worker it runs on; written by whoever switches it in */
        struct weft_thread *next;    /* link in one queue at a time; under that queue's lock */
        int err;                     /* errno while switched out; the thread itself */
        uint8_t pinned;              /* WEFT__PIN_* bits, 0 for every thread but the initial
                                        one; immutable while the runtime runs */
        uint8_t bound;               /* 1: runs on a kernel thread of its own; immutable */
        uint8_t guard;               /* stack/: WEFT__GUARD_*; set when the slot is carved */
        uint8_t cacheable;           /* stack/: 1: a default-size slot without canary, which a
                                        worker's stack cache may take back; set when carved */
    };
    /* Life cycle and join (thread/). */
    struct {
        _Atomic uintptr_t join; /* WEFT__J_* or joiner|tag; CAS by joiner, detacher, exit */
        weft_fn fn;             /* immutable after spawn */
        void *arg;              /* immutable after spawn */
        void *result;           /* written by the thread before exit; read by the joiner after DONE
                         (acquire) */
        uint64_t id;            /* 0 until first asked, then immutable: CAS (weft__thread_id_of) */
        const char *name;       /* immutable after spawn */
        struct weft_thread *bound_prev; /* bound threads: back link in the live bound list,
                                           whose forward link is ->next; under its lock */
        _Atomic uintptr_t *group;       /* group members: the group's word (thread/member.h);
                                           set by the spawn before t can run, read by t's exit */
        uint8_t wait;        /* WEFT__WAIT_*: what it waits for; set by the thread before it parks
                         or blocks, cleared by its waker (weft__ready) and when it resumes;
                         relaxed atomics (weft__thread_wait), as weft_dump reads it racily */
        const void *wait_on; /* the weft_mutex it parks on while wait is MUTEX (sync/mutex.c);
                                weft_dump's deadlock report reads it racily: relaxed atomics */
    };
    /* The stack slot (stack/): set when carved, immutable afterwards. */
    struct {
        char *stack_lo;                /* lowest usable byte */
        size_t stack_size;             /* usable bytes below the descriptor */
        struct weft__stack_class *cls; /* size class it returns to; NULL: not a slot */
        unsigned valgrind_id;          /* VALGRIND_STACK_REGISTER id */
    };
    /* The sanitizers (sched/san.h). */
    struct {
        void *san_fake_stack; /* ASan fake stack while switched out */
        void *san_fiber;      /* TSan fiber */
    };
    /* CPU accounting (sched/account.h): statistical, written by the monitor
     * thread (policy/monitor.c) and stamped by park/ready; relaxed atomics
     * (readers want a snapshot). The record is the thread's only while
     * acct_id equals its id: a spawn resets the id, so a reused slot reads
     * as a fresh thread without a store on the spawn path. */
    struct {
        _Atomic uint64_t acct_id;     /* id of the thread the record belongs to */
        _Atomic uint64_t cpu_ns;      /* CPU time charged so far */
        _Atomic uint64_t charged_at;  /* monitor clock of the last charge */
        _Atomic uint64_t state_since; /* monitor clock of its last state change */
    };
    /* Priority (policy/pool_prio.c, sync/mutex.c). All 0 (NORMAL) in a
     * fresh slot; an exit resets them (every exit once priorities are in
     * use). Relaxed __atomic accesses: others read them racily. */
    struct {
        int8_t prio;              /* the set priority, WEFT_PRIO_* */
        int8_t pcls;              /* the class it is scheduled at: prio, or a mutex waiter's
                                     while it holds the mutex (inheritance) */
        int8_t boost;             /* class inherited from mutex waiters + 2, 0: none */
        int8_t pq_cls;            /* its list in pq; under pq's lock */
        struct weft__prio_q *pq;  /* the priority pool's lists holding it, NULL: none;
                                     written under that lock, read racily */
        struct weft_thread *prev; /* back link of ->next in a FIFO (base/fifo.h: the thread
                                     queues, the priority pool's lists); under its lock */
    };
    /* Its C++ exception state while switched out (sched/eh.h): written by
     * the thread as it leaves, read by it once resumed; never read before
     * it was written, so a fresh slot needs no store. */
    struct {
        void *eh_caught;
        unsigned eh_uncaught;
    };
#if WEFT_POSIX
    /* libweft-pthread's build (src/posix): its glibc thread block
     * (sched/switch.h), NULL: none; set at spawn, then by the thread */
    void *fs;
#endif
} WEFT_ALIGNED;

/* What a thread that is not on a CPU waits for (thread->wait): the words
 * weft_dump prints (observe/registry.c). A parked thread whose byte is
 * NONE is ready, or about to be; BLOCKING is a thread inside weft_blocking
 * or a syscall mirror's hand-off, running on a kernel thread of its own.
 * share/weft/weft-gdb.py knows these in this order. */
enum {
    WEFT__WAIT_NONE,
    WEFT__WAIT_MUTEX,
    WEFT__WAIT_COND,
    WEFT__WAIT_RWLOCK,
    WEFT__WAIT_BARRIER,
    WEFT__WAIT_SEM,
    WEFT__WAIT_JOIN,
    WEFT__WAIT_IO,
    WEFT__WAIT_SLEEP,
    WEFT__WAIT_BLOCKING,
    WEFT__WAIT_KINDS
};

/* ---- a machine's home ---------------------------------------------------- */

/* A machine's own context, on its own stack, while it runs a worker's
 * scheduler context. The main kernel thread has none. */
struct weft__home {
    void *sp;    /* suspended home context */
    void *fake;  /* ASan fake stack while away */
    void *fiber; /* TSan: the kernel thread's own fiber */
    char *lo;    /* native stack bounds (ASan) */
    size_t size;
    uintptr_t reason; /* why the machine came home (machine.c) */
};

/* ---- what a worker embeds ---------------------------------------------- */

/* A worker's private caches of free slots (LIFO: hot in cache): one of
 * default-size slots, and one of the last other size the worker allocated
 * (a program that sizes its stacks passes one size at every spawn). Neither
 * ever holds a canary slot (stack.c, "The caches"). */
struct weft__stack_cache {
    struct weft_thread *head;       /* owner worker only */
    unsigned n;                     /* owner worker only */
    unsigned on;                    /* owner worker only: slots on ohead */
    struct weft_thread *ohead;      /* owner worker only: free slots of ocls */
    struct weft_thread *otail;      /* owner worker only: ohead's last; valid while on > 0 */
    struct weft__stack_class *ocls; /* owner worker only: the other size's class, or NULL */
    size_t osize;                   /* owner worker only: ocls's nominal size, 0 if none */
    unsigned omiss;                 /* owner worker only: allocations of yet other sizes
                                       since ocls last served one (stack.c, "The caches") */
};

/* The Chase-Lev deque of a worker (operations: sched/deque.h). */
struct weft__deque_array {
    int64_t mask;                      /* size - 1; immutable */
    struct weft__deque_array *retired; /* older arrays; owner only */
    _Atomic(void *) slot[];            /* release by owner push; acquire by steal */
};

struct weft__deque {
    _Atomic int64_t top WEFT_ALIGNED;    /* thieves and owner CAS */
    _Atomic int64_t bottom WEFT_ALIGNED; /* owner writes; thieves read */
    _Atomic(struct weft__deque_array *)
        array; /* owner replaces (release); thieves read (acquire) */
    /* Where a push that cannot grow the array puts x instead (deque.h:
     * weft__deque_init); immutable */
    void (*overflow)(struct weft__deque *d, struct weft_thread *x);
};

/* ---- the worker ---------------------------------------------------------- */

/* struct weft__tqueue, a FIFO of threads linked through ->next and ->prev
 * (base/fifo.h: weft__tq_push, _pop, ...), guarded by whatever lock its
 * owner holds (the injection queue, a mailbox, the FIFO pool). */
WEFT__FIFO(weft__tqueue, weft__tq, struct weft_thread)

struct weft__worker {
    /* hot, owner only */
    struct weft_thread *current;    /* see invariants; read by the SIGSEGV handler */
    int *errno_loc;                 /* this kernel thread's errno; immutable */
    void *sched_sp;                 /* suspended scheduler context */
    struct weft__stack_cache cache; /* default-size stack slots */
    _Atomic uint64_t nspawned;      /* owner stores (relaxed), finalize reads */
    _Atomic uint64_t nexited;       /* owner stores (release), finalize reads (acquire) */
    int id;                         /* immutable */
    uint64_t rng;                   /* victim selection; owner only */
    uint64_t nsteals, nsleeps;      /* owner only; WEFT_STATS report */
    /* Switches out of a user thread on this worker (weft__switch_on, a
     * work-first spawn): the monitor (policy/monitor.c) reads it racily to
     * tell a thread that kept the worker from one that came back. Owner
     * only; one add per switch, nothing else on the hot path. */
    uint64_t tick;
    /* Its WEFT_TRACE ring (sched/events.h); NULL while not tracing. Written
     * only while no worker runs. */
    struct weft__trace_ring *trace;
    /* preemption (policy/preempt.c) */
    _Atomic int ktid;             /* kernel thread running w; stored by whoever takes w,
                                     read racily by those that signal it */
    _Atomic uint64_t preempt_req; /* tick << 2 | cause: preempt the thread that runs at
                                     that tick; 0: none. Set by CAS (monitor, readiers),
                                     cleared by the owner (its signal handler) */
    uint64_t npreempt[2];         /* preemptions by cause (quantum, priority); owner only */
    /* The fast retry of a request the handler had to refuse (preempt.c):
     * a one-shot kernel timer that signals the kernel thread running w.
     * Owner only (the handler), and the worker's teardown. */
    int retry_timer;    /* kernel timer id + 1; 0: none yet */
    int retry_tid;      /* the kernel thread that timer signals */
    uint64_t retry_req; /* the request being retried */
    unsigned retry_n;   /* retries of it so far */

    struct weft__deque dq; /* default pool: owner bottom, thieves top */

    /* yield FIFO: owner only, so a yielding thread is queued before it
     * switches, with no lock. Thieves never touch it; they raise
     * WEFT__ATTN_WANT and the owner moves yielded threads to its deque at its
     * next scheduling point. A circle linked through ->next, named by its
     * tail (the head is yq->next; NULL: empty), so that a yield's rotation
     * (the head out, the caller in behind the tail) is four stores and
     * loads with no branch. Read racily by thieves as a hint. */
    struct weft_thread *yq;

    /* mailbox: any thread hands a thread to this worker (the pinned initial
     * thread readied elsewhere) under mb_lock; the owner drains it.
     * attn and gate share one 64-bit word so that the hot path tests both
     * with one load (attn_any, relaxed): any bit of either sends the caller
     * through weft__pick_slow. attn keeps its own meaning and is only ever
     * changed by 32-bit RMWs on attn; gate likewise on gate. */
    union {
        struct {
            _Atomic uint32_t attn; /* WEFT__ATTN_*; set by others, cleared by owner */
            _Atomic uint32_t gate; /* WEFT__GATE_*: runtime-wide conditions, mirrored */
        };
        _Atomic uint64_t attn_any; /* hot-path test only: attn | gate != 0 */
    } WEFT_ALIGNED;
    weft__lock mb_lock;
    struct weft__tqueue mb; /* under mb_lock */

    /* idling */
    _Atomic uint32_t sleeping WEFT_ALIGNED; /* 1 while in (or entering) futex sleep; seq_cst */
    _Atomic uint32_t
        sleep_in_ring;     /* 1: sleeps in its io_uring, wake through the eventfd; seq_cst */
    _Atomic uint32_t wake; /* an os/kwait.h wait word: WAITING (+SLEEPER) while idle;
                                       WOKEN or WAKE_TOKEN (sched.c) once claimed by a waker (CAS) */

    /* hand-off (machine.c): the worker moves between kernel threads */
    _Atomic uint64_t lend;  /* gen<<2 | LEND_*: lent to another machine */
    uint64_t lend_gen;      /* owner */
    _Atomic uint32_t claim; /* worker 0: the main kernel thread wants it back */
    int cpu;                /* CPU its machine pins itself to, -1: none; immutable */

    /* scheduler context and its sanitizer/tool state; immutable while running */
    void *altstack;                 /* worker 0: weft__altstack_push token */
    struct weft_thread *sched_slot; /* the scheduler's stack */
    char *sched_stack_lo;           /* bounds of the scheduler stack (ASan) */
    size_t sched_stack_size;
    void *sched_fake_stack;    /* ASan */
    void *sched_fiber;         /* TSan */
    struct weft__io_state *io; /* io/uring.c; owner only; NULL until first I/O */
};

#endif
