/* mltp_wait.c: parking and waking the records of mltp_wait.h (design there). */
#include "compat/mltp_wait.h"

#include <sched.h>

#include "os/futex.h"
#include "sched/park.h"

void weft__mltp_waiter_init(struct weft__mltp_waiter *r)
{
    r->next = NULL;
    r->thread = weft__self();
    atomic_init(&r->word, WEFT__MW_WAITING);
}

/* Runs on the next context once the waiter's context is saved: from here a
 * waker that takes the lock may ready the waiter. */
static int unlock_commit(void *arg, struct weft_thread *self)
{
    (void)self;
    weft__lock_release(arg);
    return 1;
}

void weft__mltp_block(struct weft__mltp_waiter *r, weft__lock *lock)
{
    if (r->thread) {
        weft__park(unlock_commit, lock);
        return;
    }
    weft__lock_release(lock);
    /* acquire: pairs with the waker's release stores of WOKEN and DONE. */
    uint32_t v = atomic_load_explicit(&r->word, memory_order_acquire);
    while (v == WEFT__MW_WAITING) {
        weft__futex_wait(&r->word, WEFT__MW_WAITING, NULL);
        v = atomic_load_explicit(&r->word, memory_order_acquire);
    }
    /* The waker is between its futex wake and its last store: a few
     * instructions, unless it was preempted. */
    for (unsigned i = 0; v != WEFT__MW_DONE; i++) {
        if (i & 63)
            weft__cpu_relax();
        else
            sched_yield();
        v = atomic_load_explicit(&r->word, memory_order_acquire);
    }
}

void weft__mltp_wake(struct weft__mltp_waiter *r)
{
    struct weft_thread *t = r->thread;
    if (t) {
        weft__ready(t);
        return;
    }
    /* release: what the waker did before the wake is visible to the
     * sleeper; pairs with the acquire loads in weft__mltp_block. */
    atomic_store_explicit(&r->word, WEFT__MW_WOKEN, memory_order_release);
    weft__futex_wake(&r->word, 1);
    /* release: the last touch of the record; the sleeper may return. */
    atomic_store_explicit(&r->word, WEFT__MW_DONE, memory_order_release);
}

void weft__mltp_wake_list(struct weft__mltp_waiter *r)
{
    while (r) {
        struct weft__mltp_waiter *next = r->next; /* r may be gone once woken */
        weft__mltp_wake(r);
        r = next;
    }
}
