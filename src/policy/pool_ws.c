/* pool_ws.c: the default pool, work stealing, as a plug-in: a Chase-Lev
 * deque per worker (LIFO for the owner, FIFO for thieves) and the worker's
 * own yield FIFO (sched.h).
 *
 * The fast paths (weft__make_ready, weft__pick_default, weft_yield, the
 * spawn and exit) inline these operations behind one test, the worker's
 * GATE_POOL bit (rt.pool NULL). Everything else reaches them through
 * weft__pool(), like any other pool; the priority pool (pool_prio.c) keeps
 * them as its NORMAL class.
 */
#include "base/rand.h"
#include "policy/prio.h"
#include "sched/events.h"
#include "sched/sched.h"

/* Ready: the deque; the pinned initial thread never goes there (thieves
 * would take it) but to worker 0's yield FIFO. */
static void ws_push(struct weft__worker *w, struct weft_thread *t)
{
    if (t->pinned) {
        if (w->id == 0)
            weft__yq_push(w, t);
        else
            weft__mail(weft__worker0(), t);
        return;
    }
    weft__deque_push(&w->dq, t);
}

static void ws_push_yield(struct weft__worker *w, struct weft_thread *t)
{
    weft__yq_push(w, t);
}

static void ws_push_front(struct weft__worker *w, struct weft_thread *t)
{
    weft__yq_push_head(w, t);
}

static struct weft_thread *ws_pop(struct weft__worker *w)
{
    return weft__pick_default(w);
}

struct weft_thread *weft__ws_steal(struct weft__worker *w)
{
    int n = weft__rt.nworkers;
    int start = (int)(weft__rand_next(&w->rng) % (uint64_t)n);
    for (int i = 0; i < n; i++) {
        struct weft__worker *v = weft__rt.workers[(start + i) % n];
        if (v == w)
            continue;
        struct weft_thread *t = weft__deque_steal_retry(&v->dq);
        if (t) {
            __atomic_store_n(&w->nsteals, w->nsteals + 1, __ATOMIC_RELAXED);
            if (WEFT_UNLIKELY(weft__trace_on))
                weft__trace_steal(w, t, v->id);
            /* More left there and someone asleep: pass the wake on. */
            if (weft__deque_size_hint(&v->dq) > 0)
                weft__maybe_wake();
            return t;
        }
    }
    return NULL;
}

/* Nothing in any deque: ask owners with yielded threads to share. */
static void ask_yielded(struct weft__worker *w)
{
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        if (v != w && weft__yq_hint(v) &&
            !(atomic_load_explicit(&v->attn, memory_order_relaxed) & WEFT__ATTN_WANT))
            atomic_fetch_or_explicit(&v->attn, WEFT__ATTN_WANT, memory_order_relaxed);
    }
}

static struct weft_thread *ws_steal(struct weft__worker *w)
{
    struct weft_thread *t = weft__ws_steal(w);
    if (!t)
        ask_yielded(w);
    return t;
}

void weft__ws_share(struct weft__worker *w)
{
    /* Hand over the older half of the non-pinned yielded threads. */
    unsigned n = 0;
    struct weft_thread *tail = w->yq;
    if (tail) {
        struct weft_thread *t = tail;
        do {
            n++;
            t = t->next;
        } while (t != tail);
    }
    unsigned give = (n + 1) / 2;
    /* Pop all n in order; keep (re-queue) the pinned and the younger. */
    while (n--) {
        struct weft_thread *t = weft__yq_pop(w);
        if (give && !t->pinned) {
            weft__deque_push(&w->dq, t);
            give--;
        } else {
            weft__yq_push(w, t);
        }
    }
    weft__maybe_wake();
}

static int ws_has_ready(struct weft__worker *w)
{
    return weft__deque_size_hint(&w->dq) > 0 || w->yq;
}

/* Others' yield FIFOs do not count: only their owners run them (or hand
 * them over on request, waking us through weft__maybe_wake). */
static int ws_has_work(struct weft__worker *w)
{
    (void)w;
    for (int i = 0; i < weft__rt.nworkers; i++)
        if (weft__deque_size_hint(&weft__rt.workers[i]->dq) > 0)
            return 1;
    return 0;
}

const struct weft__pool_ops weft__pool_ws = {
    .name = "ws",
    .push = ws_push,
    .push_yield = ws_push_yield,
    .push_front = ws_push_front,
    .pop = ws_pop,
    .steal = ws_steal,
    .has_work = ws_has_work,
    .has_ready = ws_has_ready,
    .share = weft__ws_share,
};
