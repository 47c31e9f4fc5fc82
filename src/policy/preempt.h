/* preempt.h: preemption of user threads (design block in preempt.c). */
#ifndef WEFT_POLICY_PREEMPT_H
#define WEFT_POLICY_PREEMPT_H

#include <signal.h>
#include <stdint.h>

#include "base/base.h"

/* The signal preemption and rescues use: default-ignored, rarely used (as
 * Go). Every machine runs with it unblocked (machine.c). */
#define WEFT__PREEMPT_SIGNAL SIGURG

struct weft__worker;
struct weft_thread;

/* Causes of a request; RESCUE: the thread has blocked in the kernel past
 * the quantum while work waits, its worker goes to another kernel thread
 * (machine.c's rescue). */
enum { WEFT__PREEMPT_QUANTUM = 1, WEFT__PREEMPT_PRIO = 2, WEFT__PREEMPT_RESCUE = 3 };

/* Installs the preemption signal's handler and learns which code may be
 * interrupted (monitor start, quantum on). 0 when preemption is possible
 * in this process, -1 when not (a static libweft without its text bounds,
 * ThreadSanitizer): the runtime then stays cooperative. */
int weft__preempt_setup(void);
/* Restores the signal's previous disposition (monitor stop). */
void weft__preempt_teardown(void);
/* 1 while preemption is on (set up, quantum not off). */
int weft__preempt_on(void);
/* 1 when pc is in the runtime's own code (libweft's, or the drop-in's,
 * which is the same object): a signal there may have interrupted a holder
 * of the runtime's locks. 0 when preemption was never set up. Any thread,
 * async-signal-safe. */
int weft__preempt_pc_in_runtime(uintptr_t pc);

/* The calling kernel thread now runs w (it is the one to signal). */
void weft__preempt_own(struct weft__worker *w);
/* Releases what preemption keeps for w (its retry timer); w's teardown. */
void weft__preempt_forget(struct weft__worker *w);

/* Asks the thread running on v at `tick` to give up v (cause:
 * WEFT__PREEMPT_*): one signal, unless a request is pending already.
 * Any thread. */
void weft__preempt_request(struct weft__worker *v, uint64_t tick, int cause);
/* Signals v again if its request is still pending at the same tick (the
 * handler found the thread in code it must not interrupt); clears a stale
 * one. A kernel thread asleep in the kernel is signalled only for a rescue,
 * and only when rescue_due: a signal can preempt it only once it runs, and
 * it would break off a call that SA_RESTART does not restart (EINTR).
 * Returns 0 when none is pending, 1 while one is, 2 when it signalled a
 * rescue to a kernel thread asleep (the caller spaces the next). Monitor. */
int weft__preempt_retry(struct weft__worker *v, uint64_t tick, int rescue_due);

/* Turns v's pending request at `tick` into a rescue (it has waited long:
 * its thread is likely blocked in the kernel); keeps a machine idle for
 * it, again on each call while the rescue waits. 1 if it turned it now.
 * Monitor. */
int weft__preempt_escalate(struct weft__worker *v, uint64_t tick);
/* Signals every kernel thread that runs a rescued thread and is not
 * asleep in the kernel, so that it rejoins once back in its own code.
 * Monitor. */
void weft__preempt_poke_rescued(void);
/* 1 while some kernel thread runs a rescued thread (the monitor pokes
 * it). Monitor. */
int weft__preempt_rescues_out(void);
/* The calling kernel thread's rescued thread rejoins (machine.c's
 * settle): the monitor stops signalling it. */
void weft__preempt_rescue_done(void);

/* Spin locks (weft_spin, mltp's spin kind) held by the user thread that
 * runs on this kernel thread: it never switches while it holds one, so the
 * count is its own. While it is nonzero the handler refuses preemption, as
 * a kernel does under preempt_disable: a waiter that ran on the same worker
 * would spin for ever, with the holder queued behind it. The request waits
 * (weft__spin_deferred) and the unlock that ends the count honours it.
 * Signal-safe: the handler reads them on the same kernel thread. */
extern __thread unsigned weft__spin_held __attribute__((tls_model("initial-exec")));
extern __thread unsigned weft__spin_deferred __attribute__((tls_model("initial-exec")));

/* Runs in the preemption signal's handler after a preemption of a thread
 * interrupted in its own code (not in libc or the runtime), once that
 * thread runs again: the drop-in (src/posix) delivers its pending signals
 * there. NULL: none (native weft). Set before the runtime starts. */
extern void (*weft__preempt_hook)(void);

#if WEFT_POSIX
/* libweft-pthread's asynchronous cancellation (posix/async.c), run by the
 * handler on the user thread, in its frame, at each point where the thread
 * may be ended safely: once a request is taken (the thread was interrupted
 * in its own code, holds no spin lock; goes_on 0: it may be switched away
 * next), then when it goes on from the handler (goes_on 1: run again after
 * that switch, or not switched), and when a rescued thread back in its own
 * code has rejoined a worker (1). uc: the signal's context. Returns, or
 * ends the thread. Set before the runtime starts; NULL: none. */
extern void (*weft__preempt_cancel_hook)(void *uc, int goes_on);
#endif

/* Honours the request refused while spin locks were held (cooperatively:
 * the caller is libweft code at a scheduling point). */
void weft__preempt_deferred(void);

static inline void weft__spin_hold(void)
{
    weft__spin_held++;
}

static inline void weft__spin_release(void)
{
    /* A count that would wrap belongs to a lock taken on another kernel
     * thread (a holder that switched, which spin.c forbids): ignored. */
    if (weft__spin_held && --weft__spin_held == 0 && WEFT_UNLIKELY(weft__spin_deferred))
        weft__preempt_deferred();
}

/* A thread of class c became ready (from a worker, or from another kernel
 * thread: self NULL): if every worker runs a thread of a lower class, the
 * lowest is preempted. */
void weft__preempt_for_class(int c);

/* The priority pool's probe of a worker's highest ready class
 * (weft__prio_top), registered by the pool when it is activated: the
 * handler asks it whether a priority request is still wanted, without a
 * call from preempt.c into pool_prio.c (which calls into it). */
void weft__preempt_set_top(int (*top)(struct weft__worker *w));

#ifdef WEFT_TAIL_TRACE
/* The tail trace (docs/priorities.md, "Measuring the tail"): a build with
 * -DWEFT_TAIL_TRACE logs the preemption path's events (kind, worker, CPU,
 * one value) and appends them to the file $WEFT_TAIL_TRACE at teardown. */
void weft__tt(int kind, int wid, long a);
#endif

#endif
