/* trace.h: the scheduler's event recorder behind WEFT_TRACE.
 *
 * Each worker writes its events into a ring of its own (only the kernel
 * thread running the worker writes it: no atomics, no locks); a full ring
 * keeps the latest events and counts the others as dropped. weft_finalize
 * turns the rings into a Trace Event Format file (observe/trace.c).
 *
 * Cost when off: nothing on the hot paths. Tracing sets a gate bit on
 * every worker (WEFT__GATE_TRACE), which the yield, park and exit paths
 * already test (attn_any), so they take weft__pick_slow and exit_slow,
 * where the events are recorded; and it marks the spawn policy
 * (WEFT__POLICY_TRACED), which the spawn fast path already compares, so
 * spawns take spawn_any. The slow paths test weft__trace_on, a global
 * written only while no worker runs. Rejected: a flag test at every switch
 * (two instructions on the yield path), and patched jump sites (writable
 * text).
 */
#ifndef WEFT_SCHED_TRACE_H
#define WEFT_SCHED_TRACE_H

#include <stdint.h>

#include "base/base.h"

struct weft_thread;
struct weft__worker;

/* Event kinds. RUN begins a slice of the thread on the worker; PARK, EXIT
 * and HANDOFF end it (so does the next RUN). A time stamp costs about as
 * much as the rest of an event (rdtsc), so the usual pairs are one event:
 * a RUN says in its arg why the slice before it ended (WEFT__RUN_*). */
enum {
    WEFT__EV_RUN = 1, /* arg: WEFT__RUN_* bits | WEFT__WAIT_* << 8 for PARKED */
    WEFT__EV_PARK,    /* arg: WEFT__WAIT_* */
    WEFT__EV_EXIT,
    WEFT__EV_WAKE,  /* id: the thread made ready */
    WEFT__EV_SPAWN, /* id: the child */
    WEFT__EV_STEAL, /* id: the thread taken; arg: the victim worker */
    WEFT__EV_PREEMPT,
    WEFT__EV_HANDOFF, /* the worker goes to another kernel thread (weft_blocking) */
    WEFT__EV_TASK,    /* a zero-wait task starts on the scheduler context */
};

/* RUN's arg: the thread before it exited or parked (and on what), or the
 * thread that runs was spawned just now (work-first: it replaces the
 * spawner's slice). */
#define WEFT__RUN_SPAWNED 1
#define WEFT__RUN_EXITED  2
#define WEFT__RUN_PARKED  4

struct weft__trace_event {
    uint64_t tsc;     /* time stamp counter */
    uint64_t id;      /* weft_thread_id of the thread concerned */
    const char *name; /* its attr.name (read at finalize) */
    uint32_t kind;    /* WEFT__EV_* */
    int32_t arg;
};

struct weft__trace_ring {
    struct weft__trace_event *ev; /* mask + 1 events */
    uint64_t head;                /* events ever recorded; owner worker only */
    uint64_t mask;
    int32_t pending; /* owner only: ORed into the next RUN's arg */
} __attribute__((aligned(64)));

/* 1 while tracing; written by weft_init and weft_finalize only, when no
 * worker runs. */
extern int weft__trace_on WEFT_INTERNAL;
extern struct weft__trace_ring *weft__trace_rings WEFT_INTERNAL; /* one per worker */

/* Records an event about t (may be NULL) on worker w's ring. */
void weft__trace(struct weft__worker *w, uint32_t kind, const struct weft_thread *t, int32_t arg);
/* The departing thread exits (WEFT__RUN_EXITED) or parks (WEFT__RUN_PARKED
 * | kind << 8): said by the next RUN on w, or, if the worker switches to
 * its scheduler instead, by weft__trace_leave. */
void weft__trace_pending(struct weft__worker *w, int32_t why);
void weft__trace_leave(struct weft__worker *w, const struct weft_thread *self);

#endif
