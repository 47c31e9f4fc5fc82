/* trace.c: WEFT_TRACE: makes the workers' event rings at weft_init and
 * writes them at weft_finalize as one Trace Event Format object, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * The file: one track per worker (tid: the worker's id), named "worker
 * N"; a complete slice ("X") per run of a user thread, named "<id>
 * <name>", from its RUN event to the next event that ends it on that
 * worker (PARK, EXIT, HANDOFF, PREEMPT or another RUN, whose arg says
 * why); instants for spawn, steal, preempt, hand-off, and "task run" for
 * each zero-wait task a worker starts on its scheduler context; a flow
 * arrow from each wake (in the waker's slice) to the woken thread's next
 * run. The recording keeps what cannot be derived afterwards
 * (sched/events.h): a work-first spawn's instant and a preemption's are
 * read off the RUN that follows, names off NAME records, and each
 * record's full time stamp off its low bits and the newer records'.
 * Times are the time stamp counter's, mapped onto CLOCK_MONOTONIC by the
 * two readings taken at start and finish, in microseconds since
 * weft_init.
 */
#include "observe/observe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "sched/events.h"
#include "sched/sched.h"

#define NS_PER_US 1000.0
#define TSC_BITS  (64 - WEFT__TRACE_TSC_SHIFT) /* of the counter in a record */

static struct {
    char *path;
    int nworkers;
    uint64_t tsc0, ns0; /* readings at start */
} tr;

static void free_rings(struct weft__trace_ring *r, int n)
{
    for (int i = 0; i < n; i++)
        free(r[i].ev);
    free(r);
}

int weft__trace_start(const char *path)
{
    if (!path)
        return 0;
    int n = weft__rt.nworkers;
    /* aligned: each worker's ring head on a line of its own */
    size_t bytes = (size_t)n * sizeof(struct weft__trace_ring);
    struct weft__trace_ring *r = aligned_alloc(_Alignof(struct weft__trace_ring), bytes);
    if (!r)
        return ENOMEM;
    memset(r, 0, bytes);
    for (int i = 0; i < n; i++) {
        /* untouched until written: a short program's rings stay small */
        r[i].ev = malloc(WEFT__TRACE_RING * sizeof *r[i].ev);
        if (!r[i].ev) {
            free_rings(r, i);
            return ENOMEM;
        }
    }
    tr.path = strdup(path);
    if (!tr.path) {
        free_rings(r, n);
        return ENOMEM;
    }
    tr.nworkers = n;
    tr.ns0 = weft__now_ns();
    tr.tsc0 = __rdtsc();
    weft__trace_rings = r;
    weft__trace_on = 1;
    /* No worker runs yet: plain writes. The gate sends yields, parks and
     * exits through the recording slow paths; the policy bit, spawns. */
    for (int i = 0; i < n; i++) {
        weft__rt.workers[i]->trace = &r[i];
        atomic_fetch_or_explicit(&weft__rt.workers[i]->gate, WEFT__GATE_TRACE,
                                 memory_order_relaxed);
    }
    weft__rt.policy |= WEFT__POLICY_TRACED;
    weft__trace(weft__rt.workers[0], WEFT__EV_RUN, weft__rt.main, 0);
    return 0;
}

/* ---- the file ------------------------------------------------------------ */

/* An event as the conversion sees it: the whole counter rebuilt. */
struct ev {
    uint64_t tsc;
    uint64_t id; /* the thread's id */
    uint32_t kind;
    int32_t arg; /* STEAL: the victim worker */
    int worker;
    uint64_t seq; /* order within the worker's ring */
};

static int by_time(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->tsc != y->tsc)
        return x->tsc < y->tsc ? -1 : 1;
    if (x->worker != y->worker)
        return x->worker < y->worker ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void put_json_string(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

/* Thread id -> a value (open addressing; id 0 is no key): the pending
 * flows (woken thread -> flow id) and the names (NAME records). */
struct idmap {
    uint64_t *key, *val;
    size_t mask;
};

static int idmap_init(struct idmap *m, size_t n)
{
    size_t cap = 1024;
    while (cap < 2 * n)
        cap *= 2;
    m->key = calloc(cap, sizeof *m->key);
    m->val = calloc(cap, sizeof *m->val);
    m->mask = cap - 1;
    return m->key && m->val ? 0 : ENOMEM;
}

static void idmap_free(struct idmap *m)
{
    free(m->key);
    free(m->val);
}

/* The slot of id, made if absent (the map never fills: twice as many
 * slots as ids). */
static uint64_t *idmap_slot(struct idmap *m, uint64_t id)
{
    size_t h = (size_t)((id * WEFT_GOLDEN64) >> 17) & m->mask;
    while (m->key[h] && m->key[h] != id)
        h = (h + 1) & m->mask;
    m->key[h] = id;
    return &m->val[h];
}

static const char *name_of(struct idmap *names, uint64_t id)
{
    return id ? (const char *)(uintptr_t)*idmap_slot(names, id) : NULL;
}

struct track {
    int open;
    uint64_t id, start;
    const char *name;
};

struct writer {
    FILE *f;
    int first;
    double tsc_ns; /* ns per tick */
    struct idmap names;
};

static double us_of(const struct writer *wr, uint64_t tsc)
{
    return ((double)(int64_t)(tsc - tr.tsc0) * wr->tsc_ns) / NS_PER_US;
}

static void sep(struct writer *wr)
{
    fputs(wr->first ? "\n" : ",\n", wr->f);
    wr->first = 0;
}

static void close_slice(struct writer *wr, struct track *k, int worker, uint64_t tsc,
                        const char *why)
{
    if (!k->open)
        return;
    double s = us_of(wr, k->start), e = us_of(wr, tsc);
    sep(wr);
    fprintf(wr->f, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"%llu",
            worker, s, e > s ? e - s : 0.0, (unsigned long long)k->id);
    if (k->name) {
        fputc(' ', wr->f);
        put_json_string(wr->f, k->name);
    }
    fprintf(wr->f, "\",\"cat\":\"run\",\"args\":{\"id\":%llu,\"end\":\"%s\"}}",
            (unsigned long long)k->id, why);
    k->open = 0;
}

/* An instant on worker's track about thread id. */
static void instant(struct writer *wr, int worker, uint64_t tsc, const char *what, uint64_t id,
                    const char *extra)
{
    sep(wr);
    fprintf(wr->f,
            "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"cat\":\"%s\","
            "\"name\":\"%s %llu",
            worker, us_of(wr, tsc), what, what, (unsigned long long)id);
    const char *name = name_of(&wr->names, id);
    if (name) {
        fputc(' ', wr->f);
        put_json_string(wr->f, name);
    }
    fprintf(wr->f, "%s\"}", extra);
}

static const char *park_word(int32_t kind)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "park %s", weft__obs_wait_word((uint8_t)kind));
    return buf;
}

/* How a RUN with arg says the slice before it ended. */
static const char *run_end(int32_t arg)
{
    return (arg & WEFT__RUN_EXITED)      ? "exit"
           : (arg & WEFT__RUN_PARKED)    ? park_word(arg >> WEFT__RUN_WAIT_SHIFT)
           : (arg & WEFT__RUN_PREEMPTED) ? "preempt"
           : (arg & WEFT__RUN_SPAWNED)   ? "spawn"
                                         : "switch";
}

static int write_events(struct writer *wr, const struct ev *v, size_t n, uint64_t tsc1,
                        uint64_t dropped)
{
    FILE *f = wr->f;
    struct track *tk = calloc((size_t)tr.nworkers, sizeof *tk);
    struct idmap fl = { 0 };
    if (!tk || idmap_init(&fl, n) != 0) {
        free(tk);
        idmap_free(&fl);
        return ENOMEM;
    }
    uint64_t next_flow = 1;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_events\":", f);
    fprintf(f, "%llu},\"traceEvents\":[", (unsigned long long)dropped);
    sep(wr);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"weft\"}}", f);
    for (int i = 0; i < tr.nworkers; i++) {
        sep(wr);
        fprintf(f,
                "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\","
                "\"args\":{\"name\":\"worker %d\"}}",
                i, i);
        sep(wr);
        fprintf(f,
                "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
                "\"args\":{\"sort_index\":%d}}",
                i, i);
    }
    for (size_t i = 0; i < n; i++) {
        const struct ev *e = &v[i];
        int w = e->worker;
        struct track *k = &tk[w];
        char extra[48];
        switch (e->kind) {
        case WEFT__EV_RUN: {
            /* the instants of what ended the slice before are about its
             * thread, a spawn's about the child */
            uint64_t before = k->open ? k->id : 0;
            close_slice(wr, k, w, e->tsc, run_end(e->arg));
            if (e->arg & WEFT__RUN_SPAWNED)
                instant(wr, w, e->tsc, "spawn", e->id, "");
            if ((e->arg & WEFT__RUN_PREEMPTED) && before)
                instant(wr, w, e->tsc, "preempt", before, "");
            k->open = 1;
            k->id = e->id;
            k->name = name_of(&wr->names, e->id);
            k->start = e->tsc;
            uint64_t *fid = idmap_slot(&fl, e->id);
            if (*fid) {
                sep(wr);
                fprintf(f,
                        "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                        "\"id\":%llu,\"cat\":\"wake\",\"name\":\"wake\"}",
                        w, us_of(wr, e->tsc), (unsigned long long)*fid);
                *fid = 0;
            }
            break;
        }
        case WEFT__EV_PARK: close_slice(wr, k, w, e->tsc, park_word(e->arg)); break;
        case WEFT__EV_EXIT: close_slice(wr, k, w, e->tsc, "exit"); break;
        case WEFT__EV_WAKE: {
            uint64_t id = next_flow++;
            *idmap_slot(&fl, e->id) = id;
            sep(wr);
            fprintf(f,
                    "{\"ph\":\"s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"id\":%llu,"
                    "\"cat\":\"wake\",\"name\":\"wake\"}",
                    w, us_of(wr, e->tsc), (unsigned long long)id);
            break;
        }
        case WEFT__EV_SPAWN: instant(wr, w, e->tsc, "spawn", e->id, ""); break;
        case WEFT__EV_STEAL:
            snprintf(extra, sizeof extra, " from worker %d", e->arg);
            instant(wr, w, e->tsc, "steal", e->id, extra);
            break;
        case WEFT__EV_PREEMPT:
            close_slice(wr, k, w, e->tsc, "preempt");
            instant(wr, w, e->tsc, "preempt", e->id, "");
            break;
        case WEFT__EV_HANDOFF:
            close_slice(wr, k, w, e->tsc, "hand-off");
            instant(wr, w, e->tsc, "hand-off", e->id, "");
            break;
        case WEFT__EV_TASK:
            /* an instant, not a slice: slices are user threads' runs */
            sep(wr);
            fprintf(f,
                    "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                    "\"cat\":\"task\",\"name\":\"task run\"}",
                    w, us_of(wr, e->tsc));
            break;
        default: break;
        }
    }
    for (int i = 0; i < tr.nworkers; i++)
        close_slice(wr, &tk[i], i, tsc1, "finalize");
    fputs("\n]}\n", f);
    free(tk);
    idmap_free(&fl);
    return 0;
}

/* Worker i's kept records into v (from *k on) and their names into names:
 * newest first, each record's counter rebuilt from the next one's (the
 * newest's from tsc1), as the difference of their low bits. */
static void unpack_ring(const struct weft__trace_ring *r, int i, uint64_t tsc1, struct ev *v,
                        size_t *k, struct idmap *names)
{
    const uint64_t mask = ((uint64_t)1 << TSC_BITS) - 1;
    uint64_t from = r->head > WEFT__TRACE_RING ? r->head - WEFT__TRACE_RING : 0;
    uint64_t full = tsc1, low = tsc1 & mask;
    for (uint64_t s = r->head; s-- > from;) {
        const struct weft__trace_rec *rec = &r->ev[s & (WEFT__TRACE_RING - 1)];
        uint32_t kind = (uint32_t)(rec->stamp & WEFT__TRACE_KIND_MASK);
        if (kind == WEFT__EV_NAME) {
            *idmap_slot(names, rec->stamp >> WEFT__TRACE_TSC_SHIFT) = rec->id;
            continue;
        }
        uint64_t l = rec->stamp >> WEFT__TRACE_TSC_SHIFT;
        /* signed: kernel threads of one worker may read slightly skewed
         * counters on different CPUs */
        uint64_t d = (low - l) & mask;
        int64_t back = (int64_t)(d << WEFT__TRACE_TSC_SHIFT) >> WEFT__TRACE_TSC_SHIFT;
        full -= (uint64_t)back;
        low = l;
        struct ev *e = &v[(*k)++];
        e->tsc = full;
        e->id = rec->id;
        e->kind = kind;
        e->arg = (int32_t)(rec->stamp >> WEFT__TRACE_ARG_SHIFT & WEFT__TRACE_ARG_MASK);
        if (kind == WEFT__EV_STEAL) {
            e->id = rec->id & (((uint64_t)1 << WEFT__TRACE_VICTIM_SHIFT) - 1);
            e->arg = (int32_t)(rec->id >> WEFT__TRACE_VICTIM_SHIFT);
        }
        e->worker = i;
        e->seq = s;
    }
}

/* The rings (n records kept in all) to the file. */
static int write_trace(struct weft__trace_ring *r, size_t n, uint64_t tsc1, uint64_t ns1,
                       uint64_t dropped)
{
    struct writer wr = { NULL, 1, 1.0, { 0 } };
    if (tsc1 > tr.tsc0)
        wr.tsc_ns = (double)(ns1 - tr.ns0) / (double)(tsc1 - tr.tsc0);
    struct ev *v = malloc((n ? n : 1) * sizeof *v);
    int rc = ENOMEM;
    if (!v || idmap_init(&wr.names, n) != 0)
        goto free_v;
    size_t k = 0;
    for (int i = 0; i < tr.nworkers; i++)
        unpack_ring(&r[i], i, tsc1, v, &k, &wr.names);
    qsort(v, k, sizeof *v, by_time);
    wr.f = fopen(tr.path, "w");
    if (!wr.f) {
        rc = errno;
        goto free_v;
    }
    rc = write_events(&wr, v, k, tsc1, dropped);
    if (rc == 0 && ferror(wr.f))
        rc = EIO;
    if (fclose(wr.f) != 0 && rc == 0)
        rc = errno;
free_v:
    idmap_free(&wr.names);
    free(v);
    return rc;
}

void weft__trace_finish(void)
{
    if (!weft__trace_on)
        return;
    uint64_t tsc1 = __rdtsc(), ns1 = weft__now_ns();
    weft__trace_on = 0;
    struct weft__trace_ring *r = weft__trace_rings;
    weft__trace_rings = NULL; /* the workers, and their pointers to it, are gone */
    size_t n = 0;
    uint64_t dropped = 0, total = 0;
    for (int i = 0; i < tr.nworkers; i++) {
        total += r[i].head;
        n += r[i].head > WEFT__TRACE_RING ? WEFT__TRACE_RING : r[i].head;
        dropped += r[i].head > WEFT__TRACE_RING ? r[i].head - WEFT__TRACE_RING : 0;
    }
    int rc = write_trace(r, n, tsc1, ns1, dropped);
    if (rc != 0)
        weft__notice("WEFT_TRACE: cannot write %s (%s)", tr.path, strerror(rc));
    else
        weft__notice("trace: %s: %llu events, %llu dropped (each worker keeps its latest %llu)",
                     tr.path, (unsigned long long)total, (unsigned long long)dropped,
                     (unsigned long long)WEFT__TRACE_RING);
    free_rings(r, tr.nworkers);
    free(tr.path);
    tr.path = NULL;
}
