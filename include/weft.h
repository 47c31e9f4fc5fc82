/* weft.h: the public API of weft, M:N user-level threads for Linux.
 *
 * Conventions used below:
 *  - pthread-like calls return 0 or a positive errno value and never abort on
 *    bad input; system-call mirrors return -1 and set errno.
 *  - "Blocks the user thread" means the calling user thread is parked and its
 *    worker runs other threads; called from a plain kernel thread the same
 *    call blocks that kernel thread instead.
 *
 * errno and thread-locals: a user thread may resume on another worker after
 * any call that can switch (weft_yield, weft_join, every blocking primitive).
 * weft saves and restores errno per user thread, but glibc declares
 * __errno_location() `const`, so a compiler may reuse the address of errno
 * (or of any __thread variable) computed before such a call. Read errno into
 * a local right after the call that set it, before the next call that may
 * switch, or read it through weft_errno(), which is never cached.
 *
 * Blocking outside weft: a user thread that blocks in a plain kernel call
 * (read(), pthread_join(), sleep(), a pthread mutex) holds its worker until
 * the call returns. The initial thread runs on worker 0, so with one worker
 * a pthread_join() there waits for nothing that can run. Use the weft_*
 * mirrors of blocking calls, weft_blocking(), or a bound thread.
 *
 * weft_blocking(fn, arg) runs fn(arg) on the caller's own kernel thread and
 * stack (its thread-locals are the caller's) while the worker's place goes
 * to another kernel thread, which runs the worker's other user threads.
 * Inside fn the caller acts as a thread of its own: weft_self() is the
 * caller, and weft calls made there behave as from a bound thread. The
 * initial thread keeps to worker 0; while another user thread's call holds
 * the kernel thread that called weft_init, the initial thread may run on the
 * kernel thread that holds worker 0 meanwhile. weft_finalize returns on the
 * kernel thread that called weft_init. An unwind must not leave fn: a C++
 * exception (or pthread_exit) thrown out of fn prints one line and aborts,
 * because the caller's worker is held by another kernel thread meanwhile;
 * catch exceptions inside fn and pass them out through arg.
 *
 * C++: exceptions thrown and caught within one user thread work, and a
 * thread may switch, be preempted and move to another worker anywhere,
 * inside try and catch blocks and in destructors that run while an
 * exception unwinds the stack: each user thread has its own C++ exception
 * state (std::current_exception, std::uncaught_exceptions), carried with
 * it at every switch when the C++ runtime is loaded at weft_init. An
 * exception that leaves the thread function finds no handler and ends in
 * std::terminate (weft.hpp's threads carry it to join instead). weft_exit
 * unwinds as pthread_exit does (destructors run).
 */
#ifndef WEFT_H
#define WEFT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WEFT_BUILDING)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* ------------------------------------------------------------------------
 * Lifecycle
 * ------------------------------------------------------------------------ */

#define WEFT_WORK_FIRST                                                                            \
    0 /* spawn runs the child at once; the parent's continuation may be stolen */
#define WEFT_HELP_FIRST 1 /* spawn queues the child; the parent continues */

typedef struct weft_config {
    int workers;       /* kernel threads running user threads; 0 = CPUs in affinity mask */
    size_t stack_size; /* default user-thread stack; 0 = library default (64 KiB) */
    int spawn_policy;  /* WEFT_WORK_FIRST (default) | WEFT_HELP_FIRST */
    long quantum_us;   /* time slice; 0 = library default (10 ms), < 0 = never preempt
                            (see "Priorities and time quanta" below) */
} weft_config;

/* Fills *cfg with the defaults, then applies WEFT_WORKERS, WEFT_STACK_SIZE,
 * WEFT_SPAWN_POLICY and WEFT_QUANTUM (`10ms`, `500us`, `2000` = us, `off`). A malformed variable prints one line on stderr naming it
 * and leaves that field at its default. NULL cfg: does nothing. */
WEFT_API void weft_config_default(weft_config *cfg);

/* Starts the runtime; the calling kernel thread's flow becomes the first user
 * thread, pinned to worker 0. NULL cfg = defaults + environment.
 * Errors: EBUSY already initialised; EINVAL bad field (negative workers,
 * unknown policy); ENOMEM / EAGAIN when memory or kernel threads run out. */
WEFT_API int weft_init(const weft_config *cfg);

/* Waits until every user thread (detached ones included) has finished, stops
 * the workers and frees everything. Must be called by the thread that called
 * weft_init (else EPERM); EINVAL if the runtime is not running. */
WEFT_API int weft_finalize(void);

WEFT_API int weft_num_workers(void); /* 0 before init */
WEFT_API int weft_worker_id(void);   /* 0..workers-1 on a worker, -1 elsewhere */

/* ------------------------------------------------------------------------
 * User threads
 * ------------------------------------------------------------------------ */

typedef struct weft_thread weft_thread;
typedef void *(*weft_fn)(void *arg);

typedef struct weft_attr {
    size_t stack_size; /* 0 = config default */
    int detached;      /* no join; resources freed at exit */
    int bound;         /* runs on a kernel thread of its own (may block freely) */
    const char *name;  /* shown by debugging and tracing tools; may be NULL;
                               the string must outlive the thread */
    int priority;      /* WEFT_PRIO_*; 0 = WEFT_PRIO_NORMAL; out of range: EINVAL */
} weft_attr;
#define WEFT_ATTR_INIT                                                                             \
    {                                                                                              \
        0, 0, 0, NULL, 0                                                                           \
    }

/* Priority classes (attr.priority, weft_set_priority). A worker never runs
 * a ready thread while one of a higher class is ready on it; thieves take
 * the highest class they find; within a class the spawn policy and the
 * yield order hold. Work-first applies to a child whose class is not lower
 * than its parent's; a lower child is queued, a higher one runs at once
 * under either policy. Priorities are not inherited by children. With
 * preemption on (weft_config.quantum_us >= 0), a thread that becomes ready
 * while every worker runs a lower class preempts the lowest-class one at
 * once, and a thread that keeps its worker past the quantum while a thread
 * of its class or higher is ready is preempted (see docs/priorities.md for
 * what preemption means for raw system calls and debuggers). A thread that
 * holds a weft_mutex on which a higher class waits runs at the waiter's
 * class until it unlocks. */
enum { WEFT_PRIO_BACKGROUND = -1, WEFT_PRIO_NORMAL = 0, WEFT_PRIO_HIGH = 1, WEFT_PRIO_URGENT = 2 };

/* Sets t's priority (NULL: the caller; EPERM outside user threads; EINVAL
 * out of range). A queued thread moves to its new class; the caller that
 * lowers its own class yields if a higher one is ready on its worker.
 * Never blocks; any thread. 0, EINVAL, EPERM, or ENOMEM (the first use of a
 * priority sets up per-worker lists). */
WEFT_API int weft_set_priority(weft_thread *t, int prio);
/* The priority t was set to (an inherited class is not shown); NULL: the
 * caller; WEFT_PRIO_NORMAL outside user threads. */
WEFT_API int weft_priority(const weft_thread *t);

/* Creates a user thread running fn(arg). Callable from user threads and from
 * any kernel thread after weft_init. Under WEFT_WORK_FIRST, called from a user
 * thread, the child runs at once and the caller resumes later (possibly on
 * another worker). out may be NULL only for a detached thread.
 * Errors: EAGAIN runtime not running or out of resources; EINVAL fn NULL,
 * out NULL for a joinable thread, or stack_size too small (< 16 KiB);
 * ENOMEM no memory for the stack. */
WEFT_API int weft_spawn(weft_thread **out, weft_fn fn, void *arg, const weft_attr *attr);

/* Waits for t to finish and stores its result in *result (if not NULL); then
 * frees t. Blocks the user thread (or kernel thread). Errors: EINVAL t NULL,
 * detached, already being joined or already joined, or the initial thread
 * (it ends only in weft_finalize); EDEADLK t is the caller.
 * A handle stays valid until its thread is joined (or, detached, has
 * finished); a stale one is refused with EINVAL, never frees anything
 * twice, but once a later weft_spawn reuses the thread's storage it names
 * the new thread (as a reused pthread_t may): drop handles once joined. */
WEFT_API int weft_join(weft_thread *t, void **result);

/* Marks t detached: its resources are freed when it exits (at once if it has
 * finished). EINVAL if t is NULL, already detached, being joined, already
 * joined, or the initial thread. */
WEFT_API int weft_detach(weft_thread *t);

/* Lets every other ready thread of this worker run before the caller runs
 * again. From a plain kernel thread: sched_yield(). */
WEFT_API void weft_yield(void);

/* Ends the calling user thread with result (as if fn returned it). Like
 * pthread_exit, it unwinds the thread's stack first: C++ destructors and
 * -fexceptions cleanups of the frames it leaves run (a catch (...) sees it
 * and must rethrow; swallowing it aborts), the thread may switch while they
 * run, and frames without unwind information end the unwind there. From the
 * initial thread (the one that called weft_init): as pthread_exit in main,
 * the process goes on until every other user thread has finished, then
 * weft_finalize runs and the process exits with status 0 (through exit():
 * nothing is unwound there). From a plain kernel thread: prints an error and
 * aborts (there is nothing to end).
 * pthread_exit() in a user thread (the initial one, bound ones and
 * weft_blocking callbacks included) would end a kernel thread that runs
 * other user threads: it prints one line and aborts. Use weft_exit. */
#ifdef __cplusplus
[[noreturn]] WEFT_API void weft_exit(void *result);
#else
WEFT_API _Noreturn void weft_exit(void *result);
#endif

/* weft_spawn, but the child gets a pointer to its own copy of the arg_size
 * bytes at arg, made before this returns, aligned as malloc's memory and
 * released with the child (it lives at the top of the child's stack: no
 * allocation). arg_size 0 passes arg as is. Errors: as weft_spawn, and
 * EINVAL arg_size > 4096, or arg NULL with arg_size > 0. */
WEFT_API int weft_spawn_copy(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                             const weft_attr *attr);

/* Groups: the fork-join scope of OpenMP's taskwait, oneTBB's task_group
 * and Go's WaitGroup. Threads spawned into a group are waited for all at
 * once; their results are discarded and they cannot be joined one by one.
 * Members may spawn into their own group; after a wait the group may be
 * used again. A group costs what the joins it replaces cost. All-zero
 * storage (WEFT_GROUP_INIT) is an initialised group; its fields are
 * private. */
typedef struct weft_group {
    uint64_t weft_private_[4];
} weft_group;
#define WEFT_GROUP_INIT                                                                            \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* EINVAL g NULL. */
WEFT_API int weft_group_init(weft_group *g);

/* Spawns fn into g, as weft_spawn_copy does (arg_size 0: arg as is; else a
 * copy of up to 4096 bytes); the spawn policy applies. attr as for
 * weft_spawn, but detached is EINVAL. Callable wherever weft_spawn is.
 * Errors: those of weft_spawn_copy; EINVAL g NULL or attr->detached. */
WEFT_API int weft_group_spawn(weft_group *g, weft_fn fn, const void *arg, size_t arg_size,
                              const weft_attr *attr);

/* Returns once every thread spawned into g before or during the wait has
 * finished (members are freed as they finish). Blocks the user thread (or kernel thread). Any
 * number of threads may wait at once; a member must not wait for its own
 * group (it would wait for itself). EINVAL g NULL. */
WEFT_API int weft_group_wait(weft_group *g);

/* EBUSY while a member runs or a thread waits on g;
 * EINVAL g NULL. */
WEFT_API int weft_group_destroy(weft_group *g);

WEFT_API weft_thread *weft_self(void); /* NULL outside user threads */
WEFT_API uint64_t
weft_thread_id(const weft_thread *t); /* unique for the runtime's life; 0 for NULL */
WEFT_API const char *weft_thread_name(const weft_thread *t); /* attr.name or NULL */

/* errno of the calling thread, read through a call no compiler caches. */
WEFT_API int weft_errno(void);

/* ------------------------------------------------------------------------
 * Synchronisation. Types are complete so they can live anywhere; their
 * fields are private. All-zero storage is an initialised object.
 * ------------------------------------------------------------------------ */

typedef struct weft_mutex {
    uint64_t weft_private_[4];
} weft_mutex;
typedef struct weft_cond {
    uint64_t weft_private_[4];
} weft_cond;
typedef struct weft_rwlock {
    uint64_t weft_private_[6];
} weft_rwlock;
typedef struct weft_barrier {
    uint64_t weft_private_[6];
} weft_barrier;
typedef struct weft_sem {
    uint64_t weft_private_[4];
} weft_sem;
typedef struct weft_spin {
    uint64_t weft_private_[1];
} weft_spin;

#define WEFT_MUTEX_INIT                                                                            \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }
#define WEFT_COND_INIT                                                                             \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }
#define WEFT_RWLOCK_INIT                                                                           \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }
#define WEFT_SPIN_INIT                                                                             \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

WEFT_API int weft_mutex_init(weft_mutex *m);
WEFT_API int weft_mutex_destroy(weft_mutex *m); /* EBUSY if locked or waited on */
WEFT_API int weft_mutex_lock(weft_mutex *m);    /* EDEADLK if the caller owns it */
WEFT_API int weft_mutex_trylock(weft_mutex *m); /* EBUSY */
WEFT_API int weft_mutex_unlock(weft_mutex *m);  /* EPERM if not owner */

WEFT_API int weft_cond_init(weft_cond *c);
WEFT_API int weft_cond_destroy(weft_cond *c); /* EBUSY if waited on */
WEFT_API int weft_cond_wait(weft_cond *c, weft_mutex *m);
WEFT_API int weft_cond_timedwait(weft_cond *c, weft_mutex *m,
                                 const struct timespec *abstime); /* CLOCK_REALTIME; ETIMEDOUT */
WEFT_API int weft_cond_signal(weft_cond *c);
WEFT_API int weft_cond_broadcast(weft_cond *c);

WEFT_API int weft_rwlock_init(weft_rwlock *l);
WEFT_API int weft_rwlock_destroy(weft_rwlock *l);
WEFT_API int weft_rwlock_rdlock(weft_rwlock *l);
WEFT_API int weft_rwlock_wrlock(weft_rwlock *l);
WEFT_API int weft_rwlock_unlock(weft_rwlock *l);

#define WEFT_BARRIER_SERIAL_THREAD (-1)
WEFT_API int weft_barrier_init(weft_barrier *b, unsigned count); /* count 0: EINVAL */
WEFT_API int weft_barrier_wait(weft_barrier *b);
WEFT_API int weft_barrier_destroy(weft_barrier *b);

WEFT_API int weft_sem_init(weft_sem *s, unsigned value);
WEFT_API int weft_sem_destroy(weft_sem *s);
WEFT_API int weft_sem_wait(weft_sem *s);
WEFT_API int weft_sem_trywait(weft_sem *s); /* EAGAIN */
WEFT_API int weft_sem_post(weft_sem *s);

WEFT_API int weft_spin_init(weft_spin *s);
WEFT_API int weft_spin_lock(weft_spin *s);
WEFT_API int weft_spin_trylock(weft_spin *s); /* EBUSY */
WEFT_API int weft_spin_unlock(weft_spin *s);

/* ------------------------------------------------------------------------
 * Counters (an extension to the contract): sums over the workers since
 * weft_init, read without stopping them (a consistent enough snapshot for
 * benchmarks). Errors: EINVAL out NULL; EAGAIN runtime not running.
 * ------------------------------------------------------------------------ */
typedef struct weft_stats {
    uint64_t threads_spawned, threads_exited; /* user threads, bound ones aside */
    uint64_t steals, worker_sleeps;           /* successful steals; futex/ring sleeps */
    uint64_t io_calls;                        /* requests queued in io_uring rings */
    uint64_t io_enters;                       /* io_uring_enter crossings */
    uint64_t io_completions;                  /* completions reaped */
    uint64_t io_offloaded;     /* blocking calls run in place: no kernel thread to be had */
    uint64_t io_handoffs;      /* workers handed to another kernel thread (weft_blocking) */
    uint64_t tasks_run;        /* zero-wait tasks run to completion */
    uint64_t tasks_stolen;     /* tasks a worker took from another one's deque */
    uint64_t task_calls;       /* split-phase calls issued (weft_task_read ...); those on a
                              ring count in io_calls too: io_calls / io_enters is the
                              requests per kernel crossing */
    uint64_t preempt_quantum;  /* threads preempted for keeping their worker past the quantum */
    uint64_t preempt_priority; /* threads preempted for a higher class that became ready */
} weft_stats;
WEFT_API int weft_stats_get(weft_stats *out);

/* ------------------------------------------------------------------------
 * Blocking system calls: park only the calling user thread.
 * ------------------------------------------------------------------------ */

WEFT_API ssize_t weft_read(int fd, void *buf, size_t n);
WEFT_API ssize_t weft_write(int fd, const void *buf, size_t n);
WEFT_API ssize_t weft_pread(int fd, void *buf, size_t n, off_t off);
WEFT_API ssize_t weft_pwrite(int fd, const void *buf, size_t n, off_t off);
WEFT_API ssize_t weft_recv(int fd, void *buf, size_t n, int flags);
WEFT_API ssize_t weft_send(int fd, const void *buf, size_t n, int flags);
WEFT_API int weft_accept(int fd, struct sockaddr *addr, socklen_t *len);
WEFT_API int weft_connect(int fd, const struct sockaddr *addr, socklen_t len);
WEFT_API int weft_poll(int fd, short events,
                       int timeout_ms); /* revents, 0 on timeout, -1 + errno */
WEFT_API int weft_sleep_ns(uint64_t ns);
WEFT_API int weft_blocking(void (*fn)(void *arg), void *arg);

/* ------------------------------------------------------------------------
 * Observability (docs/debugging.md): what each user thread is doing.
 * ------------------------------------------------------------------------ */

enum {
    WEFT_STATE_RUNNING,
    WEFT_STATE_READY,
    WEFT_STATE_PARKED,
    WEFT_STATE_BLOCKING,
    WEFT_STATE_DONE
};

typedef struct weft_thread_info {
    uint64_t id;       /* weft_thread_id */
    const char *name;  /* attr.name or NULL */
    int state;         /* WEFT_STATE_*; BLOCKING = in weft_blocking or a syscall mirror */
    int worker;        /* worker running it, else -1 */
    int priority;      /* WEFT_PRIO_* */
    uint64_t cpu_ns;   /* time it has run so far, the current stretch included */
    uint64_t state_ns; /* time in its current state (to a kernel tick, 1-4 ms:
                          it may read that much long, never short) */
} weft_thread_info;

/* A snapshot of t (NULL: the caller). Does not block; any thread, while
 * the runtime runs. The snapshot may be stale by the time it returns (the
 * thread goes on). Errors: EINVAL out NULL; ESRCH t NULL outside a user
 * thread, or t already joined or freed. */
WEFT_API int weft_thread_info_get(const weft_thread *t, weft_thread_info *out);

/* Writes every live user thread to fd: a line with its id, name, state
 * (for a parked thread the object it waits on: mutex, cond, rwlock,
 * barrier, sem, join, io or sleep), worker, priority, CPU time and time in
 * state, then its backtrace, innermost frame first (the caller's own from
 * its live stack; parked and ready threads' from their saved context;
 * threads running on other workers have none). Any thread, signal handlers
 * excepted (WEFT_DUMP_SIGNAL does it for them); blocks the calling kernel
 * thread while it writes, never the others; uses about 16 KiB of the
 * caller's stack. Returns 0, EAGAIN when the
 * runtime is not running, ENOMEM, or the errno of a failed write. */
WEFT_API int weft_dump(int fd);

/* ------------------------------------------------------------------------
 * Zero-wait tasks and split-phase calls.
 *
 * A task is a continuation-based thread: fn(arg) and a synchronisation
 * counter. It starts once `count` continuations (weft_task_continue) have
 * arrived and then runs to completion on a worker's own scheduler stack:
 * while it waits it costs one cache line and no stack. The continuation
 * that brings a task to zero, sent from a task, runs it next on the same
 * worker (child-first); any further one goes to that worker's deque, where
 * idle workers steal it. Tasks and user threads share the workers: a
 * worker runs its ready tasks whenever it has no user thread to run (a user
 * thread that readies tasks keeps its worker until it parks or yields;
 * other workers steal them meanwhile). The library frees a task when fn
 * returns: do not touch its handle after its last continuation.
 *
 * Every call here may be made from tasks, user threads and plain kernel
 * threads, and never blocks. Errors: EAGAIN before weft_init or after
 * weft_finalize; EINVAL fn or t NULL, or out NULL with count > 0; ENOMEM
 * no memory for a record. weft_task_continue beyond the count is undefined,
 * like a double free.
 *
 * Inside a task weft_self() is NULL and weft_worker_id() the worker's id.
 * A task runs on its worker's scheduler stack (256 KiB, with a guard
 * region): keep large buffers off it.
 * A task may call every weft_* function that does not block (spawn,
 * detach, the task and split-phase calls, unlock, signal, post, trylock).
 * A call that would block fails with EPERM instead (a syscall mirror: -1,
 * errno EPERM), without waiting: a task has no stack of its own to park,
 * and waiting in the kernel would stall its worker. Lock acquisitions that
 * succeed at once (weft_mutex_lock on a free mutex, weft_sem_wait on a
 * positive count) succeed. To wait for I/O or time, issue a split-phase
 * call and let its completion continue a task.
 *
 * Split-phase calls issue the operation and return 0 at once (EINVAL cont
 * NULL, EAGAIN runtime not running, ENOMEM: then no continuation comes).
 * When it completes, the result the mirrored weft_* call would return, or
 * -errno (a closed descriptor: -EBADF), is stored in *res (res may be
 * NULL), and then one continuation is sent to cont. From a task or a user
 * thread on a worker with io_uring, the request joins the worker's ring
 * and is submitted with the worker's other requests at its next scheduling
 * point (many requests per io_uring_enter): the descriptor is looked up
 * then, so keep it open until the result arrives; the completion is reaped
 * by that worker. From plain kernel threads, or where io_uring is missing
 * (WEFT_IO=blocking), each call runs the weft_* mirror in a detached user
 * thread of its own: slower, same results. weft_task_write and
 * weft_task_send on a blocking descriptor write everything, as the mirrors
 * do; weft_task_send adds MSG_NOSIGNAL (a closed peer: -EPIPE in *res, no
 * SIGPIPE), weft_task_write to a pipe without readers raises SIGPIPE as
 * write(2) does.
 *
 * weft_finalize waits for every task that is ready or running and for
 * every split-phase call in flight (and the tasks their completions make
 * ready); tasks whose counter never reached zero are released unrun.
 * ------------------------------------------------------------------------ */
typedef struct weft_task weft_task;
typedef void (*weft_task_fn)(void *arg);

WEFT_API int weft_task_create(weft_task **out, weft_task_fn fn, void *arg, unsigned count);
WEFT_API int weft_task_continue(weft_task *t); /* one continuation arrives */

WEFT_API int weft_task_read(weft_task *cont, ssize_t *res, int fd, void *buf, size_t n);
WEFT_API int weft_task_write(weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n);
WEFT_API int weft_task_pread(weft_task *cont, ssize_t *res, int fd, void *buf, size_t n, off_t off);
WEFT_API int weft_task_pwrite(weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n,
                              off_t off);
WEFT_API int weft_task_recv(weft_task *cont, ssize_t *res, int fd, void *buf, size_t n, int flags);
WEFT_API int weft_task_send(weft_task *cont, ssize_t *res, int fd, const void *buf, size_t n,
                            int flags);
WEFT_API int weft_task_accept(weft_task *cont, ssize_t *res, int fd, struct sockaddr *addr,
                              socklen_t *len);
WEFT_API int weft_task_sleep_ns(weft_task *cont, uint64_t ns); /* a timer event; no result */

#ifdef __cplusplus
}
#endif
#endif /* WEFT_H */
