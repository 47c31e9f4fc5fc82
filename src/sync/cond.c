/* cond.c: weft_cond, on the condition queue it shares with mltp's conds (cond.h): a FIFO of waiter records; signal wakes the oldest, timed waits race their timer against the signal on the record's word.
 *
 * wait: check that the caller owns the mutex, queue a record under the
 * cond's lock, unlock the mutex, wait on the record, relock. A user thread's
 * timed wait arms a timer (timer.c) first, so that a failure to arm returns
 * before anything changed; a kernel thread's deadline is its futex's.
 * signal: pop records under the lock until one is claimed (WAITING →
 * WAKING); a record whose waiter timed out is skipped, so a signal always
 * goes to a waiter that will report it (none is lost to a timeout). The
 * claimed one is finished after the lock is dropped. broadcast claims the
 * whole queue under the lock and finishes the chain outside it.
 * A waiter that timed out takes the lock and unlinks itself if a signaler
 * has not already popped it.
 * Rejected: requeueing broadcast waiters onto the mutex (wait morphing):
 * it avoids a herd on the mutex but couples the two objects' queues and
 * clashes with timed waiters, whose timer would then fire on a record
 * linked in another object's queue.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>

#include "sched/sched.h"
#include "sync/cond.h"
#include "sync/mutex.h"
#include "sync/timer.h"
#include "sync/wait.h"
#include "weft.h"

/* Hand-off between two running threads takes ~0.1-1 µs: spin that long
 * before parking (only with more than one worker). */
#define COND_SPIN_NS 3000u

WEFT__STORAGE(impl, struct weft__condq, weft_cond, weft_private_)

/* A waiter and its timer, on the waiting thread's stack. */
struct timed_waiter {
    struct weft__waiter w;    /* linked in the cond's queue; see wait.h */
    struct weft__timer timer; /* armed only for a user thread's timed wait; the
                                 service owns it between arm and cancel */
};

/* Timer callback (service thread, under the service lock). */
static void expire(struct weft__timer *t)
{
    struct timed_waiter *tw =
        (struct timed_waiter *)((char *)t - offsetof(struct timed_waiter, timer));
    weft__waiter_expire(&tw->w);
}

int weft_cond_init(weft_cond *c)
{
    return weft__init_zeroed(c, sizeof *c);
}

int weft_cond_destroy(weft_cond *c)
{
    if (!c)
        return EINVAL;
    return weft__condq_busy(impl(c)) ? EBUSY : 0;
}

static int cond_wait_until(weft_cond *c, weft_mutex *m, const struct timespec *abstime)
{
    if (!c || !m)
        return EINVAL;
    if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)WEFT_NS_PER_S))
        return EINVAL;
    if (!weft__mutex_held(m, weft__sync_owner()))
        return EPERM;
    if (abstime && weft__deadline_passed(abstime, 1))
        return ETIMEDOUT;
    if (weft__in_task())
        return EPERM; /* a task must not wait (sched.h) */

    struct weft__condq *cq = impl(c);
    struct timed_waiter tw;
    weft__waiter_init(&tw.w, WEFT__WAIT_COND);
    int user_timer = abstime && tw.w.thread;
    if (user_timer) {
        tw.timer.when = *abstime;
        tw.timer.realtime = 1;
        tw.timer.slot = 0;
        tw.timer.fire = expire;
        int r = weft__timer_arm(&tw.timer);
        if (r)
            return r;
    }

    weft__condq_push(cq, &tw.w);
    weft_mutex_unlock(m);

    uint32_t v = weft__waiter_block(&tw.w, weft__spin_budget(&cq->spin_hint, COND_SPIN_NS),
                                    user_timer ? NULL : abstime, 1);
    weft__spin_learn(&cq->spin_hint, tw.w.spin);
    int r = 0;
    if (v == WEFT__WORD_TIMEDOUT) {
        weft__condq_forget(cq, &tw.w);
        r = ETIMEDOUT;
    }
    if (user_timer)
        weft__timer_cancel(&tw.timer);
    weft_mutex_lock(m);
    return r;
}

int weft_cond_wait(weft_cond *c, weft_mutex *m)
{
    return cond_wait_until(c, m, NULL);
}

int weft_cond_timedwait(weft_cond *c, weft_mutex *m, const struct timespec *abstime)
{
    if (!abstime)
        return EINVAL;
    return cond_wait_until(c, m, abstime);
}

int weft_cond_signal(weft_cond *c)
{
    if (!c)
        return EINVAL;
    weft__condq_signal(impl(c));
    return 0;
}

int weft_cond_broadcast(weft_cond *c)
{
    if (!c)
        return EINVAL;
    weft__condq_broadcast(impl(c));
    return 0;
}
