/* blocking.c: weft_blocking, any blocking call without stalling a worker.
 *
 * The call runs on the calling user thread's own kernel thread and stack
 * while the worker's place goes to another kernel thread (a "machine"), so
 * the worker's other user threads keep running: the hand-off of scheduler
 * activations and of Go's system-call entry. The mechanism lives
 * with the machines (policy/machine.c).
 */
#include <errno.h>

#include "policy/machine.h"
#include "sched/sched.h"
#include "thread/thread.h"
#include "weft.h"

int weft_blocking(void (*fn)(void *arg), void *arg)
{
    if (!fn)
        return EINVAL;
    struct weft__worker *w = weft__tls_worker;
    if (w && !w->current)
        return EPERM; /* a task (sched.h: weft__in_task) must not wait */
    if (!w || !w->current) {
        fn(arg); /* a plain kernel thread, or a bound thread: it may block */
        return 0;
    }
    struct weft__blocking_call c = { fn, arg };
    return weft__handoff_call(weft__blocking_run, &c); /* an unwind out of fn aborts there */
}
