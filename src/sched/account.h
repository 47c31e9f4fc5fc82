/* account.h: per-thread CPU time and time in the current state.
 *
 * Precision: statistical, about one monitor period (1 ms, or the quantum if
 * shorter). The hot path pays one add per switch (the worker's tick) and no
 * clock read: the monitor thread (policy/monitor.c) wakes every period while
 * some worker runs user threads and charges the time since its last look to
 * the thread each worker runs then. A thread that ran the whole period is
 * charged exactly; the switches inside one period are sampled (the period
 * goes to the thread found running at its end), so threads that run for
 * much less than a period are charged in proportion to how often they are
 * found running, as a sampling profiler would. State changes are stamped
 * by the monitor when it sees a thread start or stop running, and by park
 * and ready themselves, on the monitor's clock (CLOCK_MONOTONIC); park and
 * ready read it as of the kernel's last tick (CLOCK_MONOTONIC_COARSE,
 * 1-4 ms), which costs a quarter of a precise read on their hot path, so
 * a state's time reads up to a tick long, never short.
 * A thread the monitor has never seen running reads 0 CPU time.
 */
#ifndef WEFT_SCHED_ACCOUNT_H
#define WEFT_SCHED_ACCOUNT_H

#include <stdatomic.h>
#include <stdint.h>

struct weft_thread;

/* Time t has run, the current stretch included (up to now), in ns. Any
 * thread may call it for a live descriptor; a racy snapshot. */
uint64_t weft__thread_cpu_ns(const struct weft_thread *t);

/* Time since t's last state change (it ran, was readied, parked), in ns;
 * 0 when no change was seen yet. Any thread; a racy snapshot. */
uint64_t weft__thread_state_ns(const struct weft_thread *t);

/* Stamps a state change of t now (park and ready call it; the monitor
 * stamps the changes it sees). */
void weft__acct_stamp(struct weft_thread *t);
/* The same at the monitor's clock reading now. */
void weft__acct_stamp_at(struct weft_thread *t, uint64_t now);
/* Charges t with dt ns of CPU time up to now (the monitor's looks). */
void weft__acct_charge(struct weft_thread *t, uint64_t dt, uint64_t now);
/* The monitor's period while it runs, 0 otherwise: a running thread's
 * current stretch counts up to one period (weft__thread_cpu_ns). */
extern _Atomic uint64_t weft__acct_period_ns;

#endif
