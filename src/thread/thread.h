/* thread.h: the user-thread descriptor, shared by sched, stack and sync.
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
 */
#ifndef WEFT_THREAD_THREAD_H
#define WEFT_THREAD_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "weft.h"

struct weft__worker;
struct weft__stack_class;
struct weft__prio_q;

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
/* A group member (thread/group.h): nobody joins or detaches it; its exit
 * counts it out of its group and it is freed with no CAS. Set at spawn. */
#define WEFT__J_MEMBER ((uintptr_t)32)
#define WEFT__J_PTR(s) ((s) & ~(uintptr_t)63)

/* A plain kernel thread waiting in the kernel (join from a pthread). */
struct weft__kwaiter {
    _Atomic uint32_t done; /* 0 until the waker stores 1 (release) */
} __attribute__((aligned(64)));

/* weft_thread.pinned: the initial thread runs on worker 0 only; with more
 * than one worker its spawns also choose their policy (thread.c:
 * spawn_main), a bit of its own so that the spawn fast path tests one byte. */
#define WEFT__PIN_WORKER0 1u
#define WEFT__PIN_CHOOSE  2u

struct weft_thread {
    void *sp;                    /* saved context; the thread itself, while it switches out */
    struct weft__worker *worker; /* worker it runs on; written by whoever switches it in */
    struct weft_thread *next;    /* link in one queue at a time; under that queue's lock */
    int err;                     /* errno while switched out; the thread itself */
    uint8_t pinned;              /* WEFT__PIN_* bits, 0 for every thread but the initial one;
                                    immutable while the runtime runs */
    uint8_t bound;               /* 1: runs on a kernel thread of its own; immutable */
    uint8_t guard;               /* WEFT__GUARD_*; set when the slot is carved */
    uint8_t cacheable;           /* 1: a default-size slot without canary, which a worker's
                                    stack cache may take back; set when carved */
    _Atomic uintptr_t join;      /* WEFT__J_* or joiner|tag; CAS by joiner, detacher, exit */
    weft_fn fn;                  /* immutable after spawn */
    void *arg;                   /* immutable after spawn */
    void *result; /* written by the thread before exit; read by the joiner after DONE (acquire) */
    uint64_t id;  /* 0 until first asked, then immutable: CAS (weft__thread_id_of) */
    const char *name; /* immutable after spawn */
    /* stack slot, set when carved, immutable afterwards */
    char *stack_lo;                 /* lowest usable byte */
    size_t stack_size;              /* usable bytes below the descriptor */
    struct weft__stack_class *cls;  /* size class it returns to; NULL: not a slot */
    unsigned valgrind_id;           /* VALGRIND_STACK_REGISTER id */
    void *san_fake_stack;           /* ASan fake stack while switched out */
    void *san_fiber;                /* TSan fiber */
    struct weft_thread *bound_prev; /* bound threads: back link in the live bound list, whose
                                      forward link is ->next; under its lock (thread.c) */
    _Atomic uintptr_t *group;       /* group members: the group's word (thread/group.h); set
                                       by the spawn before t can run, read by t's exit */
    /* CPU accounting (sched/account.h): statistical, written by the monitor
     * thread (sched/monitor.c) and stamped by park/ready; relaxed atomics
     * (readers want a snapshot). The record is the thread's only while
     * acct_id equals its id: a spawn resets the id, so a reused slot reads
     * as a fresh thread without a store on the spawn path. */
    _Atomic uint64_t acct_id;     /* id of the thread the record belongs to */
    _Atomic uint64_t cpu_ns;      /* CPU time charged so far */
    _Atomic uint64_t charged_at;  /* monitor clock of the last charge */
    _Atomic uint64_t state_since; /* monitor clock of its last state change */
    /* Priority (sched/pool_prio.c). Both 0 (NORMAL) in a fresh slot; an exit
     * resets them (exit_other: every exit once priorities are in use).
     * Relaxed __atomic accesses: others read them racily. */
    int8_t prio;              /* the set priority, WEFT_PRIO_* */
    int8_t pcls;              /* the class it is scheduled at: prio, or a mutex
                                     waiter's while it holds the mutex (inheritance) */
    int8_t boost;             /* class inherited from mutex waiters + 2, 0: none
                                     (sync/mutex.c); relaxed __atomic accesses */
    int8_t pq_cls;            /* its list in pq; under pq's lock */
    struct weft__prio_q *pq;  /* the priority pool's lists holding it, NULL: none;
                                     written under that lock, read racily */
    struct weft_thread *prev; /* back link of ->next in a FIFO (base/fifo.h: the thread
                                 queues, the priority pool's lists); under its lock */
    const void *wait_on; /* the weft_mutex it parks on while wait is MUTEX (sync/mutex.c);
                            weft_dump's deadlock report reads it racily: relaxed atomics */
    uint8_t wait; /* WEFT__WAIT_*: what it waits for; set by the thread before it parks or
                     blocks, cleared by its waker (weft__ready) and when it resumes; relaxed
                     atomics (weft__thread_wait), as weft_dump reads it racily */
} __attribute__((aligned(64)));

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

/* The last step of an exit, on the context that follows the exiting thread
 * t (t is off its stack): marks t DONE and hands it on (frees it if
 * detached, readies its joiner), then counts the exit on w, the caller's
 * worker. weft_init registers it with the scheduler (weft__rt.exited). */
void weft__finish_exit(struct weft__worker *w, struct weft_thread *t);

/* Gives a finished thread's descriptor and stack back: a stack cache (w's,
 * or the shared one for w NULL), or the spare bound descriptors. */
void weft__free_thread(struct weft__worker *w, struct weft_thread *t);

/* Frees the bound threads nobody joined (their kernel threads have ended):
 * weft_finalize. */
void weft__bound_free_all(void);

/* weft_blocking's callback, for weft__blocking_run. */
struct weft__blocking_call {
    void (*fn)(void *arg);
    void *arg;
};
/* Runs call's callback for weft_blocking on a user thread. An unwind out of
 * the callback (a C++ exception, pthread_exit) would resume the caller on a
 * kernel thread that no longer holds its worker, with the hand-off undone
 * by nobody: it aborts with one line instead. */
void weft__blocking_run(void *call);

/* Arms (on = 1, at the end of weft_init) or disarms (weft_finalize) the
 * check that the calling kernel thread, the one that called weft_init,
 * does not end while the runtime runs: pthread_exit in the initial thread
 * would leave the workers running for ever. Call on that kernel thread. */
void weft__initial_guard(int on);

/* Forgets the initial thread's previous child (thread.c: spawn_main): the
 * runtime starts, and its descriptors of an earlier run are gone. */
void weft__spawn_main_reset(void);

/* Calls fn(t, arg) for every bound thread not yet freed, under the bound
 * list's lock (fn must not spawn or free one): weft_dump's registry of the
 * threads that live outside the stack slabs. */
void weft__bound_each(void (*fn)(struct weft_thread *t, void *arg), void *arg);

/* Plain kernel threads now inside weft_join (thread.c); weft_finalize waits
 * for none to be left. */
int64_t weft__kernel_joins(void);
/* Plain kernel threads now inside weft_spawn; weft_finalize, once stopping,
 * waits for none to be left. */
int64_t weft__kernel_spawns(void);

#endif
