/* monitor.h: the monitor thread (design block in monitor.c). */
#ifndef WEFT_SCHED_MONITOR_H
#define WEFT_SCHED_MONITOR_H

#include <stdatomic.h>
#include <stdint.h>

/* 1 while the monitor sleeps because every worker slept (seq_cst: a Dekker
 * pair with each worker's `sleeping` flag, see monitor.c). */
extern _Atomic uint32_t weft__monitor_idle;

/* Starts the monitor (weft_init, once the workers run); quantum_ns <= 0:
 * no preemption, accounting only. 0 or an errno value. */
int weft__monitor_start(int64_t quantum_ns);
/* Stops it (weft_finalize, before any descriptor is released). */
void weft__monitor_stop(void);
/* The monitor's looks so far (one per wake-up): a statistic. */
extern _Atomic uint64_t weft__monitor_looks;
/* Bumped (and futex-woken) to end the monitor's period early. */
extern _Atomic uint32_t weft__monitor_poke;
/* Makes the monitor look now (a preemption request, or one that had to
 * wait for a safe point). Async-signal-safe. */
void weft__monitor_poke_now(void);

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
