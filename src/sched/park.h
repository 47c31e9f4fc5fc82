/* park.h: the one park/ready primitive every waiting object is built on.
 *
 * A user thread waits by "check, enqueue, park": it decides under the wait
 * object's own lock that it must wait, then calls weft__park(commit, arg).
 * The scheduler saves the thread's context, switches to another thread or to
 * the worker's scheduler, and only then, on the new stack, calls
 * commit(arg, self). commit is where the wait object publishes the thread
 * (typically: unlock the object's lock). Because it runs after the context is
 * saved, a waker that finds the thread may weft__ready() it at once: there is
 * no window in which a ready thread is still running on its stack.
 * commit returns 1 to stay parked, 0 to resume the thread at once (the
 * condition became true meanwhile).
 *
 * weft__ready(t) makes a parked thread runnable again; it may be called from
 * any thread (user thread, worker, plain kernel thread) exactly once per park.
 */
#ifndef WEFT_SCHED_PARK_H
#define WEFT_SCHED_PARK_H

#include <stdint.h>

struct weft_thread;

typedef int (*weft__commit_fn)(void *arg, struct weft_thread *self);

/* The calling user thread, or NULL on a plain kernel thread (including a
 * worker's scheduler context and bound threads, which block in the kernel). */
struct weft_thread *weft__self(void);

/* Parks the calling user thread (must not be NULL self) until weft__ready.
 * commit may be NULL (then the thread stays parked). */
void weft__park(weft__commit_fn commit, void *arg);

/* Makes t runnable. From a worker it goes to that worker's pool; from any
 * other kernel thread through the injection queue (the waking is reliable). */
void weft__ready(struct weft_thread *t);

#endif
