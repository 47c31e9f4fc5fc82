/* machine.h: kernel threads that run workers, and the hand-off of a worker
 * around a blocking call (design block in machine.c). */
#ifndef WEFT_POLICY_MACHINE_H
#define WEFT_POLICY_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "desc/desc.h"

/* Notes the signal mask every machine runs with: weft_init's caller's
 * (a program that leaves a signal to one thread of its own, blocked
 * elsewhere, keeps it so), with the preemption signal unblocked. Before
 * the first machine starts, on weft_init's caller. */
void weft__machines_init(void);
/* Starts a machine that runs worker w (workers 1..n-1 at weft_init). */
int weft__machine_start(struct weft__worker *w);
/* Waits until n started machines entered their workers. */
void weft__machines_wait_up(uint32_t n);
/* Ends every machine: after finalize stopped the workers' loops. */
void weft__machines_shutdown(void);
/* Blocking calls handed off, and run in place for want of a kernel thread. */
void weft__machines_counters(uint64_t *handoffs, uint64_t *inplace);
/* Spare machines (beyond the workers' own) running now. */
int weft__machines_spares(void);
/* Soft cap on spare machines (default 1,024; n <= 0 restores it): past it,
 * a spare machine ends once its call returns instead of going idle. For
 * tests of the overflow path. */
void weft__machines_set_max(int n);

/* Scheduler side: worker w's scheduler context returns to this machine's
 * home (reason: WEFT__HOME_LOOP_ENDED when finalize stopped w, others in
 * machine.c); returns when it is resumed later. */
#define WEFT__HOME_LOOP_ENDED ((uintptr_t)0)
void weft__sched_go_home(struct weft__worker *w, uintptr_t reason);
/* Scheduler side: hands worker 0 back to the main kernel thread, which
 * claimed it (WEFT__ATTN_RECLAIM). */
void weft__sched_release(struct weft__worker *w);
/* Entry of a worker's scheduler context, which weft_init makes on the
 * worker's stack slot: the core's worker loop, released to the main kernel
 * thread when it claims the worker, and home once finalize stops it. */
void weft__sched_entry(void *data);

/* Runs fn(arg) on the calling user thread's kernel thread while its worker
 * is handed to another machine; where no machine can be had, in place,
 * stalling the worker (one notice on stderr, the first time). errno is
 * fn's. Caller: a user thread on a worker. */
int weft__handoff_call(void (*fn)(void *), void *arg);

/* Rescue of a worker whose user thread blocks in the kernel (design block
 * in machine.c). weft__rescue_lend: from the preemption signal's handler
 * on w's kernel thread, whose thread w->current blocks in a system call:
 * w goes to an idle machine, the thread goes on without a worker; 0, or -1
 * when no machine is idle. weft__rescue_settle: on that kernel thread, the
 * thread rejoins the scheduler; returns 0 when there was no rescue, 1 when
 * the thread runs on a worker again on this kernel thread, 2 once it has
 * been resumed by a worker (possibly on another kernel thread).
 * weft__rescued: 1 while the calling kernel thread's thread is rescued.
 * weft__machines_reserve: makes sure a machine is idle (monitor). */
int weft__rescue_lend(struct weft__worker *w);
/* weft__rescue_lend by the calling user thread itself, for good (the
 * drop-in's threads bound by their name): its worker goes to an idle or
 * new machine, it goes on without one on this kernel thread until
 * weft__rescue_settle. 0, or an errno (no machine): then it keeps its
 * worker. Caller: a user thread on a worker. */
int weft__rescue_keep(void);
int weft__rescue_settle(void);
int weft__rescued(void);
void weft__machines_reserve(void);

#endif
