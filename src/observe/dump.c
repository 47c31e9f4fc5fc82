/* dump.c: weft_dump, every live user thread and its backtrace, and the
 * WEFT_DUMP_SIGNAL service that writes it on a signal.
 *
 * A signal handler can do almost nothing safely (no malloc, no locks, no
 * libdw), so the handler only writes one byte to a pipe; a kernel thread
 * of the library's own, asleep in read(2) on that pipe, makes the dump.
 * The program goes on meanwhile: the dump reads the threads without
 * stopping any (the design block in observe/observe.h).
 */
#include "observe/observe.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "os/kthread.h"
#include "sched/sched.h"

#define MAX_FRAMES 64
#define OUT_BYTES  65536u
#define LINE_BYTES 512u
#define NS_PER_MS  1000000.0

/* Output buffered into large writes; the first failed write is kept. */
struct out {
    int fd;
    int err;
    size_t len;
    char buf[OUT_BYTES];
};

static void flush(struct out *o)
{
    size_t off = 0;
    while (off < o->len && !o->err) {
        ssize_t k = write(o->fd, o->buf + off, o->len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            o->err = k < 0 ? errno : EIO;
        else
            off += (size_t)k;
    }
    o->len = 0;
}

static __attribute__((format(printf, 2, 3))) void put(struct out *o, const char *fmt, ...)
{
    if (o->len + LINE_BYTES > sizeof o->buf)
        flush(o);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->len, LINE_BYTES, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->len += (size_t)k < LINE_BYTES ? (size_t)k : LINE_BYTES - 1;
}

static const char *prio_word(int p)
{
    switch (p) {
    case WEFT_PRIO_BACKGROUND: return "background";
    case WEFT_PRIO_NORMAL: return "normal";
    case WEFT_PRIO_HIGH: return "high";
    case WEFT_PRIO_URGENT: return "urgent";
    default: return "?";
    }
}

/* One frame line, "    #N  0x<16 hex digits> name\n", without printf:
 * a dump of many threads is mostly these lines. */
static void put_frame(struct out *o, int i, uintptr_t pc, const char *name)
{
    static const char hex[] = "0123456789abcdef";
    if (o->len + LINE_BYTES > sizeof o->buf)
        flush(o);
    char *p = o->buf + o->len;
    memcpy(p, "    #", 5);
    p += 5;
    if (i >= 10)
        *p++ = (char)('0' + i / 10 % 10);
    *p++ = (char)('0' + i % 10);
    if (i < 10)
        *p++ = ' ';
    memcpy(p, " 0x", 3);
    p += 3;
    for (int k = 15; k >= 0; k--)
        *p++ = hex[(pc >> (4 * k)) & 15];
    *p++ = ' ';
    size_t n = strnlen(name, LINE_BYTES - 64);
    memcpy(p, name, n);
    p += n;
    *p++ = '\n';
    o->len = (size_t)(p - o->buf);
}

static void put_frames(struct out *o, struct weft__unwinder *u, const uintptr_t *pcs, int n)
{
    char name[LINE_BYTES - 64];
    for (int i = 0; i < n; i++) {
        weft__unwind_symbol(u, pcs[i], 0, name, sizeof name);
        put_frame(o, i, pcs[i], name);
    }
}

static void put_thread(struct out *o, struct weft__unwinder *u, const struct weft__obs_thread *t,
                       const uintptr_t *self_pcs, int self_n)
{
    char state[48];
    if (t->state == WEFT_STATE_PARKED)
        snprintf(state, sizeof state, "parked on %s", weft__obs_wait_word(t->wait));
    else
        snprintf(state, sizeof state, "%s", weft__obs_state_word(t->state));
    /* After the fixed fields, so that readers of those keep working. */
    char waits[48] = "";
    if (t->waits_for)
        snprintf(waits, sizeof waits, ", %s %llu", t->wait == WEFT__WAIT_JOIN ? "joins" : "owner",
                 (unsigned long long)t->waits_for);
    put(o, "thread %llu \"%s\": %s, worker %d, priority %s, cpu %.3f ms, in state %.3f ms%s\n",
        (unsigned long long)t->id, t->name ? t->name : "", state, t->worker, prio_word(t->priority),
        (double)t->cpu_ns / NS_PER_MS, (double)t->state_ns / NS_PER_MS, waits);
    if (self_pcs) {
        put_frames(o, u, self_pcs, self_n);
    } else if (t->borrowed) {
        put(o, "    (no backtrace: it runs on a stack its creator gave, which may be gone)\n");
    } else if (t->sp) {
        uintptr_t pcs[MAX_FRAMES];
        int n = weft__unwind_saved(u, t->sp, t->lo, t->hi, pcs, MAX_FRAMES);
        put_frames(o, u, pcs, n);
        if (n == 0)
            put(o, "    (no backtrace: its saved context is out of reach)\n");
    } else if (t->state == WEFT_STATE_BLOCKING) {
        put(o, "    (in a blocking call on a kernel thread: no backtrace)\n");
    } else {
        put(o, "    (running: no backtrace)\n");
    }
}

/* One "deadlock: 3 -> 2 -> 3" line (weft__obs_cycles). */
static void put_cycle(const uint64_t *ids, size_t len, void *arg)
{
    struct out *o = arg;
    put(o, "deadlock:");
    for (size_t i = 0; i < len; i++)
        put(o, "%s %llu", i ? " ->" : "", (unsigned long long)ids[i]);
    put(o, "\n");
}

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER; /* one dump at a time */

/* The dump proper; self_pcs: the caller's own frames (it is not parked). */
static int dump_to(int fd, const uintptr_t *self_pcs, int self_n)
{
    /* STOPPING: weft_finalize, after its threads ended and before it
     * releases anything (it stops the dump signal's thread first). */
    int st = atomic_load_explicit(&weft__rt.state, memory_order_acquire);
    if (st != RT_RUNNING && st != RT_STOPPING)
        return EAGAIN;
    struct out *o = malloc(sizeof *o);
    if (!o)
        return ENOMEM;
    o->fd = fd;
    o->err = 0;
    o->len = 0;
    pthread_mutex_lock(&dump_lock);
    struct weft__obs_thread *v = NULL;
    size_t n = 0;
    struct weft__unwinder *u = NULL;
    int rc = weft__obs_collect(&v, &n);
    if (rc != 0)
        goto unlock;
    rc = ENOMEM;
    u = weft__unwind_open();
    if (!u)
        goto free_threads;
    weft__obs_edges(v, n);
    struct weft_thread *self = weft_self();
    put(o, "weft dump: %zu user threads, %d workers%s\n", n, weft__rt.nworkers,
        weft__unwind_dwarf ? "" : " (built without libdw: innermost frames only)");
    for (size_t i = 0; i < n; i++) {
        int mine = v[i].t == self && self_pcs;
        put_thread(o, u, &v[i], mine ? self_pcs : NULL, self_n);
    }
    /* The deadlocks last, before the end line that readers wait for. */
    rc = weft__obs_cycles(v, n, put_cycle, o);
    put(o, "weft dump end\n");
    flush(o);
    if (rc == 0)
        rc = o->err;
    weft__unwind_close(u);
free_threads:
    free(v);
unlock:
    pthread_mutex_unlock(&dump_lock);
    free(o);
    return rc;
}

int weft_dump(int fd)
{
    void *frames[MAX_FRAMES + 1];
    /* frame 0 is weft_dump itself */
    int k = backtrace(frames, MAX_FRAMES + 1);
    uintptr_t pcs[MAX_FRAMES];
    int n = 0;
    for (int i = 1; i < k; i++)
        pcs[n++] = (uintptr_t)frames[i];
    return dump_to(fd, pcs, n);
}

/* ---- WEFT_DUMP_SIGNAL ------------------------------------------------------ */

static struct {
    int signo;            /* 0: off; immutable while the service runs */
    int pipe[2];          /* the handler writes [1], the dumper reads [0] */
    pthread_t dumper;     /* joined by weft__dump_signal_stop */
    struct sigaction old; /* restored at stop */
} ds = { .pipe = { -1, -1 } };

static void on_signal(int signo)
{
    (void)signo;
    int saved = errno; /* the handler runs on top of any code */
    char c = 'd';
    ssize_t k = write(ds.pipe[1], &c, 1); /* a full pipe already has a dump coming */
    (void)k;
    errno = saved;
}

static void *dumper_main(void *arg)
{
    (void)arg;
    for (;;) {
        char c;
        ssize_t k = read(ds.pipe[0], &c, 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return NULL; /* weft__dump_signal_stop closed the other end */
        int rc = dump_to(STDERR_FILENO, NULL, 0);
        if (rc != 0 && rc != EAGAIN)
            weft__notice("WEFT_DUMP_SIGNAL: the dump failed (%s)", strerror(rc));
    }
}

int weft__dump_signal_start(int signo)
{
    if (signo <= 0)
        return 0;
    if (pipe2(ds.pipe, O_CLOEXEC) != 0)
        return errno;
    /* the handler's end never blocks: a full pipe has dumps coming anyway */
    fcntl(ds.pipe[1], F_SETFL, O_NONBLOCK);
    /* The dumper takes no signal: the program's handlers run elsewhere. */
    int rc = weft__kthread_start(&ds.dumper, NULL, dumper_main, NULL, "weft-dump");
    if (rc != 0)
        goto close_pipe;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, &ds.old) != 0) {
        rc = errno;
        goto stop_dumper;
    }
    ds.signo = signo;
    return 0;
stop_dumper:
    close(ds.pipe[1]); /* end of file: the dumper returns */
    ds.pipe[1] = -1;
    pthread_join(ds.dumper, NULL);
close_pipe:
    close(ds.pipe[0]);
    if (ds.pipe[1] >= 0)
        close(ds.pipe[1]);
    ds.pipe[0] = ds.pipe[1] = -1;
    return rc;
}

void weft__dump_signal_stop(void)
{
    if (!ds.signo)
        return;
    sigaction(ds.signo, &ds.old, NULL);
    ds.signo = 0;
    close(ds.pipe[1]); /* end of file: the dumper returns after the dumps asked for */
    pthread_join(ds.dumper, NULL);
    close(ds.pipe[0]);
    ds.pipe[0] = ds.pipe[1] = -1;
}
