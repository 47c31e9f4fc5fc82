/* task.h: zero-wait tasks (design block in task.c): the task record, the
 * per-worker task state, and what split.c and runtime/ use of them. */
#ifndef WEFT_TASK_TASK_H
#define WEFT_TASK_TASK_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "weft.h"

struct weft__worker;

/* A task: one cache line from a per-worker record cache. Who owns it, by
 * state: waiting (count > 0): whoever holds its handle, to continue it;
 * ready: the deque, the child-first slot or the injection list holding it;
 * running: the worker running fn; then freed to that worker's cache. */
struct weft_task {
    _Atomic uint32_t count; /* continuations still to come; each one decrements
                                (acq_rel), the one that reaches 0 readies it */
    uint32_t spare;         /* unused */
    weft_task_fn fn;        /* immutable after create */
    void *arg;              /* immutable after create */
    struct weft_task *next; /* link in the overflow or injection list; that list's owner */
} __attribute__((aligned(WEFT_CACHELINE)));

_Static_assert(sizeof(struct weft_task) == WEFT_CACHELINE, "a task record is one cache line");

/* A record of the task cache for split.c's requests (any type that fits in
 * one line); NULL: out of memory. w: the caller's worker or NULL. */
void *weft__task_rec_alloc(struct weft__worker *w);
void weft__task_rec_free(struct weft__worker *w, void *rec);

/* Runtime-wide bookkeeping of work that weft_finalize waits for: a ready
 * or running task, a split-phase call in flight. Each opens one unit where
 * it starts and closes it where it ends (per-worker counters). */
void weft__task_open(struct weft__worker *w);
void weft__task_close(struct weft__worker *w);

/* One continuation to t from the caller's worker w (NULL: off the
 * workers, the runtime known to run): weft_task_continue without checks. */
int weft__task_send(struct weft__worker *w, weft_task *t);

/* Counts a split-phase call issued on w (weft_stats). */
void weft__task_count_call(struct weft__worker *w);

/* runtime/: set up per-worker state for n workers (0 or ENOMEM); release
 * everything, unfired tasks included (after the workers stopped). */
int weft__task_init(int nworkers);
void weft__task_fini(void);

/* The units opened and closed so far. weft_finalize reads every close
 * count (these and the threads' exits) before every open count, so that a
 * unit opened by one it saw closed is seen too: a zero is a true zero. */
uint64_t weft__task_closed(void);
uint64_t weft__task_opened(void);

/* 1 when w has tasks ready that only its scheduler context runs. */
int weft__task_local(struct weft__worker *w);

/* Plain kernel threads now inside a task call; finalize, once stopping,
 * waits for none to be left (as for spawns). */
int64_t weft__task_kernel_calls(void);

struct weft__task_counters {
    uint64_t run, stolen, calls;
};
void weft__task_counters(struct weft__task_counters *out);

extern const struct weft__sched_task weft__task_sched;

#endif
