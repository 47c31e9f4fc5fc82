/* timer.h: the timer service: one lazily started kernel thread that fires deadlines for user threads, which cannot sleep in the kernel.
 *
 * A timer is caller-owned storage (typically on the stack of the thread
 * that waits). weft__timer_arm() links it into a min-heap of its clock;
 * the service thread sleeps on a futex until the earliest deadline of
 * either clock and runs fire() for every due timer, under the service
 * lock. weft__timer_cancel() takes the same lock, so once it returns fire
 * is neither running nor going to run, and the storage may be reused.
 * weft__timer_shutdown() stops the thread and frees the heaps; the next arm
 * starts a new thread.
 */
#ifndef WEFT_SYNC_TIMER_H
#define WEFT_SYNC_TIMER_H

#include <stddef.h>
#include <time.h>

struct weft__timer {
    struct timespec when; /* absolute deadline; set before arming, read-only while armed */
    int realtime;         /* 1: when is on CLOCK_REALTIME, 0: CLOCK_MONOTONIC; like when */
    size_t slot;          /* under the service lock: heap index + 1, 0 while not armed */
    void (*fire)(struct weft__timer *t); /* set before arming; runs on the service thread
                                            under the service lock: short, never blocks,
                                            must not arm or cancel */
};

/* Arms t (when, realtime and fire set by the caller). Any thread; may block
 * the calling kernel thread briefly on the service lock. Starts the service
 * thread on first use. Errors: ENOMEM (heap growth), EAGAIN (no thread). */
int weft__timer_arm(struct weft__timer *t);

/* Disarms t if it has not fired. Returns 1 if it was disarmed, 0 if it had
 * fired (or was never armed). Afterwards fire() is not running for t. */
int weft__timer_cancel(struct weft__timer *t);

/* Stops the service thread and frees its memory; timers still armed fire
 * first (there should be none: the runtime calls this from weft_finalize
 * after every user thread has finished). Call from a thread that is not a
 * user thread waiting on a timer. Idempotent. */
void weft__timer_shutdown(void);

#endif
