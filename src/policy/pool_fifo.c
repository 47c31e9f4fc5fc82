/* pool_fifo.c: the seed's scheduling policy as a pool plug-in: one FIFO run
 * queue shared by every worker (virtual processor).
 *
 * Ready and created threads join the tail, a yielding thread the tail (or
 * the head, for yield-to-first); every worker takes from the head. There is
 * nothing to steal: the queue is common. The pinned initial thread may wait
 * in the queue too (so a single virtual processor interleaves it exactly
 * like the others), but only worker 0 takes it; other workers pass over it.
 * One lock guards the queue: the policy is the seed's, and so is its cost.
 */
#include "policy/prio.h"
#include "sched/sched.h"

static struct {
    weft__lock lock;
    struct weft__tqueue tq; /* under lock */
    _Atomic size_t n;       /* under lock; read racily as a hint */
} q;

static void fifo_init(void)
{
    q.tq.head = q.tq.tail = NULL;
    atomic_store_explicit(&q.n, 0, memory_order_relaxed);
}

/* Queues t at the tail, or at the head (yield-to-first). */
static void push_at(struct weft_thread *t, int head)
{
    weft__lock_acquire(&q.lock);
    if (head)
        weft__tq_push_front(&q.tq, t);
    else
        weft__tq_push(&q.tq, t);
    atomic_store_explicit(&q.n, atomic_load_explicit(&q.n, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    weft__lock_release(&q.lock);
}

static void push_tail(struct weft__worker *w, struct weft_thread *t)
{
    (void)w;
    push_at(t, 0);
}

static void push_head(struct weft__worker *w, struct weft_thread *t)
{
    (void)w;
    push_at(t, 1);
}

static struct weft_thread *pop_head(struct weft__worker *w)
{
    if (atomic_load_explicit(&q.n, memory_order_relaxed) == 0)
        return NULL;
    weft__lock_acquire(&q.lock);
    struct weft_thread *t = q.tq.head;
    if (t && t->pinned && w->id != 0)
        t = t->next; /* the initial thread waits for worker 0 */
    if (t) {
        weft__tq_remove(&q.tq, t);
        atomic_store_explicit(&q.n, atomic_load_explicit(&q.n, memory_order_relaxed) - 1,
                              memory_order_relaxed);
    }
    weft__lock_release(&q.lock);
    return t;
}

static int fifo_has_work(struct weft__worker *w)
{
    size_t n = atomic_load_explicit(&q.n, memory_order_relaxed);
    if (n == 0)
        return 0;
    if (w->id == 0 || n > 1)
        return 1;
    /* one thread queued: the pinned initial thread is not ours to run */
    weft__lock_acquire(&q.lock);
    int mine = q.tq.head && !q.tq.head->pinned;
    weft__lock_release(&q.lock);
    return mine;
}

const struct weft__pool_ops weft__pool_fifo = {
    .name = "fifo",
    .init = fifo_init,
    .destroy = fifo_init,
    .push = push_tail,
    .push_yield = push_tail,
    .push_front = push_head,
    .pop = pop_head,
    .steal = NULL,
    .has_work = fifo_has_work,
    .has_ready = fifo_has_work, /* the queue is every worker's own */
};
