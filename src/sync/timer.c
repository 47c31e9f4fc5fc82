/* timer.c: the timer service thread and its two deadline heaps (CLOCK_MONOTONIC and CLOCK_REALTIME).
 *
 * One thread, started by the first arm, sleeps in FUTEX_WAIT_BITSET with
 * an absolute deadline on the clock of the nearer of the two heap tops, so
 * a change of the realtime clock moves realtime deadlines with it. An arm
 * that becomes the new top of its heap rings the bell (a futex word) to
 * re-plan. A binary min-heap of pointers keeps arm and cancel O(log n); the
 * alternatives were a sorted list (O(n) arms with thousands of timed
 * waiters) and an intrusive pairing heap (no allocation, but cancel needs
 * parent links and the code is three times longer). The heap array grows
 * by doubling and is freed at shutdown.
 */
#include "sync/timer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/base.h"
#include "os/futex.h"
#include "os/kthread.h"

struct heap {
    struct weft__timer **v; /* under service.lock */
    size_t n;               /* under service.lock */
    size_t cap;             /* under service.lock */
};

static struct {
    pthread_mutex_t lock;
    struct heap heap[2];   /* [0] CLOCK_MONOTONIC, [1] CLOCK_REALTIME; under lock */
    pthread_t thread;      /* under lock */
    int running;           /* under lock: the thread exists */
    int stopping;          /* under lock: shutdown asked the thread to leave */
    _Atomic uint32_t bell; /* futex word the thread sleeps on; bumped under lock */
} service = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void heap_set(struct heap *h, size_t i, struct weft__timer *t)
{
    h->v[i] = t;
    t->slot = i + 1;
}

static void sift_up(struct heap *h, size_t i)
{
    struct weft__timer *t = h->v[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ts_before(&t->when, &h->v[p]->when))
            break;
        heap_set(h, i, h->v[p]);
        i = p;
    }
    heap_set(h, i, t);
}

static void sift_down(struct heap *h, size_t i)
{
    struct weft__timer *t = h->v[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && ts_before(&h->v[c + 1]->when, &h->v[c]->when))
            c++;
        if (!ts_before(&h->v[c]->when, &t->when))
            break;
        heap_set(h, i, h->v[c]);
        i = c;
    }
    heap_set(h, i, t);
}

static void heap_remove(struct heap *h, struct weft__timer *t)
{
    size_t i = t->slot - 1;
    WEFT_ASSERT(i < h->n && h->v[i] == t);
    t->slot = 0;
    h->n--;
    if (i == h->n)
        return;
    struct weft__timer *moved = h->v[h->n];
    heap_set(h, i, moved);
    sift_down(h, i);
    sift_up(h, moved->slot - 1);
}

static void ring(void)
{
    atomic_fetch_add_explicit(&service.bell, 1, memory_order_relaxed);
    weft__futex_wake(&service.bell, 1);
}

/* Fires every due timer of heap k; under service.lock. */
static void fire_due(int k)
{
    struct heap *h = &service.heap[k];
    struct timespec now;
    clock_gettime(k ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
    while (h->n > 0 && !ts_before(&now, &h->v[0]->when)) {
        struct weft__timer *t = h->v[0];
        heap_remove(h, t);
        t->fire(t);
    }
}

static int64_t ns_until(const struct timespec *when, int realtime)
{
    struct timespec now;
    clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
    return (int64_t)(when->tv_sec - now.tv_sec) * (int64_t)WEFT_NS_PER_S +
           (when->tv_nsec - now.tv_nsec);
}

static void *service_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&service.lock);
    while (!service.stopping) {
        fire_due(0);
        fire_due(1);
        int k = -1;
        for (int i = 0; i < 2; i++) {
            struct heap *h = &service.heap[i];
            if (h->n > 0 &&
                (k < 0 || ns_until(&h->v[0]->when, i) < ns_until(&service.heap[k].v[0]->when, k)))
                k = i;
        }
        struct timespec when = { 0, 0 };
        if (k >= 0)
            when = service.heap[k].v[0]->when;
        /* relaxed: the bell is read and bumped under the lock; the futex
         * compares it again in the kernel, so a ring after the unlock
         * makes the wait return at once. */
        uint32_t b = atomic_load_explicit(&service.bell, memory_order_relaxed);
        pthread_mutex_unlock(&service.lock);
        if (k >= 0)
            weft__futex_wait_abs(&service.bell, b, &when, k);
        else
            weft__futex_wait(&service.bell, b, NULL);
        pthread_mutex_lock(&service.lock);
    }
    pthread_mutex_unlock(&service.lock);
    return NULL;
}

/* Starts the thread with every signal blocked (signals are the
 * application's, not ours). Under service.lock. */
static int start(void)
{
    int r = weft__kthread_start(&service.thread, NULL, service_main, NULL, "weft-timer");
    if (r != 0)
        return EAGAIN;
    service.running = 1;
    return 0;
}

int weft__timer_arm(struct weft__timer *t)
{
    struct heap *h = &service.heap[t->realtime ? 1 : 0];
    int r = 0;
    pthread_mutex_lock(&service.lock);
    if (!service.running && (r = start()) != 0)
        goto out_unlock;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 16;
        struct weft__timer **v = realloc(h->v, cap * sizeof *v);
        if (!v) {
            r = ENOMEM;
            goto out_unlock;
        }
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n] = t;
    t->slot = ++h->n;
    sift_up(h, h->n - 1);
    if (t->slot == 1)
        ring();
out_unlock:
    pthread_mutex_unlock(&service.lock);
    return r;
}

int weft__timer_cancel(struct weft__timer *t)
{
    int r = 0;
    pthread_mutex_lock(&service.lock);
    if (t->slot) {
        heap_remove(&service.heap[t->realtime ? 1 : 0], t);
        r = 1;
    }
    pthread_mutex_unlock(&service.lock);
    return r;
}

void weft__timer_shutdown(void)
{
    pthread_mutex_lock(&service.lock);
    if (service.running) {
        service.stopping = 1;
        ring();
        pthread_t th = service.thread;
        pthread_mutex_unlock(&service.lock);
        pthread_join(th, NULL);
        pthread_mutex_lock(&service.lock);
        service.running = 0;
        service.stopping = 0;
    }
    for (int k = 0; k < 2; k++) {
        struct heap *h = &service.heap[k];
        while (h->n > 0) {
            struct weft__timer *t = h->v[0];
            heap_remove(h, t);
            t->fire(t);
        }
        free(h->v);
        h->v = NULL;
        h->cap = 0;
    }
    pthread_mutex_unlock(&service.lock);
}
