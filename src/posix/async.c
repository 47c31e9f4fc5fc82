/* async.c: asynchronous cancellation of user threads (PTHREAD_CANCEL_ASYNCHRONOUS).
 *
 * Design
 * ------
 * glibc cancels such a thread with a signal of its own (SIGCANCEL) whose
 * handler unwinds the thread from wherever it was interrupted. Here the
 * one code that interrupts a user thread where it runs is weft's
 * preemption handler (policy/preempt.c), which already knows whether the
 * interrupted point may be left: the program's own code, no spin lock
 * held, never libc, the loader, libstdc++ or libweft, whose locks or state
 * the thread may hold. At such points it calls the hook below (preempt.h):
 * when it takes a request, when a thread it preempted runs again (still in
 * the handler's frame, before it returns to its own code), and when a
 * rescued thread back in its own code has rejoined a worker. The hook
 * ends the thread if it has asynchronous cancellation enabled and pending:
 * it restores the interrupted signal mask (the handler's would stay with
 * the kernel thread, a worker, once the frame is abandoned) and runs
 * pthread_exit(PTHREAD_CANCELED) on the thread's stack: the C cleanup
 * buffers by jumps into their frames, then weft's forced unwind, which
 * crosses the signal frame through glibc's __restore_rt (it has unwind
 * information for that) as glibc's own cancellation does.
 *
 * pthread_cancel asks for a preemption of the worker that runs the target
 * (weft__posix_async_kick), with the quantum's cause: a worker is
 * otherwise signalled only when a thread waits behind its own. A refused
 * request (the target in libc or in the runtime) stays pending and is
 * retried by the handler (its retry timer, then the monitor), so the
 * cancellation acts at the next point in the program's own code. A target
 * that does not run: a preempted one (pt.preempted, set by the hook when
 * the handler may switch it away) is ended when it runs again (above); a
 * parked one's wait is broken off as for deferred cancellation, and the
 * waits that are cancellation points act; one that is between two workers
 * is looked for again a few times. One that is ready on the canceller's
 * own worker otherwise (it switched away inside the drop-in, which is not
 * a call POSIX allows with the type set: only the cancellation calls are
 * async-cancel-safe) gets the worker by a yield, and the canceller, queued
 * there, gets it preempted in its own code. Yielding for a preempted
 * target would give a quantum to every thread that computes there first
 * (0.1-0.3 s per pthread_cancel among 12 such threads on one worker). A
 * target of that second kind that computes on another, otherwise idle,
 * worker is ended at its next preemption, or at its next cancellation
 * point. Cancellation is acted upon once: pthread_exit sets the thread's
 * `exiting`, after which the hook does nothing (cleanup handlers and
 * destructors are not cancelled again).
 * Rejected: a signal of the drop-in's own (one more signal taken from the
 * program, and a handler that would repeat the core's test of the
 * interrupted point); cancelling anywhere, as glibc does (a thread ended
 * inside malloc or a runtime lock would deadlock the others, which here
 * share its worker).
 */
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "policy/preempt.h"
#include "posix/posix.h"
#include "sched/sched.h"

/* Looks for a target that runs nowhere at the moment (see the design
 * block), a short pause apart (the first may follow a yield). */
#define KICK_TRIES    8
#define KICK_PAUSE_NS 20000

/* rt_sigprocmask without the drop-in's or glibc's wrappers: in the
 * handler's frame. */
static void set_kernel_mask(const sigset_t *set)
{
    long r;
    __asm__ volatile("mov %5, %%r10\n\tsyscall"
                     : "=a"(r)
                     : "a"((long)SYS_rt_sigprocmask), "D"((long)SIG_SETMASK), "S"(set), "d"(0L),
                       "r"((long)(_NSIG / 8))
                     : "rcx", "r10", "r11", "memory");
    (void)r;
}

/* 1 when p is to be ended now: asynchronous cancellation enabled and
 * requested, not acting on one already. The thread's own fields (or a
 * handler on its stack). */
static int due(const struct pt *p)
{
    return p && __atomic_load_n(&p->cancel_type, __ATOMIC_SEQ_CST) == PTHREAD_CANCEL_ASYNCHRONOUS &&
           weft__posix_cancel_acts(p);
}

/* The preemption handler's hook (preempt.h), on the interrupted thread. */
static void on_preempt(void *ucv, int goes_on)
{
    struct pt *p = weft__posix_self_if_any();
    if (!p)
        return;
    /* seq_cst, cleared before `cancel` is read: a pthread_cancel that saw
     * it set (and did not look further) stored `cancel` before (kick) */
    atomic_store(&p->preempted, !goes_on);
    if (!due(p))
        return;
    set_kernel_mask(&((ucontext_t *)ucv)->uc_sigmask);
    pthread_exit(PTHREAD_CANCELED);
}

__attribute__((constructor)) static void async_load(void)
{
    weft__preempt_cancel_hook = on_preempt;
}

/* A preemption request to the worker that runs p now; 1 if one runs it.
 * Racy reads of the owner's fields (as signal.c's poke), made a pair: the
 * tick (bumped whenever a thread leaves w) is the same before and after
 * p was seen current, so the request names p's run, not a later one's
 * (a request at a stale tick is dropped by the handler). */
static int kick_once(struct pt *p)
{
    struct weft_thread *t = (struct weft_thread *)p->h;
    struct weft__worker *w = t ? __atomic_load_n(&t->worker, __ATOMIC_RELAXED) : NULL;
    if (!w)
        return 0;
    for (;;) {
        /* acquire: keeps the three reads in this order (the owner's plain
         * stores pair with nothing: x86 keeps them in program order) */
        uint64_t tick = __atomic_load_n(&w->tick, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&w->current, __ATOMIC_ACQUIRE) != t)
            return 0;
        if (__atomic_load_n(&w->tick, __ATOMIC_ACQUIRE) == tick) {
            weft__preempt_request(w, tick, WEFT__PREEMPT_QUANTUM);
            return 1;
        }
    }
}

void weft__posix_async_point(struct pt *p)
{
    if (due(p))
        pthread_exit(PTHREAD_CANCELED);
}

void weft__posix_async_kick(struct pt *p)
{
    if (!weft__preempt_on())
        return; /* cooperative runtime: acts as deferred */
    for (int i = 0; i < KICK_TRIES; i++) {
        if (atomic_load(&p->done) || atomic_load(&p->parked) || kick_once(p))
            return;
        /* preempted: ended when it runs again (seq_cst: see on_preempt) */
        if (atomic_load(&p->preempted))
            return;
        /* on our worker (one worker, say), queued behind us: our turn in
         * its queue gets it preempted once it runs in its own code */
        struct weft_thread *t = (struct weft_thread *)p->h;
        struct weft__worker *me = weft__tls_worker;
        if (i == 0 && me && t && __atomic_load_n(&t->worker, __ATOMIC_RELAXED) == me)
            weft_yield();
        /* a pause that keeps the worker: a sleep would queue the canceller
         * behind the threads that compute there, a quantum each */
        for (uint64_t t0 = weft__now_ns(); weft__now_ns() - t0 < KICK_PAUSE_NS;)
            weft__cpu_relax();
    }
}
