/* poller.c: waiting for a descriptor's readiness on one kernel thread, so
 * that the weft_* calls made without a ring hold no kernel thread while
 * they wait.
 *
 * Design
 * ------
 * Without a ring (WEFT_IO=blocking, or io_uring refused), a weft_* call is
 * the system call itself, its worker handed to another kernel thread
 * meanwhile (policy/machine.c). A call that waits long then holds a kernel
 * thread all along: 10,000 idle pipe readers are 10,000 kernel threads.
 * Pipes and sockets can say when a call would no longer block, so for
 * those a read, write, recv or send is made without blocking (RWF_NOWAIT,
 * MSG_DONTWAIT), and while it would block the user thread parks on a
 * readiness wait: one epoll set, served by one poller thread started on
 * first use, whose only job is to ready the threads whose descriptor fired.
 * What the caller sees is the blocking call's result: a read returns what
 * is there once something is; a write or stream send goes on until all is
 * written, as the kernel does on a blocking descriptor; a descriptor the
 * program made O_NONBLOCK, or MSG_DONTWAIT, gives EAGAIN as it would.
 *
 * A waiting call holds its own duplicate of the descriptor, made before it
 * first waits, and goes on through it: like the kernel's blocked call, it
 * stays on the file it started on even if the program closes the number
 * and opens another file under it, and the duplicate is what it registers
 * (EPOLLONESHOT, one registration per waiting call, so several threads may
 * wait on one file). Everything else, and any step that fails (no
 * descriptor left for the duplicate below a reserve kept for the program, a
 * socket with a send or receive timeout, which the kernel implements), goes
 * back to the hand-off.
 *
 * No poller thread (the kernel gives no more threads): the hand-off would
 * find none either and run the call in place, stalling its worker until
 * the descriptor is ready, for ever if the thread that would make it ready
 * waits on that worker. Such a call polls instead: it tries again after
 * weft_yield, and after YIELD_ROUNDS fruitless rounds sleeps in place for a
 * while that doubles up to YIELD_SLEEP_MAX_NS (the worker's other threads
 * still run between tries). Slow, but it finishes whenever the call can.
 *
 * weft_sleep_ns of such a thread parks on the timer service (sync/timer.h)
 * instead of sleeping on a kernel thread.
 *
 * Named pipes (mkfifo) take the same path, but the kernel refuses
 * RWF_NOWAIT on them (EOPNOTSUPP: it allows it on anonymous pipes only).
 * Their attempt that does not wait goes through a twin instead: the FIFO
 * opened anew through /proc/self/fd, with the caller's access mode and
 * O_NONBLOCK. A FIFO's buffer belongs to its inode, so the twin reads and
 * writes the caller's pipe; as an open file description of its own its
 * O_NONBLOCK touches nothing the program shares; and it counts as one more
 * reader or writer only of the kinds the caller's descriptor already is,
 * so it wakes no partner's open and hides no end of file or broken pipe.
 * It is also the call's hold on the file and what it registers. A caller
 * whose descriptor is O_NONBLOCK makes the call itself (it cannot wait);
 * no twin to be had (no /proc, the FIFO's mode no longer lets us open it,
 * a writer with no reader: ENXIO) means the hand-off.
 *
 * Rejected: a poll(2) loop over every waiter (O(waiters) per wake-up); one
 * registration per descriptor number shared by its waiters (the number may
 * name another file by the time it fires); switching the program's file to
 * O_NONBLOCK (the flag belongs to every process sharing the file).
 */
#include "io/poller.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "io/io.h"
#include "os/kthread.h"
#include "sched/park.h"
#include "sched/sched.h"
#include "sync/timer.h"
#include "weft.h"

#define POLL_BATCH         64                 /* events taken per epoll_wait */
#define POLLER_STACK       ((size_t)64 << 10) /* it only readies threads */
#define FD_RESERVE_DIV     16       /* descriptor space left to the program: 1/16 of it... */
#define FD_RESERVE_MIN     64       /* ...and at least this many */
#define YIELD_ROUNDS       64       /* no poller: yields between tries before sleeping... */
#define YIELD_SLEEP_MIN_NS 10000L   /* ...from this long... */
#define YIELD_SLEEP_MAX_NS 1000000L /* ...doubling up to this */

enum { P_OFF, P_ON, P_FAILED };

static struct {
    pthread_mutex_t lock; /* start and stop */
    _Atomic int state;    /* P_*: written under lock */
    int epfd;             /* the epoll set; immutable while P_ON */
    int stopfd;           /* eventfd in the set: written to stop the thread; immutable while P_ON */
    pthread_t pt;         /* under lock */
} pl = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One waiting call, on its thread's stack while it is parked. */
struct pwait {
    struct weft_thread *self; /* the parked thread; immutable */
    int fd;                   /* its duplicate of the caller's descriptor; immutable */
    uint32_t events;          /* EPOLLIN or EPOLLOUT; immutable */
    int err;                  /* set by arm: why the registration failed, 0 if it did not */
};

static void *poller_main(void *arg)
{
    (void)arg;
    struct epoll_event ev[POLL_BATCH];
    for (;;) {
        int n = epoll_wait(pl.epfd, ev, POLL_BATCH, -1);
        if (n < 0 && weft__errno_get() != EINTR)
            weft__panic("io: the poller's epoll_wait failed: %s", strerror(weft__errno_get()));
        for (int i = 0; i < n; i++) {
            struct pwait *p = ev[i].data.ptr;
            if (!p)
                return NULL; /* stopped: there are no waiters left */
            /* one-shot: exactly one event per registration, so exactly
             * one ready per park; p is not touched after */
            weft__ready(p->self);
        }
    }
}

/* 1 once the poller runs; starts it on first use. */
static int poller_on(void)
{
    /* acquire: pairs with the release store below (epfd is set up). */
    int s = atomic_load_explicit(&pl.state, memory_order_acquire);
    if (s != P_OFF)
        return s == P_ON;
    pthread_mutex_lock(&pl.lock);
    s = atomic_load_explicit(&pl.state, memory_order_relaxed);
    if (s == P_OFF) {
        s = P_FAILED;
        int ep = epoll_create1(EPOLL_CLOEXEC);
        int stop = ep >= 0 ? eventfd(0, EFD_CLOEXEC) : -1;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        if (stop >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, stop, &ev) == 0) {
            pl.epfd = ep;
            pl.stopfd = stop;
            pthread_attr_t a;
            if (pthread_attr_init(&a) == 0) {
                pthread_attr_setstacksize(&a, POLLER_STACK);
                if (weft__kthread_start(&pl.pt, &a, poller_main, NULL, "weft-poller") == 0)
                    s = P_ON;
                pthread_attr_destroy(&a);
            }
        }
        if (s != P_ON) {
            if (stop >= 0)
                close(stop);
            if (ep >= 0)
                close(ep);
        }
        /* release: pairs with the acquire above. */
        atomic_store_explicit(&pl.state, s, memory_order_release);
    }
    pthread_mutex_unlock(&pl.lock);
    return s == P_ON;
}

void weft__poller_shutdown(void)
{
    pthread_mutex_lock(&pl.lock);
    if (atomic_load_explicit(&pl.state, memory_order_relaxed) == P_ON) {
        uint64_t one = 1;
        if (write(pl.stopfd, &one, sizeof one) != (ssize_t)sizeof one)
            weft__panic("io: cannot stop the poller: %s", strerror(weft__errno_get()));
        pthread_join(pl.pt, NULL);
        close(pl.stopfd);
        close(pl.epfd);
    }
    atomic_store_explicit(&pl.state, P_OFF, memory_order_relaxed);
    pthread_mutex_unlock(&pl.lock);
}

/* Park commit: the thread's context is saved, the poller may ready it at
 * once. 0 (resume now) when the registration failed. */
static int arm(void *arg, struct weft_thread *self)
{
    struct pwait *p = arg;
    (void)self;
    struct epoll_event ev = { .events = p->events | EPOLLONESHOT, .data.ptr = p };
    if (epoll_ctl(pl.epfd, EPOLL_CTL_ADD, p->fd, &ev) == 0)
        return 1;
    p->err = weft__errno_get();
    return 0;
}

/* Parks until fd is ready for events (or errs or hangs up): 0, or -1 with
 * errno when it cannot wait. */
static int wait_ready(int fd, uint32_t events)
{
    struct pwait p = { weft__self(), fd, events, 0 };
    weft__thread_wait(p.self, WEFT__WAIT_IO);
    weft__park(arm, &p);
    if (p.err) {
        weft__errno_set(p.err);
        return -1;
    }
    epoll_ctl(pl.epfd, EPOLL_CTL_DEL, fd, NULL);
    return 0;
}

/* The transfer, without blocking; plain: fd is O_NONBLOCK (a FIFO's twin,
 * design block), where RWF_NOWAIT would be refused. */
static long try_once(int out, int sock, int plain, int fd, void *buf, size_t n, int flags)
{
    if (sock)
        return out ? send(fd, buf, n, flags | MSG_DONTWAIT)
                   : recv(fd, buf, n, flags | MSG_DONTWAIT);
    if (plain)
        return out ? write(fd, buf, n) : read(fd, buf, n);
    struct iovec iov = { buf, n };
    return out ? pwritev2(fd, &iov, 1, -1, RWF_NOWAIT) : preadv2(fd, &iov, 1, -1, RWF_NOWAIT);
}

/* After a send waited: the error a send blocked in the kernel would have
 * woken with. A peer that closes with data unread leaves ECONNRESET as the
 * socket's pending error, which the blocked send reports (and clears), while
 * a new send sees the shutdown first and fails with EPIPE (and SIGPIPE).
 * Returns -1 with errno set to the pending error, or 0. */
static long woken_error(int fd)
{
    int e = weft__io_sock_error(fd);
    if (e == 0)
        return 0;
    weft__errno_set(e);
    return -1;
}

/* 1 when a blocking call on fd would not wait: O_NONBLOCK, or a timeout
 * the kernel keeps (-1: the caller must make the blocking call itself). */
static int wont_wait(int fd, int sock, int out, int flags)
{
    if (flags & MSG_DONTWAIT)
        return 1;
    if (weft__io_nonblocking(fd))
        return 1;
    struct timeval tv = { 0, 0 };
    socklen_t len = sizeof tv;
    if (sock && getsockopt(fd, SOL_SOCKET, out ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, &len) == 0 &&
        (tv.tv_sec || tv.tv_usec))
        return -1;
    return 0;
}

/* own, a descriptor the library just made for a waiting call (-1: none),
 * if it lies below the top of the descriptor space (FD_RESERVE_DIV of it,
 * at least FD_RESERVE_MIN), else -1 (closed): the kernel's blocked call
 * takes no descriptor, so ours must not take the ones a program near its
 * limit opens next. */
static int spare_only(int own)
{
    struct rlimit rl;
    if (own < 0)
        return -1;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        close(own);
        return -1;
    }
    rlim_t reserve = rl.rlim_cur / FD_RESERVE_DIV;
    if (reserve < FD_RESERVE_MIN)
        reserve = FD_RESERVE_MIN;
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)own + reserve >= rl.rlim_cur) {
        close(own);
        own = -1;
    }
    return own;
}

int weft__io_dup_spare(int fd)
{
    return spare_only(fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

/* The twin of FIFO fd (design block): O_NONBLOCK, with fd's access mode,
 * below the reserve as a duplicate is; -1 when none can be had. */
static int fifo_twin(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -1;
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return spare_only(open(path, (fl & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
}

/* The rest of a transfer that made progress but can wait no more: the
 * blocking call itself, its worker handed off. */
struct rest {
    int out, sock, fd, flags;
    void *buf;
    size_t n;
    long res;
};

static void rest_blocking(void *arg)
{
    struct rest *r = arg;
    if (r->sock)
        r->res = r->out ? send(r->fd, r->buf, r->n, r->flags) : recv(r->fd, r->buf, r->n, r->flags);
    else
        r->res = r->out ? write(r->fd, r->buf, r->n) : read(r->fd, r->buf, r->n);
}

/* No poller: lets the worker's other threads run before the next try
 * (design block); *rounds counts the fruitless tries. */
static void yield_wait(unsigned *rounds)
{
    if (++*rounds <= YIELD_ROUNDS) {
        weft_yield();
        return;
    }
    unsigned k = *rounds - YIELD_ROUNDS;
    long ns = YIELD_SLEEP_MIN_NS;
    while (k-- > 1 && ns < YIELD_SLEEP_MAX_NS)
        ns *= 2;
    if (ns > YIELD_SLEEP_MAX_NS)
        ns = YIELD_SLEEP_MAX_NS;
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
    weft_yield();
}

int weft__poller_transfer(int out, int sockcall, int fd, void *buf, size_t n, int flags, long *res)
{
    struct weft__worker *w = weft__tls_worker;
    if (!w || !w->current || n == 0 || (flags & MSG_WAITALL))
        return 0; /* may block its kernel thread; nothing to wait for; all or nothing */
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    int sock = S_ISSOCK(st.st_mode);
    if (!sock && !(S_ISFIFO(st.st_mode) && !sockcall))
        return 0;             /* recv and send on a pipe: ENOTSOCK from the call itself */
    int polled = poller_on(); /* else try, yield and try again (design block) */
    unsigned rounds = 0;
    n = weft__io_clamp(n); /* a write goes on until n is written: no further than write(2) */
    char *p = buf;
    size_t done = 0;
    int own = -1; /* our duplicate, once we waited, or a FIFO's twin */
    int twin = 0; /* own is a FIFO's twin */
    long r;
    for (;;) {
        r = try_once(out, sock, twin, own >= 0 ? own : fd, p + done, n - done, flags);
        if (r < 0 && weft__errno_get() == EOPNOTSUPP && !sock && !twin) {
            /* a named pipe: refused before anything was done */
            if (weft__io_nonblocking(fd)) {
                *res = out ? write(fd, p, n) : read(fd, p, n); /* never waits */
                return 1;
            }
            if ((own = fifo_twin(fd)) < 0)
                return 0;
            twin = 1;
            continue;
        }
        if (r >= 0) {
            done += (size_t)r;
            if (!out || done == n)
                break;
            continue; /* a blocking write goes on until all is written */
        }
        if (weft__errno_get() == EINTR)
            continue;
        if (weft__errno_get() != EAGAIN && weft__errno_get() != EWOULDBLOCK)
            break;
        if (own < 0) {
            int ww = wont_wait(fd, sock, out, flags);
            if (ww > 0)
                break; /* EAGAIN, as the call would give */
            if (ww == 0)
                own = weft__io_dup_spare(fd);
            if (own < 0 && done == 0)
                return 0;
        }
        if (!polled) {
            yield_wait(&rounds);
            continue;
        }
        if (own < 0 || wait_ready(own, out ? EPOLLOUT : EPOLLIN) != 0) {
            if (done == 0) {
                if (own >= 0)
                    close(own);
                return 0;
            }
            int bfd = own >= 0 && !twin ? own : fd; /* a blocking one */
            struct rest rest = { out, sock, bfd, flags, p + done, n - done, 0 };
            weft_blocking(rest_blocking, &rest);
            r = rest.res;
            if (r > 0)
                done += (size_t)r;
            break;
        }
        if (sock && out && (r = woken_error(own)) < 0)
            break;
    }
    int err = weft__errno_get();
    if (own >= 0)
        close(own);
    if (done > 0) {
        *res = (long)done;
    } else {
        *res = r;
        weft__errno_set(err);
    }
    return 1;
}

/* ---- sleeping ----------------------------------------------------------- */

struct psleep {
    struct weft__timer timer; /* the service owns it from arm until it fires */
    struct weft_thread *self; /* immutable */
    int err;                  /* set by arm_sleep when the timer cannot be armed */
};

/* Timer callback (service thread, under the service lock). */
static void wake_sleeper(struct weft__timer *t)
{
    struct psleep *s = (struct psleep *)((char *)t - offsetof(struct psleep, timer));
    weft__ready(s->self); /* s may be gone once this returns */
}

static int arm_sleep(void *arg, struct weft_thread *self)
{
    struct psleep *s = arg;
    (void)self;
    s->err = weft__timer_arm(&s->timer);
    return s->err == 0;
}

int weft__poller_sleep(uint64_t ns)
{
    struct weft__worker *w = weft__tls_worker;
    if (!w || !w->current)
        return 0;
    struct psleep s;
    memset(&s, 0, sizeof s);
    s.self = weft__self();
    clock_gettime(CLOCK_MONOTONIC, &s.timer.when);
    uint64_t sec =
        ns / WEFT_NS_PER_S + ((uint64_t)s.timer.when.tv_nsec + ns % WEFT_NS_PER_S) / WEFT_NS_PER_S;
    s.timer.when.tv_sec += (time_t)sec;
    s.timer.when.tv_nsec =
        (long)(((uint64_t)s.timer.when.tv_nsec + ns % WEFT_NS_PER_S) % WEFT_NS_PER_S);
    s.timer.realtime = 0;
    s.timer.fire = wake_sleeper;
    weft__thread_wait(s.self, WEFT__WAIT_SLEEP);
    weft__park(arm_sleep, &s);
    return s.err == 0;
}
