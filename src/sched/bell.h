/* bell.h: the monitor's bells: the two words the monitor thread
 * (policy/monitor.c) sleeps on, rung from below it: a worker that leaves
 * its idle sleep (weft__monitor_kick), a preemption that must be looked at
 * now (weft__monitor_poke_now). The words live in the core, so that the
 * core and the preemption reach the monitor without calling up into it.
 */
#ifndef WEFT_SCHED_BELL_H
#define WEFT_SCHED_BELL_H

#include <stdatomic.h>
#include <stdint.h>

/* 1 while the monitor sleeps because every worker slept (seq_cst: a Dekker
 * pair with each worker's `sleeping` flag, see policy/monitor.c). */
extern _Atomic uint32_t weft__monitor_idle;

/* Bumped (and futex-woken) to end the monitor's period early. */
extern _Atomic uint32_t weft__monitor_poke;

/* Makes the monitor look now (a preemption request, or one that had to
 * wait for a safe point). Async-signal-safe. */
void weft__monitor_poke_now(void);

/* Priority preemption requests made so far, and 1 while the monitor looks
 * every 0.1 ms after one (policy/monitor.c, Watch); seq_cst: a Dekker
 * pair between weft__monitor_watch and the monitor. */
extern _Atomic uint32_t weft__monitor_asks;
extern _Atomic uint32_t weft__monitor_watching;

/* Counts a priority preemption request and rings the monitor unless it is
 * watching already, so that it looks again soon and re-aims the request if
 * its worker does not answer. Async-signal-safe. */
void weft__monitor_watch(void);

/* Ends the monitor's idle sleep: a worker woke up. */
void weft__monitor_wake(void);

/* Called by a worker that has just left its idle sleep (after clearing its
 * `sleeping` flag, seq_cst). */
static inline void weft__monitor_kick(void)
{
    /* seq_cst: pairs with the monitor's store of idle before it reads the
     * workers' sleeping flags. */
    if (atomic_load_explicit(&weft__monitor_idle, memory_order_seq_cst))
        weft__monitor_wake();
}

#endif
