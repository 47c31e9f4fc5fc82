/* bell.c: the monitor's bells (bell.h). */
#include "sched/bell.h"

#include "os/futex.h"

_Atomic uint32_t weft__monitor_idle;
_Atomic uint32_t weft__monitor_poke;
_Atomic uint32_t weft__monitor_asks;
_Atomic uint32_t weft__monitor_watching;

void weft__monitor_poke_now(void)
{
    /* release: a monitor that reads this ring before its sleep sees what
     * the ringer stored before it (weft__monitor_watch's count); pairs with
     * the acquire load in policy/monitor.c. The monitor re-reads everything
     * else it acts on. */
    atomic_fetch_add_explicit(&weft__monitor_poke, 1, memory_order_release);
    weft__futex_wake(&weft__monitor_poke, 1);
}

void weft__monitor_watch(void)
{
    /* seq_cst, both: the Dekker pair with the monitor, which stores
     * watching = 0 and then reads the count (policy/monitor.c, Watch). */
    atomic_fetch_add_explicit(&weft__monitor_asks, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&weft__monitor_watching, memory_order_seq_cst))
        weft__monitor_poke_now();
}

void weft__monitor_wake(void)
{
    uint32_t one = 1;
    /* acq_rel: the waker's state before the monitor's next look. */
    if (atomic_compare_exchange_strong_explicit(&weft__monitor_idle, &one, 0, memory_order_acq_rel,
                                                memory_order_relaxed))
        weft__futex_wake(&weft__monitor_idle, 1);
}
