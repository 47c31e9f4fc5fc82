/* account.h: per-thread CPU time and time in the current state.
 *
 * Stand-in until the accounting of the priority work lands (a per-worker
 * tick and the monitor thread keep these statistically); that change
 * replaces this file. Until then both read 0, which weft_dump and
 * weft_thread_info_get report as such.
 */
#ifndef WEFT_SCHED_ACCOUNT_H
#define WEFT_SCHED_ACCOUNT_H

#include <stdint.h>

struct weft_thread;

/* Time t has run so far, its current stretch included; any thread. */
static inline uint64_t weft__thread_cpu_ns(const struct weft_thread *t)
{
    (void)t;
    return 0;
}

/* Time since t last changed state (ran, parked, became ready); any thread. */
static inline uint64_t weft__thread_state_ns(const struct weft_thread *t)
{
    (void)t;
    return 0;
}

#endif
