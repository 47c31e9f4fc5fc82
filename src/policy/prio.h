/* prio.h: the scheduling policies above the core's default pool: the
 * priority classes (pool_prio.c, with inheritance for sync/mutex.c) and the
 * seed's FIFO (pool_fifo.c). The core reaches them only through their
 * struct weft__pool_ops (sched/sched.h). */
#ifndef WEFT_POLICY_PRIO_H
#define WEFT_POLICY_PRIO_H

#include <stdint.h>

#include "sched/sched.h"

/* The default pool, work-stealing deques, as a plug-in (pool_ws.c): what
 * the core's inlined fast paths do, for the slow paths. */
extern const struct weft__pool_ops weft__pool_ws;
/* Serves WEFT__ATTN_WANT for the default pool: moves the older half of w's
 * yielded threads to its deque, where thieves find them (pool_ws.c). */
void weft__ws_share(struct weft__worker *w);
/* Steals from the other workers' deques for thief w (pool_ws.c). */
struct weft_thread *weft__ws_steal(struct weft__worker *w);

/* The seed's policy: one FIFO run queue shared by all workers (pool_fifo.c). */
extern const struct weft__pool_ops weft__pool_fifo;
/* Priority classes over the default pool (pool_prio.c). */
extern const struct weft__pool_ops weft__pool_prio;

/* Puts the priority pool in place of the default one, once, the first time
 * a priority other than NORMAL is used (pool_prio.c). 0, or ENOMEM. Any
 * thread. With another plug-in (mltp's FIFO) priorities are only stored. */
int weft__prio_activate(void);
/* t's class changed (inheritance): if it is queued, it moves to the list of
 * its new class. Any thread. */
void weft__prio_requeue(struct weft_thread *t);
/* Recomputes t's class from its priority and inherited class (t->boost),
 * and requeues it if the class changed. Any thread. */
void weft__prio_update(struct weft_thread *t);
/* Priority inheritance (sync/mutex.c): the thread with id `id` holds a
 * mutex on which a thread of class c waits: it runs at c at least until
 * weft__prio_disinherit, whether it is running, queued or parked (then
 * from its next wake-up on). Returns it if this raised it (the caller
 * follows the chain when it is parked on a mutex itself), else NULL. Any
 * thread. */
struct weft_thread *weft__prio_inherit(uint64_t id, int c);
/* The calling thread drops any class it inherited (it unlocked). */
void weft__prio_disinherit(void);
/* The highest class with a thread ready on w (NORMAL when only the default
 * pool's queues hold some), WEFT_PRIO_BACKGROUND - 1 when none: a hint. */
int weft__prio_top(struct weft__worker *w);
/* on = 1 while weft_finalize's initial thread waits for the others: its
 * yields then let lower classes run (pool_prio.c). */
void weft__prio_drain(int on);
#endif
