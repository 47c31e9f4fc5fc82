/* registry.c: finds and reads the live user threads for weft_dump and
 * weft_thread_info_get (the design block is in observe/observe.h). */
#include "observe/observe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/account.h"
#include "sched/sched.h"
#include "thread/thread.h"

/* Reads what the snapshot needs of t with no lock: t may be recycled under
 * our feet (observe.h, the design block), so the sanitizers must not
 * take these deliberate races for bugs; the validation below is what makes
 * them harmless. */
__attribute__((no_sanitize("address", "thread"))) static int read_desc(const struct weft_thread *t,
                                                                       struct weft__obs_thread *o,
                                                                       struct weft_thread *self,
                                                                       int want_done)
{
    struct weft_thread *m = (struct weft_thread *)t;
    uintptr_t j0 = __atomic_load_n((uintptr_t *)&m->join, __ATOMIC_ACQUIRE);
    if (j0 == WEFT__J_FREED || (j0 == WEFT__J_DONE && !want_done))
        return ESRCH;
    if (!__atomic_load_n(&m->fn, __ATOMIC_RELAXED) && !m->pinned)
        return ESRCH; /* a slot that never held a thread */
    o->t = t;
    o->id = weft__thread_id_of(m);
    o->name = __atomic_load_n(&m->name, __ATOMIC_RELAXED);
    o->wait = __atomic_load_n(&m->wait, __ATOMIC_RELAXED);
    o->sp = __atomic_load_n(&m->sp, __ATOMIC_RELAXED);
    o->lo = m->stack_lo;
    o->hi = m->cls ? (char *)m : m->stack_lo + m->stack_size;
    o->worker = -1;
    o->cpu_ns = weft__thread_cpu_ns(t);
    o->state_ns = weft__thread_state_ns(t);
    o->priority = __atomic_load_n(&m->prio, __ATOMIC_RELAXED); /* as weft_priority */
    /* Running on a worker: its current thread. */
    int nw = weft__rt.nworkers;
    for (int i = 0; i < nw; i++) {
        struct weft__worker *w = weft__rt.workers[i];
        if (__atomic_load_n(&w->current, __ATOMIC_RELAXED) == m) {
            o->worker = i;
            break;
        }
    }
    if (j0 == WEFT__J_DONE) {
        o->state = WEFT_STATE_DONE;
        o->worker = -1;
    } else if (o->wait == WEFT__WAIT_BLOCKING && o->worker < 0) {
        o->state = WEFT_STATE_BLOCKING; /* the caller too, from inside weft_blocking */
    } else if (t == self) {
        o->state = WEFT_STATE_RUNNING;
        o->worker = weft__tls_worker ? weft__tls_worker->id : -1;
    } else if (o->worker >= 0) {
        o->state = WEFT_STATE_RUNNING;
    } else if (m->bound) {
        o->state = WEFT_STATE_RUNNING; /* on its own kernel thread; it blocks there too */
    } else if (o->wait != WEFT__WAIT_NONE) {
        o->state = WEFT_STATE_PARKED;
    } else {
        o->state = WEFT_STATE_READY;
    }
    if (o->state != WEFT_STATE_READY && o->state != WEFT_STATE_PARKED)
        o->sp = NULL;
    /* Recycled meanwhile: the join word or the id moved. */
    if (__atomic_load_n((uintptr_t *)&m->join, __ATOMIC_ACQUIRE) != j0 ||
        __atomic_load_n(&m->id, __ATOMIC_RELAXED) != o->id)
        return ESRCH;
    return 0;
}

static struct weft_thread *caller(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w ? w->current : weft__tls_user();
}

int weft__obs_snapshot(const struct weft_thread *t, struct weft__obs_thread *out)
{
    return read_desc(t, out, caller(), 0);
}

struct collect {
    struct weft__obs_thread *v;
    size_t n, cap;
    struct weft_thread *self;
    int err;
};

static void add(struct weft_thread *t, void *arg)
{
    struct collect *c = arg;
    if (c->err)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        struct weft__obs_thread *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->err = ENOMEM;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    if (read_desc(t, &c->v[c->n], c->self, 0) == 0)
        c->n++;
}

int weft__obs_collect(struct weft__obs_thread **out, size_t *n)
{
    struct collect c = { NULL, 0, 0, caller(), 0 };
    add(weft__rt.main, &c);
    int rc = weft__stack_each(add, &c);
    if (rc == 0)
        weft__bound_each(add, &c);
    if (rc == 0)
        rc = c.err;
    if (rc != 0) {
        free(c.v);
        return rc;
    }
    *out = c.v;
    *n = c.n;
    return 0;
}

const char *weft__obs_wait_word(uint8_t kind)
{
    static const char *const words[WEFT__WAIT_KINDS] = {
        [WEFT__WAIT_NONE] = "none",       [WEFT__WAIT_MUTEX] = "mutex",
        [WEFT__WAIT_COND] = "cond",       [WEFT__WAIT_RWLOCK] = "rwlock",
        [WEFT__WAIT_BARRIER] = "barrier", [WEFT__WAIT_SEM] = "sem",
        [WEFT__WAIT_JOIN] = "join",       [WEFT__WAIT_IO] = "io",
        [WEFT__WAIT_SLEEP] = "sleep",     [WEFT__WAIT_BLOCKING] = "blocking",
    };
    return kind < WEFT__WAIT_KINDS ? words[kind] : "?";
}

const char *weft__obs_state_word(int state)
{
    static const char *const words[] = { "running", "ready", "parked", "blocking", "done" };
    return state >= 0 && state <= WEFT_STATE_DONE ? words[state] : "?";
}

int weft_thread_info_get(const weft_thread *t, weft_thread_info *out)
{
    if (!out)
        return EINVAL;
    if (weft__nworkers_running() == 0)
        return ESRCH;
    if (!t && !(t = caller()))
        return ESRCH;
    struct weft__obs_thread o;
    /* A finished thread not yet joined is DONE. */
    int rc = read_desc(t, &o, caller(), 1);
    if (rc != 0)
        return rc;
    out->id = o.id;
    out->name = o.name;
    out->state = o.state;
    /* Parked in a syscall mirror (the ring, the poller, a sleep): BLOCKING
     * to the API, as the SPEC has it; the dump names the kind, "io". */
    if (o.state == WEFT_STATE_PARKED && (o.wait == WEFT__WAIT_IO || o.wait == WEFT__WAIT_SLEEP))
        out->state = WEFT_STATE_BLOCKING;
    out->worker = o.worker;
    out->priority = o.priority;
    out->cpu_ns = o.cpu_ns;
    out->state_ns = o.state_ns;
    return 0;
}
