/* account.c: the per-thread CPU and state records (account.h), which park
 * and ready stamp and the monitor (policy/monitor.c) charges. */
#include "sched/account.h"

#include <stdatomic.h>

#include "base/base.h"
#include "desc/desc.h"
#include "sched/sched.h"

_Atomic uint64_t weft__acct_period_ns;

/* Makes t's record its own (a reused slot starts afresh). relaxed: the
 * record is a statistic; a racing reset loses at most one charge. */
WEFT_RACY static void own_record(struct weft_thread *t, uint64_t now)
{
    /* The id's load here, not in weft__thread_id_of, which is not RACY
     * where it is not inlined (ThreadSanitizer's debug builds): a running
     * thread's slot was written by its spawner with no order to us. */
    uint64_t id = __atomic_load_n(&t->id, __ATOMIC_RELAXED);
    if (!id)
        id = weft__thread_id_of(t);
    if (atomic_load_explicit(&t->acct_id, memory_order_relaxed) != id) {
        atomic_store_explicit(&t->cpu_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&t->charged_at, now, memory_order_relaxed);
        atomic_store_explicit(&t->state_since, now, memory_order_relaxed);
        atomic_store_explicit(&t->acct_id, id, memory_order_relaxed);
    }
}

WEFT_RACY void weft__acct_stamp_at(struct weft_thread *t, uint64_t now)
{
    own_record(t, now);
    atomic_store_explicit(&t->state_since, now, memory_order_relaxed);
}

WEFT_RACY void weft__acct_charge(struct weft_thread *t, uint64_t dt, uint64_t now)
{
    own_record(t, now);
    atomic_store_explicit(&t->cpu_ns, atomic_load_explicit(&t->cpu_ns, memory_order_relaxed) + dt,
                          memory_order_relaxed);
    atomic_store_explicit(&t->charged_at, now, memory_order_relaxed);
}

void weft__acct_stamp(struct weft_thread *t)
{
    /* coarse: park and ready stamp on every wait, two per hand-off (see
     * account.h, Precision) */
    weft__acct_stamp_at(t, weft__now_coarse_ns());
}

/* 1 while t's record is its own. */
WEFT_RACY static int record_valid(const struct weft_thread *t)
{
    uint64_t id = __atomic_load_n(&t->id, __ATOMIC_RELAXED);
    return id && atomic_load_explicit(&t->acct_id, memory_order_relaxed) == id;
}

WEFT_RACY uint64_t weft__thread_cpu_ns(const struct weft_thread *t)
{
    if (!t || !record_valid(t))
        return 0;
    uint64_t cpu = atomic_load_explicit(&t->cpu_ns, memory_order_relaxed);
    /* The stretch since the last charge, while it still runs: at most a
     * period, which the next look charges. */
    struct weft__worker *w = __atomic_load_n(&t->worker, __ATOMIC_RELAXED);
    uint64_t period = atomic_load_explicit(&weft__acct_period_ns, memory_order_relaxed);
    if (w && __atomic_load_n(&w->current, __ATOMIC_RELAXED) == t && period) {
        uint64_t now = weft__now_ns();
        uint64_t at = atomic_load_explicit(&t->charged_at, memory_order_relaxed);
        if (now > at && now - at <= period)
            cpu += now - at;
    }
    return cpu;
}

WEFT_RACY uint64_t weft__thread_state_ns(const struct weft_thread *t)
{
    if (!t || !record_valid(t))
        return 0;
    uint64_t since = atomic_load_explicit(&t->state_since, memory_order_relaxed);
    uint64_t now = weft__now_ns();
    return now > since ? now - since : 0;
}
