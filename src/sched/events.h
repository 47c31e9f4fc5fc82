/* events.h: the scheduler's event recorder behind WEFT_TRACE.
 *
 * Each worker writes its events into a ring of its own (only the kernel
 * thread running the worker writes it: no atomics, no locks); a full ring
 * keeps the latest events and counts the others as dropped. weft_finalize
 * turns the rings into a Trace Event Format file (observe/trace.c).
 *
 * Cost when off: nothing on the hot paths. Tracing sets a gate bit on
 * every worker (WEFT__GATE_TRACE), which the yield, park and exit paths
 * already test (attn_any), so they take weft__pick_slow and exit_attn,
 * where the events are recorded; and it marks the spawn policy
 * (WEFT__POLICY_TRACED), which the spawn fast path tests first, so that
 * a traced spawn reaches spawn_fast_traced (or the plan, spawn_slow) in a
 * few instructions. The slow paths test weft__trace_on, a global
 * written only while no worker runs. Rejected: a flag test at every switch
 * (two instructions on the yield path), and patched jump sites (writable
 * text).
 *
 * Cost when on: a spawn-per-call program switches every few tens of
 * nanoseconds, so the usual spawn and exit have traced copies of their fast
 * paths (thread.c: spawn_fast_traced, exit_attn) instead of the general slow
 * paths, and an event is inline code: one time-stamp-counter read, the
 * thread's id (drawn at the spawn from a block of the worker's own: no
 * shared line) and two stores into a 16-byte record. A time stamp is the
 * costliest part (rdtsc: about 10 ns on a virtualised AMD EPYC, though it
 * overlaps with the switch around it), so the usual pairs are one event: a
 * RUN says in its arg why the slice before it ended (WEFT__RUN_*), and the
 * spawn instant of a work-first spawn is the child's RUN. A record keeps
 * the counter's low 52 bits; the conversion rebuilds the rest from the
 * reading at weft_finalize (it assumes no worker goes 2^51 ticks, days,
 * between two events it keeps). Thread names cost a second record, only
 * for named threads.
 */
#ifndef WEFT_SCHED_EVENTS_H
#define WEFT_SCHED_EVENTS_H

#include <stdint.h>
#include <x86intrin.h>

#include "base/base.h"
#include "desc/desc.h"
#include "sched/ids.h"

/* Event kinds. RUN begins a slice of the thread on the worker; PARK, EXIT,
 * PREEMPT and HANDOFF end it (so does the next RUN). */
enum {
    WEFT__EV_RUN = 1, /* arg: WEFT__RUN_* bits | WEFT__WAIT_* << WEFT__RUN_WAIT_SHIFT */
    WEFT__EV_PARK,    /* arg: WEFT__WAIT_* */
    WEFT__EV_EXIT,
    WEFT__EV_WAKE,    /* id: the thread made ready */
    WEFT__EV_SPAWN,   /* id: the child, queued (help-first, or a spawn off the fast path) */
    WEFT__EV_STEAL,   /* id: the thread taken | the victim worker << WEFT__TRACE_VICTIM_SHIFT */
    WEFT__EV_PREEMPT, /* the thread is preempted and the worker goes to its scheduler */
    WEFT__EV_HANDOFF, /* the worker goes to another kernel thread (weft_blocking) */
    WEFT__EV_TASK,    /* a zero-wait task starts on the scheduler context */
    WEFT__EV_NAME,    /* no event: the name (id field) of the thread whose id is in the
                         time stamp's place; follows the RUN or SPAWN of a named thread */
};

/* RUN's arg: the thread before it exited, parked (and on what) or was
 * preempted, or the thread that runs was spawned just now (work-first: it
 * replaces the spawner's slice). */
#define WEFT__RUN_SPAWNED    1
#define WEFT__RUN_EXITED     2
#define WEFT__RUN_PARKED     4
#define WEFT__RUN_PREEMPTED  8
#define WEFT__RUN_WAIT_SHIFT 4

/* A record's first word: tsc << TSC_SHIFT | arg << ARG_SHIFT | kind. */
#define WEFT__TRACE_KIND_MASK    0xfu
#define WEFT__TRACE_ARG_SHIFT    4
#define WEFT__TRACE_ARG_MASK     0xffu
#define WEFT__TRACE_TSC_SHIFT    12
#define WEFT__TRACE_VICTIM_SHIFT 48 /* STEAL's id word: ids stay below 2^48 */

/* Records per worker (a power of two): the latest are kept, 4 MiB. */
#define WEFT__TRACE_RING ((uint64_t)1 << 18)
/* Thread ids a worker takes from weft__id_next at a time. */
#define WEFT__TRACE_ID_BLOCK 1024

struct weft__trace_rec {
    uint64_t stamp; /* see above; NAME: the thread's id << TSC_SHIFT | NAME */
    uint64_t id;    /* weft_thread_id of the thread concerned; NAME: its name */
};

struct weft__trace_ring {
    struct weft__trace_rec *ev; /* WEFT__TRACE_RING records; immutable while tracing */
    uint64_t head;              /* records ever written; owner worker only */
    uint64_t id_next, id_end;   /* the worker's block of ids [next, end); owner only */
    int32_t pending;            /* owner only: ORed into the next RUN's arg */
} WEFT_ALIGNED;

/* 1 while tracing; written by weft_init and weft_finalize only, when no
 * worker runs. */
extern int weft__trace_on WEFT_INTERNAL;
extern struct weft__trace_ring *weft__trace_rings WEFT_INTERNAL; /* one per worker */

/* A fresh block of ids for r, and its first. */
uint64_t weft__trace_id_refill(struct weft__trace_ring *r);

WEFT_INLINE struct weft__trace_ring *weft__trace_ring(const struct weft__worker *w)
{
    return w->trace;
}

/* An id for a thread being spawned on r's worker, which nobody else can
 * name yet: the spawn stores it with a plain store. */
WEFT_INLINE uint64_t weft__trace_new_id(struct weft__trace_ring *r)
{
    if (WEFT_UNLIKELY(r->id_next == r->id_end))
        return weft__trace_id_refill(r);
    return r->id_next++;
}

/* Appends one record (its time stamp taken now) to r. */
WEFT_INLINE void weft__trace_put(struct weft__trace_ring *r, uint32_t kind, uint32_t arg,
                                 uint64_t id)
{
    uint64_t h = r->head;
    struct weft__trace_rec *e = &r->ev[h & (WEFT__TRACE_RING - 1)];
    r->head = h + 1;
    e->stamp = __rdtsc() << WEFT__TRACE_TSC_SHIFT |
               (uint64_t)(arg & WEFT__TRACE_ARG_MASK) << WEFT__TRACE_ARG_SHIFT | kind;
    e->id = id;
}

/* The name record of a named thread t (id: its id). */
WEFT_INLINE void weft__trace_name(struct weft__trace_ring *r, const struct weft_thread *t,
                                  uint64_t id)
{
    const char *name = t->name;
    if (WEFT_LIKELY(!name))
        return;
    uint64_t h = r->head;
    struct weft__trace_rec *e = &r->ev[h & (WEFT__TRACE_RING - 1)];
    r->head = h + 1;
    e->stamp = id << WEFT__TRACE_TSC_SHIFT | WEFT__EV_NAME;
    e->id = (uint64_t)(uintptr_t)name;
}

/* A RUN of t on r's worker, why the slice before it ended (WEFT__RUN_*),
 * without the pending reason: for paths where none can be pending. */
WEFT_INLINE void weft__trace_run_as(struct weft__trace_ring *r, const struct weft_thread *t,
                                    uint32_t why, uint64_t id)
{
    weft__trace_put(r, WEFT__EV_RUN, why, id);
    weft__trace_name(r, t, id);
}

/* Records an event about t (may be NULL) on worker w's ring; w NULL (a
 * kernel thread without a worker, which has no ring): nothing. A RUN takes
 * the reason weft__trace_pending left. */
WEFT_INLINE void weft__trace(struct weft__worker *w, uint32_t kind, const struct weft_thread *t,
                             int32_t arg)
{
    if (!w)
        return;
    struct weft__trace_ring *r = weft__trace_ring(w);
    uint64_t id = t ? weft__thread_id_of(t) : 0;
    if (kind == WEFT__EV_RUN) {
        arg |= r->pending;
        r->pending = 0;
    }
    weft__trace_put(r, kind, (uint32_t)arg, id);
    if (t && (kind == WEFT__EV_RUN || kind == WEFT__EV_SPAWN))
        weft__trace_name(r, t, id);
}

/* A steal of t from worker victim by w. */
WEFT_INLINE void weft__trace_steal(struct weft__worker *w, const struct weft_thread *t, int victim)
{
    struct weft__trace_ring *r = weft__trace_ring(w);
    weft__trace_put(r, WEFT__EV_STEAL, 0,
                    weft__thread_id_of(t) | (uint64_t)victim << WEFT__TRACE_VICTIM_SHIFT);
}

/* The departing thread exits (WEFT__RUN_EXITED), parks (WEFT__RUN_PARKED
 * | kind << WEFT__RUN_WAIT_SHIFT) or is preempted (WEFT__RUN_PREEMPTED):
 * said by the next RUN on w, or, if the worker switches to its scheduler
 * instead, by weft__trace_leave. */
WEFT_INLINE void weft__trace_pending(struct weft__worker *w, int32_t why)
{
    weft__trace_ring(w)->pending = why;
}

void weft__trace_leave(struct weft__worker *w, const struct weft_thread *self);

#endif
