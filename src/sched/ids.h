/* ids.h: thread ids (weft_thread_id): one runtime-wide counter, drawn
 * from on first use, or in blocks by a traced worker (sched/events.h). */
#ifndef WEFT_SCHED_IDS_H
#define WEFT_SCHED_IDS_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"
#include "desc/desc.h"

/* The next thread id; weft_init starts it at 1 (the initial thread's). */
extern _Atomic uint64_t weft__id_next WEFT_INTERNAL;

/* t's id, as weft_thread_id gives it: drawn on first use from one
 * runtime-wide counter (a spawn only zeroes the field, so a reused slot
 * never keeps its old id; a traced spawn gives one from its worker's block
 * of the counter, sched/events.h); unique for the life of the runtime. Racing first
 * callers agree through the CAS. Async-signal-safe (the overflow report
 * and the trace hooks read it too). Hidden from ThreadSanitizer: the
 * preemption monitor and the registry (observe/registry.c) read the ids of
 * slots that a spawn may be reusing, whose plain store of 0 races with them
 * by design, as their own racy reads do. */
__attribute__((no_sanitize("thread"))) static inline uint64_t
weft__thread_id_of(const struct weft_thread *t)
{
    uint64_t *p = (uint64_t *)&((struct weft_thread *)t)->id;
    /* relaxed: the id is the only datum; the CAS decides who sets it. */
    uint64_t id = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (WEFT_LIKELY(id))
        return id;
    uint64_t fresh = atomic_fetch_add_explicit(&weft__id_next, 1, memory_order_relaxed);
    if (__atomic_compare_exchange_n(p, &id, fresh, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return fresh;
    return id; /* another caller won; `fresh` is simply never used */
}

#endif
