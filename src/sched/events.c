/* events.c: the out-of-line parts of recording WEFT_TRACE events (events.h);
 * the rings are made and written out by observe/trace.c. */
#include "sched/events.h"

int weft__trace_on;
struct weft__trace_ring *weft__trace_rings;

uint64_t weft__trace_id_refill(struct weft__trace_ring *r)
{
    /* relaxed: ids need only be unique (weft_thread_id draws from the same
     * counter). */
    uint64_t first =
        atomic_fetch_add_explicit(&weft__id_next, WEFT__TRACE_ID_BLOCK, memory_order_relaxed);
    r->id_next = first + 1;
    r->id_end = first + WEFT__TRACE_ID_BLOCK;
    return first;
}

void weft__trace_leave(struct weft__worker *w, const struct weft_thread *self)
{
    struct weft__trace_ring *r = weft__trace_ring(w);
    int32_t why = r->pending;
    r->pending = 0;
    if (why & WEFT__RUN_EXITED)
        weft__trace(w, WEFT__EV_EXIT, self, 0);
    else if (why & WEFT__RUN_PARKED)
        weft__trace(w, WEFT__EV_PARK, self, why >> WEFT__RUN_WAIT_SHIFT);
    else if (why & WEFT__RUN_PREEMPTED)
        weft__trace(w, WEFT__EV_PREEMPT, self, 0);
}
