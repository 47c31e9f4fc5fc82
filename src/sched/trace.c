/* trace.c: recording WEFT_TRACE events into the workers' rings (trace.h);
 * the rings are made and written out by observe/trace.c. */
#include "sched/trace.h"

#include <x86intrin.h>

#include "sched/sched.h"

int weft__trace_on;
struct weft__trace_ring *weft__trace_rings;

void weft__trace(struct weft__worker *w, uint32_t kind, const struct weft_thread *t, int32_t arg)
{
    if (!w)
        return; /* a kernel thread without a worker has no ring */
    struct weft__trace_ring *r = &weft__trace_rings[w->id];
    if (kind == WEFT__EV_RUN) {
        arg |= r->pending;
        r->pending = 0;
    }
    struct weft__trace_event *e = &r->ev[r->head & r->mask];
    r->head++;
    e->tsc = __rdtsc();
    e->id = t ? weft__thread_id_of(t) : 0;
    e->name = t ? t->name : NULL;
    e->kind = kind;
    e->arg = arg;
}

void weft__trace_pending(struct weft__worker *w, int32_t why)
{
    weft__trace_rings[w->id].pending = why;
}

void weft__trace_leave(struct weft__worker *w, const struct weft_thread *self)
{
    struct weft__trace_ring *r = &weft__trace_rings[w->id];
    int32_t why = r->pending;
    r->pending = 0;
    if (why & WEFT__RUN_EXITED)
        weft__trace(w, WEFT__EV_EXIT, self, 0);
    else if (why & WEFT__RUN_PARKED)
        weft__trace(w, WEFT__EV_PARK, self, why >> 8);
}
