/* monitor.h: the monitor thread (design block in monitor.c). */
#ifndef WEFT_POLICY_MONITOR_H
#define WEFT_POLICY_MONITOR_H

#include <stdatomic.h>
#include <stdint.h>

#include "sched/bell.h" /* the words it sleeps on */

/* Starts the monitor (weft_init, once the workers run); quantum_ns <= 0:
 * no preemption, accounting only. 0 or an errno value. */
int weft__monitor_start(int64_t quantum_ns);
/* Stops it (weft_finalize, before any descriptor is released). */
void weft__monitor_stop(void);
/* The monitor's looks so far (one per wake-up): a statistic. */
extern _Atomic uint64_t weft__monitor_looks;
/* Called with each priority preemption request (preempt.c): the monitor
 * looks again WATCH_NS later and asks another worker if the request is
 * still pending (its worker's kernel thread off the CPU). Rings the monitor
 * unless it is watching already. Async-signal-safe. */
void weft__monitor_watch(void);
/* 1 while the monitor looks every WATCH_NS (a priority request was made in
 * the last WATCH_HOLD_NS); tests read it. */
extern _Atomic uint32_t weft__monitor_watching;

#endif
