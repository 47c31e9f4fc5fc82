/* mltp.h: the Multi-Layer Thread Package API (Dipperstein, UCSB), the seed
 * weft grew from, implemented on top of weft.
 *
 * Under mltp_init the runtime runs the seed's policy: virtual processors
 * (weft workers) share one FIFO run queue. A created thread goes to the
 * tail and does not run at once; mltp_yield puts the caller at the tail,
 * mltp_yield_to_first at the head; a thread woken by a condition or a
 * barrier goes to the tail; a joiner runs as soon as the thread it waits
 * for has ended. On one virtual processor every interleaving is therefore
 * exact and repeatable. The thread that called mltp_init is the
 * initial user thread: it runs on virtual processor 0 only and takes its
 * turns in the same queue.
 *
 * Unbound threads are cooperative: a thread keeps its virtual processor
 * until it yields, waits (cond, barrier, join, a yielding lock) or ends.
 * Bound threads (mltp_create_bound) and plain kernel threads may call every
 * function below; where a user thread would wait in the run queue they wait
 * in the kernel (sched_yield or a futex) instead.
 *
 * errno and thread-locals: see the note at the top of weft.h (a user
 * thread may resume on another virtual processor after any call that can
 * switch; read errno right after the call that set it).
 *
 * Every function may also be used under weft_init (work stealing); the
 * ordering guarantees above then do not hold.
 */
#ifndef MLTP_H
#define MLTP_H

#include <stdint.h>

#include <weft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Runtime and threads
 * ------------------------------------------------------------------------ */

typedef struct mltp_thread mltp_thread_t; /* opaque; a weft_thread */
typedef void mltp_userf_t(void *p0);
typedef void mltp_vuserf_t(int nargs, void **args); /* a copy of the variadic arguments */
typedef void *mltp_buserf_t(void *p0);

/* Starts the runtime with `virtual_processors` kernel threads sharing one
 * FIFO run queue (0 = the CPUs in the affinity mask). WEFT_STACK_SIZE still
 * sets the default stack; WEFT_WORKERS and WEFT_SPAWN_POLICY do not apply.
 * The caller becomes the initial user thread (virtual processor 0).
 * Returns 0, EBUSY (already running: mltp_init or weft_init), EINVAL
 * (negative count), ENOMEM or EAGAIN (no memory / kernel threads). */
WEFT_API int mltp_init(int virtual_processors);

/* Waits until every thread (bound ones included) has finished, stops the
 * virtual processors and frees everything; mltp_init may then be called
 * again. Threads never joined are reclaimed here. Must be called by the
 * thread that called mltp_init. Returns 0, EPERM (another thread) or
 * EINVAL (not running). */
WEFT_API int mltp_finalize(void);

/* Creates an unbound thread running func(p0), queued at the tail of the run
 * queue (it runs when a virtual processor reaches it). The thread is
 * joinable: mltp_join releases its handle, else mltp_finalize does.
 * Callable from any thread after mltp_init. Returns NULL and sets errno on
 * failure: EINVAL func NULL, EAGAIN runtime not running, ENOMEM. */
WEFT_API mltp_thread_t *mltp_create(mltp_userf_t *func, void *p0);

/* As mltp_create, running func(nargs, args) where args is a copy of the
 * nargs pointer-sized (void *) variadic arguments, owned by the new thread
 * and freed when func returns. Errors as mltp_create; EINVAL nargs < 0. */
WEFT_API mltp_thread_t *mltp_vcreate(mltp_vuserf_t *func, int nargs, ...);

/* Creates a bound thread: a kernel thread of its own, started at once, with
 * a stack of stacksz bytes (0 = the default; smaller than 16 KiB is raised to
 * it). It runs func(p0), then term(result) if term is not NULL. It may block
 * freely. Joinable like the others. Returns NULL and sets errno on failure:
 * EINVAL func NULL or stacksz < 0, EAGAIN runtime not running or no kernel
 * thread, ENOMEM. */
WEFT_API mltp_thread_t *mltp_create_bound(mltp_buserf_t *func, void *p0, int stacksz,
                                          mltp_buserf_t *term);

/* Waits until t has finished (parks the user thread, or blocks the kernel
 * thread), then releases t. Returns 0, EINVAL (t NULL or already being
 * joined) or EDEADLK (t is the caller). A thread is joined at most once: t
 * is invalid after a successful join. */
WEFT_API int mltp_join(mltp_thread_t *t);

/* Lets the next ready thread run; the caller goes to the tail of the run
 * queue. Returns at once if nothing else is ready. From a bound or plain
 * kernel thread: sched_yield(). */
WEFT_API void mltp_yield(void);

/* Lets the next ready thread run; the caller goes to the head of the run
 * queue, so it runs again before every other ready thread. From a bound or
 * plain kernel thread: sched_yield(). */
WEFT_API void mltp_yield_to_first(void);

/* ------------------------------------------------------------------------
 * Synchronisation. The types are complete so they can live anywhere; their
 * fields are private. All-zero storage is an unlocked spin lock, an empty
 * condition; a barrier needs mltp_barrier_init. None needs destroying.
 * ------------------------------------------------------------------------ */

typedef struct mltp_lock {
    uint64_t mltp_private_[2];
} mltp_lock_t;
typedef struct mltp_barrier {
    uint64_t mltp_private_[4];
} mltp_barrier_t;
typedef struct mltp_cond {
    uint64_t mltp_private_[3];
} mltp_cond_t;

#define MLTP_LOCK_INIT                                                                             \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    } /* an unlocked MLTP_LOCK_SPIN lock */
#define MLTP_COND_INIT                                                                             \
    {                                                                                              \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* Lock kinds.
 *  MLTP_LOCK_SPIN: a ticket lock: waiters are served in arrival order and
 *    spin (pause) on their virtual processor. A user thread must not yield
 *    or wait while it holds one if another thread on the same virtual
 *    processor may want it (that one would spin forever).
 *  MLTP_LOCK_YIELD: one atomic try; a thread that fails yields to the tail
 *    of the run queue and tries again.
 *  MLTP_LOCK_YIELD_FRONT: as MLTP_LOCK_YIELD, yielding to the head: the
 *    next ready thread runs, then the waiter tries again before the others.
 *    After 16 failed tries in a row it yields once to the tail, so two
 *    such waiters cannot hand the CPU to each other forever while the
 *    holder waits behind them.
 * Yielding locks are not fair. From bound and plain kernel threads every
 * kind waits with pause and sched_yield. */
enum { MLTP_LOCK_SPIN, MLTP_LOCK_YIELD, MLTP_LOCK_YIELD_FRONT };

/* Initialises an unlocked lock of the given kind: 0, or EINVAL (l NULL or
 * unknown kind). Never on a lock in use. */
WEFT_API int mltp_lock_init(mltp_lock_t *l, int kind);
WEFT_API void mltp_lock(mltp_lock_t *l);   /* not recursive */
WEFT_API void mltp_unlock(mltp_lock_t *l); /* by the holder only */

/* Initialises a barrier for count threads: 0, or EINVAL (b NULL or count
 * < 1). Never on a barrier in use. */
WEFT_API int mltp_barrier_init(mltp_barrier_t *b, int count);

/* Waits until count threads have called it in this episode; then all of
 * them go on and the barrier is ready for the next episode. The last
 * arriver goes on at once; the others are woken in arrival order to the
 * tail of the run queue. User threads park; bound and plain kernel threads
 * sleep in the kernel. */
WEFT_API void mltp_barrier(mltp_barrier_t *b);

/* Initialises an empty condition: 0, or EINVAL (c NULL). */
WEFT_API int mltp_cond_init(mltp_cond_t *c);

/* Queues the caller on c, releases l (which it must hold), waits until a
 * signal or broadcast takes it from the queue, then takes l again. A signal
 * sent after the caller was queued is never lost; there are no spurious
 * wake-ups (re-check the predicate anyway: another thread may take l
 * first). User threads park; bound and plain kernel threads sleep. */
WEFT_API void mltp_cond_wait(mltp_cond_t *c, mltp_lock_t *l);

/* Moves the longest-waiting thread of c to the tail of the run queue; does
 * nothing if none waits. Any thread; l need not be held. */
WEFT_API void mltp_cond_signal(mltp_cond_t *c);

/* Moves every waiting thread of c to the tail of the run queue, in the
 * order they started waiting. */
WEFT_API void mltp_cond_broadcast(mltp_cond_t *c);

#ifdef __cplusplus
}
#endif
#endif /* MLTP_H */
