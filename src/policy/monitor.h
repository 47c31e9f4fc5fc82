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
/* Before memory that held t's descriptor goes back to the program (a
 * stack it gave, weft__spawn_on): the monitor lets go of t. Any thread. */
struct weft_thread;
void weft__monitor_forget(struct weft_thread *t);
/* The monitor's looks so far (one per wake-up): a statistic. */
extern _Atomic uint64_t weft__monitor_looks;

#endif
