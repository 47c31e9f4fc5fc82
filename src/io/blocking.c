/* blocking.c: spare kernel threads that run blocking calls for parked user
 * threads (weft_blocking, and every weft_* call where io_uring is missing).
 *
 * The calling user thread parks; the commit of its park (after its context
 * is saved) queues the request; a spare kernel thread runs fn(arg), keeps
 * fn's errno, and readies the thread. The worker meanwhile runs others.
 * Spares are created on demand up to WEFT__SPARES_MAX, then requests wait in
 * FIFO order; idle spares stay for reuse until weft_finalize.
 *
 * This moves the call, not the worker: fn runs on another kernel thread
 * (its thread-local state is the spare's). Go instead hands the worker's
 * place to a spare and keeps the caller on its kernel thread; that needs
 * scheduler contexts detachable from kernel threads, which weft's worker 0
 * (the caller of weft_init) does not allow yet.
 */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "os/futex.h"
#include "sched/sched.h"

#define WEFT__SPARES_MAX 256

struct offload {
    void (*fn)(void *);
    void *arg;
    struct weft_thread *self; /* parked caller; readied once fn returned */
    int err;                  /* fn's errno */
    struct offload *next;     /* under spares.lock */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t more;          /* a request arrived, or stop */
    struct offload *head, *tail;  /* under lock */
    int nspares, nidle;           /* under lock */
    int nqueued;                  /* requests not yet taken; under lock */
    int stopping;                 /* under lock */
    pthread_t threads[WEFT__SPARES_MAX]; /* under lock */
    uint64_t handoffs;            /* under lock */
} sp = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };

static void *spare_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&sp.lock);
    for (;;) {
        while (!sp.head && !sp.stopping) {
            sp.nidle++;
            pthread_cond_wait(&sp.more, &sp.lock);
            sp.nidle--;
        }
        if (!sp.head)
            break;
        struct offload *o = sp.head;
        sp.head = o->next;
        sp.nqueued--;
        if (!sp.head)
            sp.tail = NULL;
        sp.handoffs++;
        pthread_mutex_unlock(&sp.lock);
        errno = 0;
        o->fn(o->arg);
        o->err = errno;
        struct weft_thread *t = o->self; /* o dies once t runs */
        weft__ready(t);
        pthread_mutex_lock(&sp.lock);
    }
    pthread_mutex_unlock(&sp.lock);
    return NULL;
}

/* Park commit: the caller's context is saved, the request may be taken. */
static int queue_request(void *arg, struct weft_thread *self)
{
    struct offload *o = arg;
    (void)self;
    pthread_mutex_lock(&sp.lock);
    o->next = NULL;
    if (sp.tail)
        sp.tail->next = o;
    else
        sp.head = o;
    sp.tail = o;
    sp.nqueued++;
    /* One spare per waiting request: an idle spare that was signalled but has
     * not run yet still counts as idle, so compare with the queue length. */
    if (sp.nqueued > sp.nidle && sp.nspares < WEFT__SPARES_MAX &&
        pthread_create(&sp.threads[sp.nspares], NULL, spare_main, NULL) == 0)
        sp.nspares++;
    pthread_cond_signal(&sp.more);
    int none = sp.nspares == 0;
    if (none) {
        /* no kernel thread could be made: run it here after all */
        sp.head = sp.tail = NULL;
        sp.nqueued = 0;
    }
    pthread_mutex_unlock(&sp.lock);
    if (none) {
        o->fn(o->arg);
        o->err = errno;
        return 0; /* resume at once */
    }
    return 1;
}

int weft__offload(void (*fn)(void *), void *arg)
{
    struct weft_thread *self = weft__self();
    if (!self) {
        fn(arg);
        return 0;
    }
    struct offload o = { fn, arg, self, 0, NULL };
    weft__park(queue_request, &o);
    errno = o.err;
    return 0;
}

void weft__spares_shutdown(void)
{
    pthread_mutex_lock(&sp.lock);
    sp.stopping = 1;
    pthread_cond_broadcast(&sp.more);
    int n = sp.nspares;
    pthread_mutex_unlock(&sp.lock);
    for (int i = 0; i < n; i++)
        pthread_join(sp.threads[i], NULL);
    pthread_mutex_lock(&sp.lock);
    sp.nspares = 0;
    sp.stopping = 0;
    pthread_mutex_unlock(&sp.lock);
}

uint64_t weft__spares_handoffs(void)
{
    pthread_mutex_lock(&sp.lock);
    uint64_t n = sp.handoffs;
    pthread_mutex_unlock(&sp.lock);
    return n;
}

int weft_blocking(void (*fn)(void *arg), void *arg)
{
    if (!fn)
        return EINVAL;
    return weft__offload(fn, arg);
}
