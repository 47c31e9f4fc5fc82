/* trace.c: recording WEFT_TRACE events into the workers' rings (trace.h);
 * the rings are made and written out by observe/trace.c. */
#include "sched/trace.h"

#include <x86intrin.h>

#include "sched/sched.h"

int weft__trace_on;
struct weft__trace_ring *weft__trace_rings;

/* t's id as weft_thread_id gives it (drawn on first use; racing first
 * callers agree through the CAS). */
static uint64_t id_of(const struct weft_thread *t)
{
    uint64_t *p = (uint64_t *)&((struct weft_thread *)t)->id;
    uint64_t id = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (WEFT_LIKELY(id))
        return id;
    uint64_t fresh = atomic_fetch_add_explicit(&weft__rt.id_next, 1, memory_order_relaxed);
    if (__atomic_compare_exchange_n(p, &id, fresh, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return fresh;
    return id;
}

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
    e->id = t ? id_of(t) : 0;
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

uint64_t weft__trace_now(void)
{
    return __rdtsc() | 1;
}

void weft__trace_tasks(struct weft__worker *w, uint64_t since, unsigned n)
{
    struct weft__trace_ring *r = &weft__trace_rings[w->id];
    struct weft__trace_event *e = &r->ev[r->head & r->mask];
    r->head++;
    e->tsc = since;
    e->id = __rdtsc() - since;
    e->name = NULL;
    e->kind = WEFT__EV_TASK;
    e->arg = (int32_t)n;
}
