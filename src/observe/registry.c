/* registry.c: finds and reads the live user threads for weft_dump and
 * weft_thread_info_get (the design block is in observe/observe.h). */
#include "observe/observe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sched/account.h"
#include "sched/sched.h"
#include "sync/mutex.h"
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
    o->join = j0;
    o->wait_on =
        o->wait == WEFT__WAIT_MUTEX ? __atomic_load_n(&m->wait_on, __ATOMIC_RELAXED) : NULL;
    o->waits_for = 0;
    o->borrowed = 0;
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

/* add, for a thread on a caller's stack (read under the lock that keeps
 * its memory weft's, and never after). */
static void add_borrowed(struct weft_thread *t, void *arg)
{
    struct collect *c = arg;
    size_t n = c->n;
    add(t, arg);
    if (c->n > n)
        c->v[n].borrowed = 1;
}

int weft__obs_collect(struct weft__obs_thread **out, size_t *n)
{
    struct collect c = { NULL, 0, 0, caller(), 0 };
    add(weft__rt.main, &c);
    int rc = weft__stack_each(add, &c);
    if (rc == 0) {
        weft__stack_adopted_each(add_borrowed, &c); /* threads on callers' stacks */
        weft__bound_each(add, &c);
    }
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

/* ---- the deadlock report ------------------------------------------------------
 * Edges: a thread parked on a weft_mutex waits for the mutex's holder (its
 * word, read through wait_on); one parked in weft_join waits for the
 * thread whose join word names it. A cycle of edges is a deadlock: every
 * thread on it waits for the next, for ever. The edges come from reads made
 * at different instants while the threads run, so a cycle may be an
 * artefact (a waits for b at one instant, b for a at a later one, after a
 * moved on). A real deadlock's edges never change, so a cycle is reported
 * only when every one of its edges holds again in two more reads, each made
 * after the whole previous one: the values held at both reads, so (but
 * for an edge that went away and came back identical in between) all of
 * them held together at the instant between the two: a consistent
 * snapshot would have seen the same cycle. */

/* 8 bytes at addr into *out, or -1: addr may have been freed (a mutex
 * destroyed after its waiter left it) and must not fault us. The kernel
 * reads it (process_vm_readv on ourselves, else a write into a pipe, where
 * seccomp refuses the former); raw system calls, unseen by the sanitizers'
 * interceptors, which would take the read for a race or a use after free. */
static int peek_u64(const void *addr, uint64_t *out)
{
    struct iovec local = { out, sizeof *out };
    struct iovec remote = { (void *)addr, sizeof *out };
    long k = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L);
    if (k == (long)sizeof *out)
        return 0;
    if (k >= 0 || errno == EFAULT)
        return -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    int rc = -1;
    if (syscall(SYS_write, (long)p[1], addr, sizeof *out) == (long)sizeof *out &&
        read(p[0], out, sizeof *out) == (ssize_t)sizeof *out)
        rc = 0;
    close(p[0]);
    close(p[1]);
    return rc;
}

/* The holder of the mutex o parks on, 0 if none can be told: the word is
 * read between two reads of o's wait byte and mutex, which must agree. */
__attribute__((no_sanitize("address", "thread"))) static uint64_t
mutex_edge(const struct weft__obs_thread *o)
{
    struct weft_thread *m = (struct weft_thread *)o->t;
    uint64_t word;
    if (o->borrowed || o->state != WEFT_STATE_PARKED || o->wait != WEFT__WAIT_MUTEX ||
        !o->wait_on || peek_u64(o->wait_on, &word) != 0)
        return 0;
    if (__atomic_load_n(&m->wait, __ATOMIC_RELAXED) != WEFT__WAIT_MUTEX ||
        __atomic_load_n(&m->wait_on, __ATOMIC_RELAXED) != o->wait_on)
        return 0;
    /* Itself: an unlock is handing it the mutex and has yet to wake it. */
    uint64_t owner = weft__mutex_owner_id(word);
    return owner != o->id ? owner : 0;
}

/* The descriptor of the user thread parked joining a thread whose join word is j, or 0. */
static uintptr_t joiner_of(uintptr_t j)
{
    return j && WEFT__J_PTR(j) == j ? j : 0;
}

static int by_desc(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(const struct weft__obs_thread *const *)a)->t;
    uintptr_t y = (uintptr_t)(*(const struct weft__obs_thread *const *)b)->t;
    return x < y ? -1 : x > y;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = (*(const struct weft__obs_thread *const *)a)->id;
    uint64_t y = (*(const struct weft__obs_thread *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* The thread of v sorted (by_desc or by_id) that matches key, or NULL. */
static struct weft__obs_thread *find(struct weft__obs_thread **sorted, size_t n,
                                     const struct weft__obs_thread *key,
                                     int (*cmp)(const void *, const void *))
{
    struct weft__obs_thread **p = bsearch(&key, sorted, n, sizeof *sorted, cmp);
    return p ? *p : NULL;
}

void weft__obs_edges(struct weft__obs_thread *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i].waits_for = mutex_edge(&v[i]);
    struct weft__obs_thread **s = malloc(n * sizeof *s);
    if (!s)
        return; /* the mutex edges alone */
    for (size_t i = 0; i < n; i++)
        s[i] = &v[i];
    qsort(s, n, sizeof *s, by_desc);
    for (size_t i = 0; i < n; i++) {
        struct weft__obs_thread key = { .t = (const struct weft_thread *)joiner_of(v[i].join) };
        struct weft__obs_thread *y = key.t ? find(s, n, &key, by_desc) : NULL;
        if (y && y->state == WEFT_STATE_PARKED && y->wait == WEFT__WAIT_JOIN)
            y->waits_for = v[i].id;
    }
    free(s);
}

/* 1 if o (of an earlier read) still waits for x as it did: both read anew. */
static int edge_holds(const struct weft__obs_thread *o, const struct weft__obs_thread *x)
{
    struct weft_thread *self = caller();
    struct weft__obs_thread now, target;
    if (o->borrowed || x->borrowed || read_desc(o->t, &now, self, 0) != 0 || now.id != o->id ||
        now.state != WEFT_STATE_PARKED || now.wait != o->wait)
        return 0;
    if (o->wait == WEFT__WAIT_MUTEX)
        return now.wait_on == o->wait_on && mutex_edge(&now) == x->id;
    if (read_desc(x->t, &target, self, 0) != 0 || target.id != x->id)
        return 0;
    return o->wait == WEFT__WAIT_JOIN && joiner_of(target.join) == (uintptr_t)o->t;
}

int weft__obs_cycles(const struct weft__obs_thread *v, size_t n,
                     void (*fn)(const uint64_t *ids, size_t len, void *arg), void *arg)
{
    if (n == 0)
        return 0;
    int rc = ENOMEM;
    struct weft__obs_thread **s = malloc(n * sizeof *s);
    size_t *next = malloc(n * sizeof *next);       /* index of the thread waited for; n: none */
    size_t *mark = calloc(n, sizeof *mark);        /* the walk that visited it, from 1 */
    uint64_t *ids = malloc((n + 1) * sizeof *ids); /* a cycle and its first again */
    size_t *cyc = malloc(n * sizeof *cyc);
    if (!s || !next || !mark || !ids || !cyc)
        goto free_all;
    for (size_t i = 0; i < n; i++)
        s[i] = (struct weft__obs_thread *)&v[i];
    qsort(s, n, sizeof *s, by_id);
    for (size_t i = 0; i < n; i++) {
        struct weft__obs_thread key = { .id = v[i].waits_for };
        struct weft__obs_thread *x = key.id ? find(s, n, &key, by_id) : NULL;
        next[i] = x ? (size_t)(x - v) : n;
    }
    /* Each thread waits for at most one: every walk ends at a thread that
     * waits for none, at one an earlier walk visited, or closes a cycle. */
    for (size_t start = 0; start < n; start++) {
        size_t walk = start + 1, i = start;
        while (i < n && !mark[i]) {
            mark[i] = walk;
            i = next[i];
        }
        if (i == n || mark[i] != walk)
            continue;
        size_t len = 0, low = 0;
        size_t k = i;
        do {
            if (len == 0 || v[k].id < v[cyc[low]].id)
                low = len;
            cyc[len++] = k;
            k = next[k];
        } while (k != i);
        int holds = 1;
        for (int pass = 0; pass < 2 && holds; pass++)
            for (size_t j = 0; j < len && holds; j++)
                holds = edge_holds(&v[cyc[j]], &v[next[cyc[j]]]);
        if (!holds)
            continue;
        for (size_t j = 0; j < len; j++)
            ids[j] = v[cyc[(low + j) % len]].id;
        ids[len] = ids[0];
        fn(ids, len + 1, arg);
    }
    rc = 0;
free_all:
    free(cyc);
    free(ids);
    free(mark);
    free(next);
    free(s);
    return rc;
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
