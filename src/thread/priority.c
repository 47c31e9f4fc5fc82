/* priority.c: weft_set_priority and weft_priority (the classes themselves
 * are a pool: policy/pool_prio.c). */
#include <errno.h>

#include "policy/prio.h"
#include "sched/sched.h"
#include "thread/thread.h"

int weft_set_priority(weft_thread *t, int prio)
{
    if (prio < WEFT_PRIO_BACKGROUND || prio > WEFT_PRIO_URGENT)
        return EINVAL;
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w ? w->current : weft__tls_user();
    if (!t)
        t = self;
    if (!t)
        return EPERM;
    if (prio != WEFT_PRIO_NORMAL && weft__nworkers_running()) {
        int rc = weft__prio_activate();
        if (rc != 0)
            return rc;
    }
    int old = weft__cls(t);
    __atomic_store_n(&t->prio, (int8_t)prio, __ATOMIC_RELAXED);
    weft__prio_update(t);
    /* Lowered ourselves below a ready thread: let it run. */
    if (t == self && w && weft__cls(t) < old && weft__prio_top(w) > weft__cls(t))
        weft_yield();
    return 0;
}

int weft_priority(const weft_thread *t)
{
    if (!t)
        t = weft_self();
    return t ? __atomic_load_n(&t->prio, __ATOMIC_RELAXED) : WEFT_PRIO_NORMAL;
}
