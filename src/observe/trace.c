/* trace.c: WEFT_TRACE: makes the workers' event rings at weft_init and
 * writes them at weft_finalize as one Trace Event Format object, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * The file: one track per worker (tid: the worker's id), named "worker
 * N"; a complete slice ("X") per run of a user thread, named "<id>
 * <name>", from its RUN event to the next event that ends it on that
 * worker (PARK, EXIT, HANDOFF, PREEMPT or another RUN); instants for spawn, steal, preempt,
 * hand-off, and "task run" for each zero-wait task a worker starts on
 * its scheduler context; a flow arrow from each wake (in the waker's
 * slice) to the woken thread's next run. Times are the time stamp
 * counter's, mapped onto CLOCK_MONOTONIC by the two readings taken at
 * start and finish, in microseconds since weft_init.
 */
#include "observe/observe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "sched/sched.h"
#include "sched/trace.h"

#define RING_EVENTS ((uint64_t)1 << 18) /* per worker: 8 MiB, the latest events kept */
#define NS_PER_S    1000000000ull
#define NS_PER_US   1000.0

static struct {
    char *path;
    int nworkers;
    uint64_t tsc0, ns0; /* readings at start */
} tr;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

int weft__trace_start(const char *path)
{
    if (!path)
        return 0;
    int n = weft__rt.nworkers;
    struct weft__trace_ring *r = calloc((size_t)n, sizeof *r);
    if (!r)
        return ENOMEM;
    for (int i = 0; i < n; i++) {
        r[i].ev = malloc(RING_EVENTS * sizeof *r[i].ev);
        r[i].mask = RING_EVENTS - 1;
        if (!r[i].ev) {
            while (i-- > 0)
                free(r[i].ev);
            free(r);
            return ENOMEM;
        }
    }
    tr.path = strdup(path);
    if (!tr.path) {
        for (int i = 0; i < n; i++)
            free(r[i].ev);
        free(r);
        return ENOMEM;
    }
    tr.nworkers = n;
    tr.ns0 = now_ns();
    tr.tsc0 = __rdtsc();
    weft__trace_rings = r;
    weft__trace_on = 1;
    /* No worker runs yet: plain writes. The gate sends yields, parks and
     * exits through the recording slow paths; the policy bit, spawns. */
    for (int i = 0; i < n; i++)
        atomic_fetch_or_explicit(&weft__rt.workers[i]->gate, WEFT__GATE_TRACE,
                                 memory_order_relaxed);
    weft__rt.policy |= WEFT__POLICY_TRACED;
    weft__trace(weft__rt.workers[0], WEFT__EV_RUN, weft__rt.main, 0);
    return 0;
}

/* ---- the file ------------------------------------------------------------ */

struct ev {
    struct weft__trace_event e;
    int worker;
    uint64_t seq; /* order within the worker's ring */
};

static int by_time(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->e.tsc != y->e.tsc)
        return x->e.tsc < y->e.tsc ? -1 : 1;
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

/* Pending flows: woken thread id -> flow id (open addressing). */
struct flows {
    uint64_t *key, *val;
    size_t mask;
};

static uint64_t *flow_slot(struct flows *fl, uint64_t id)
{
    size_t h = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & fl->mask;
    while (fl->key[h] && fl->key[h] != id)
        h = (h + 1) & fl->mask;
    fl->key[h] = id;
    return &fl->val[h];
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

static void instant(struct writer *wr, int worker, uint64_t tsc, const char *what,
                    const struct weft__trace_event *e, const char *extra)
{
    sep(wr);
    fprintf(wr->f,
            "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"cat\":\"%s\","
            "\"name\":\"%s %llu",
            worker, us_of(wr, tsc), what, what, (unsigned long long)e->id);
    if (e->name) {
        fputc(' ', wr->f);
        put_json_string(wr->f, e->name);
    }
    fprintf(wr->f, "%s\"}", extra);
}

static const char *park_word(int32_t kind)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "park %s", weft__obs_wait_word((uint8_t)kind));
    return buf;
}

static int write_trace(struct ev *v, size_t n, uint64_t tsc1, uint64_t ns1, uint64_t dropped)
{
    FILE *f = fopen(tr.path, "w");
    if (!f)
        return errno;
    struct writer wr = { f, 1, 1.0 };
    if (tsc1 > tr.tsc0)
        wr.tsc_ns = (double)(ns1 - tr.ns0) / (double)(tsc1 - tr.tsc0);
    struct track *tk = calloc((size_t)tr.nworkers, sizeof *tk);
    struct flows fl = { 0 };
    size_t cap = 1024;
    while (cap < 2 * n)
        cap *= 2;
    fl.key = calloc(cap, sizeof *fl.key);
    fl.val = calloc(cap, sizeof *fl.val);
    fl.mask = cap - 1;
    if (!tk || !fl.key || !fl.val) {
        free(tk);
        free(fl.key);
        free(fl.val);
        fclose(f);
        return ENOMEM;
    }
    uint64_t next_flow = 1;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_events\":", f);
    fprintf(f, "%llu},\"traceEvents\":[", (unsigned long long)dropped);
    sep(&wr);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"weft\"}}", f);
    for (int i = 0; i < tr.nworkers; i++) {
        sep(&wr);
        fprintf(f,
                "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\","
                "\"args\":{\"name\":\"worker %d\"}}",
                i, i);
        sep(&wr);
        fprintf(f,
                "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
                "\"args\":{\"sort_index\":%d}}",
                i, i);
    }
    for (size_t i = 0; i < n; i++) {
        const struct weft__trace_event *e = &v[i].e;
        int w = v[i].worker;
        struct track *k = &tk[w];
        char extra[48];
        switch (e->kind) {
        case WEFT__EV_RUN: {
            close_slice(&wr, k, w, e->tsc,
                        (e->arg & WEFT__RUN_EXITED)    ? "exit"
                        : (e->arg & WEFT__RUN_PARKED)  ? park_word(e->arg >> 8)
                        : (e->arg & WEFT__RUN_SPAWNED) ? "spawn"
                                                       : "switch");
            if (e->arg & WEFT__RUN_SPAWNED)
                instant(&wr, w, e->tsc, "spawn", e, "");
            k->open = 1;
            k->id = e->id;
            k->name = e->name;
            k->start = e->tsc;
            uint64_t *fid = flow_slot(&fl, e->id);
            if (*fid) {
                sep(&wr);
                fprintf(f,
                        "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                        "\"id\":%llu,\"cat\":\"wake\",\"name\":\"wake\"}",
                        w, us_of(&wr, e->tsc), (unsigned long long)*fid);
                *fid = 0;
            }
            break;
        }
        case WEFT__EV_PARK: close_slice(&wr, k, w, e->tsc, park_word(e->arg)); break;
        case WEFT__EV_EXIT: close_slice(&wr, k, w, e->tsc, "exit"); break;
        case WEFT__EV_WAKE: {
            uint64_t id = next_flow++;
            *flow_slot(&fl, e->id) = id;
            sep(&wr);
            fprintf(f,
                    "{\"ph\":\"s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"id\":%llu,"
                    "\"cat\":\"wake\",\"name\":\"wake\"}",
                    w, us_of(&wr, e->tsc), (unsigned long long)id);
            break;
        }
        case WEFT__EV_SPAWN: instant(&wr, w, e->tsc, "spawn", e, ""); break;
        case WEFT__EV_STEAL:
            snprintf(extra, sizeof extra, " from worker %d", e->arg);
            instant(&wr, w, e->tsc, "steal", e, extra);
            break;
        case WEFT__EV_PREEMPT:
            close_slice(&wr, k, w, e->tsc, "preempt");
            instant(&wr, w, e->tsc, "preempt", e, "");
            break;
        case WEFT__EV_HANDOFF:
            close_slice(&wr, k, w, e->tsc, "hand-off");
            instant(&wr, w, e->tsc, "hand-off", e, "");
            break;
        case WEFT__EV_TASK:
            /* an instant, not a slice: slices are user threads' runs */
            sep(&wr);
            fprintf(f,
                    "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                    "\"cat\":\"task\",\"name\":\"task run\"}",
                    w, us_of(&wr, e->tsc));
            break;
        default: break;
        }
    }
    for (int i = 0; i < tr.nworkers; i++)
        close_slice(&wr, &tk[i], i, tsc1, "finalize");
    fputs("\n]}\n", f);
    free(tk);
    free(fl.key);
    free(fl.val);
    int rc = ferror(f) ? EIO : 0;
    if (fclose(f) != 0 && rc == 0)
        rc = errno;
    return rc;
}

void weft__trace_finish(void)
{
    if (!weft__trace_on)
        return;
    uint64_t tsc1 = __rdtsc(), ns1 = now_ns();
    weft__trace_on = 0;
    struct weft__trace_ring *r = weft__trace_rings;
    weft__trace_rings = NULL;
    size_t n = 0;
    uint64_t dropped = 0, total = 0;
    for (int i = 0; i < tr.nworkers; i++) {
        total += r[i].head;
        n += r[i].head > RING_EVENTS ? RING_EVENTS : r[i].head;
        dropped += r[i].head > RING_EVENTS ? r[i].head - RING_EVENTS : 0;
    }
    struct ev *v = malloc((n ? n : 1) * sizeof *v);
    int rc = ENOMEM;
    if (v) {
        size_t k = 0;
        for (int i = 0; i < tr.nworkers; i++) {
            uint64_t from = r[i].head > RING_EVENTS ? r[i].head - RING_EVENTS : 0;
            for (uint64_t s = from; s < r[i].head; s++, k++) {
                v[k].e = r[i].ev[s & r[i].mask];
                v[k].worker = i;
                v[k].seq = s;
            }
        }
        qsort(v, n, sizeof *v, by_time);
        rc = write_trace(v, n, tsc1, ns1, dropped);
        free(v);
    }
    if (rc != 0)
        weft__notice("WEFT_TRACE: cannot write %s (%s)", tr.path, strerror(rc));
    else
        weft__notice("trace: %s: %llu events, %llu dropped (each worker keeps its latest %llu)",
                     tr.path, (unsigned long long)total, (unsigned long long)dropped,
                     (unsigned long long)RING_EVENTS);
    for (int i = 0; i < tr.nworkers; i++)
        free(r[i].ev);
    free(r);
    free(tr.path);
    tr.path = NULL;
}
