/* park.c: a futex for weft: wait while a word holds a value, wake waiters.
 *
 * The waits that weft's public objects cannot express (condition
 * variables that a signal or a cancellation must break off, timeouts,
 * rwlocks, barriers, once, semaphores) are written as futex algorithms on
 * a word in the object, and this is their futex: buckets hashed by
 * address, each an internal lock over a FIFO of weft's waiter records
 * (sync/wait.h), so a user thread parks and a kernel thread (one the
 * program made without the drop-in) sleeps, through weft's one wait
 * mechanism; a user thread's deadline is a timer of weft's timer service.
 * The word is read under the bucket's lock, which every wake of that word
 * takes too: no wake-up is lost between the check and the sleep. A wake of
 * one takes the oldest waiter (FIFO), which a condition variable's signal
 * relies on. Process-private only (a word in another process is another
 * address).
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "io/io.h"
#include "posix/posix.h"
#include "sync/timer.h"
#include "sync/wait.h"

#define NBUCKETS    256
#define INTERRUPTED 1 /* waiter.w.data: woken by weft__posix_interrupt */

struct waiter {
    struct weft__waiter w;    /* linked in the bucket's queue (sync/wait.h) */
    struct weft__timer timer; /* a user thread's deadline; armed between arm and cancel */
    _Atomic uint32_t *addr;   /* the word waited on; immutable while queued */
    struct pt *owner;         /* the user thread's record, for pthread_kill; NULL: none */
};

static struct bucket {
    weft__lock lock;
    struct weft__waitq q; /* under lock */
} __attribute__((aligned(64))) buckets[NBUCKETS];

static struct bucket *bucket_of(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    a ^= a >> 17;
    a *= 0x9E3779B97F4A7C15ull;
    return &buckets[(a >> 40) % NBUCKETS];
}

static void expire(struct weft__timer *t)
{
    struct waiter *pw = (struct waiter *)((char *)t - offsetof(struct waiter, timer));
    weft__waiter_expire(&pw->w);
}

int weft__posix_park(_Atomic uint32_t *addr, uint32_t val, clockid_t clk,
                     const struct timespec *abs)
{
    struct bucket *b = bucket_of(addr);
    struct waiter pw;
    weft__waiter_init(&pw.w, WEFT__WAIT_COND);
    pw.w.data = 0;
    pw.addr = addr;
    pw.owner = NULL;
    int realtime = clk == CLOCK_REALTIME;
    if (abs && weft__posix_timed_out(clk, abs))
        return ETIMEDOUT;
    int user_timer = abs && pw.w.thread;
    if (user_timer) {
        pw.timer.when = *abs;
        pw.timer.realtime = realtime;
        pw.timer.slot = 0;
        pw.timer.fire = expire;
        if (weft__timer_arm(&pw.timer) != 0)
            return EAGAIN; /* the caller looks again, and waits again */
    }
    struct pt *me = weft__posix_self_if_any();
    int user = me && me->h;
    /* A user thread announces its record before the bucket's lock, whose
     * locked instruction orders that store before its look at its pending
     * signals below (x86): an interrupter sets the signal pending, then
     * reads parked, so either it finds the record (and waits for the
     * lock: weft__posix_interrupt) or we see its signal. Looking first and
     * announcing after lost a pthread_kill that came in between. The
     * record's fields are set before (release). */
    if (user)
        atomic_store_explicit(&me->parked, &pw, memory_order_release);
    weft__sync_lock(&b->lock);
    /* seq_cst: the waker changes the word, then looks for waiters under
     * the lock; we look at the word under it. */
    int r = atomic_load(addr) != val ? EAGAIN : 0;
    if (!r && user) {
        if (weft__posix_sig_ready(me))
            r = EINTR;
        else
            pw.owner = me; /* queued below, under the lock: interruptible */
    }
    if (r) {
        if (user)
            atomic_store_explicit(&me->parked, NULL, memory_order_relaxed);
        weft__sync_unlock(&b->lock);
        if (user_timer)
            weft__timer_cancel(&pw.timer);
        return r;
    }
    weft__waitq_push(&b->q, &pw.w);
    weft__sync_unlock(&b->lock);
    uint32_t v = weft__waiter_block(&pw.w, 0, user_timer ? NULL : abs, realtime);
    if (v == WEFT__WORD_TIMEDOUT) {
        weft__sync_lock(&b->lock);
        weft__waitq_remove(&b->q, &pw.w);
        if (pw.owner)
            atomic_store_explicit(&pw.owner->parked, NULL, memory_order_relaxed);
        weft__sync_unlock(&b->lock);
        r = ETIMEDOUT;
    } else if (pw.w.data == INTERRUPTED) {
        r = EINTR;
    }
    if (user_timer)
        weft__timer_cancel(&pw.timer);
    return r;
}

/* Under b's lock: takes the record out for a wake (0 if it timed out: then
 * it is its own to take out). */
static int take(struct bucket *b, struct waiter *pw, uintptr_t why)
{
    if (!weft__waiter_claim(&pw->w))
        return 0;
    weft__waitq_remove(&b->q, &pw->w);
    pw->w.data = why;
    if (pw->owner)
        atomic_store_explicit(&pw->owner->parked, NULL, memory_order_relaxed);
    return 1;
}

void weft__posix_unpark(_Atomic uint32_t *addr, int n)
{
    struct bucket *b = bucket_of(addr);
    struct weft__waiter *chain = NULL, **tail = &chain;
    weft__sync_lock(&b->lock);
    for (struct weft__waiter *w = b->q.head, *next; w && n > 0; w = next) {
        next = w->next;
        struct waiter *pw = (struct waiter *)w;
        if (pw->addr != addr || !take(b, pw, 0))
            continue;
        w->next = NULL;
        *tail = w;
        tail = &w->next;
        n--;
    }
    weft__sync_unlock(&b->lock);
    /* claimed records stay valid until woken; each next is read first */
    weft__waiter_wake_list(chain);
}

void (*weft__posix_kinterrupt)(struct pt *p);

void weft__posix_interrupt(struct pt *p)
{
    for (;;) {
        struct waiter *pw = atomic_load(&p->parked);
        if (!pw) {
            /* not here: perhaps on a process-shared word (pshared.c), or in
             * its worker's ring (a read, an accept, a poll), whose request
             * its worker cancels (ECANCELED: rw.c) */
            if (weft__posix_kinterrupt)
                weft__posix_kinterrupt(p);
            if (p->h)
                weft__io_cancel((struct weft_thread *)p->h);
            return;
        }
        /* pw may leave meanwhile, but only under its bucket's lock, which
         * clears p->parked: the address read here may be stale (the stack
         * stays mapped), and the check under the lock says whether it was */
        _Atomic uint32_t *addr = pw->addr;
        struct bucket *b = bucket_of(addr);
        weft__sync_lock(&b->lock);
        /* mine but not queued (owner unset): announced, and its look at
         * its pending signals comes after this lock, so it sees ours */
        int mine = atomic_load(&p->parked) == pw && pw->addr == addr;
        int woke = mine && pw->owner == p && take(b, pw, INTERRUPTED);
        weft__sync_unlock(&b->lock);
        if (woke)
            weft__waiter_wake(&pw->w);
        if (mine)
            return;
    }
}

/* A user thread sleeps parked until a deadline of weft's timer service
 * (a kernel thread of its own), not on its worker's ring: a sleeper whose
 * worker is held by another thread's raw system call is readied by the
 * timer, and a worker with a ready thread is rescued (sched/monitor.c),
 * where a completion waiting in a ring nobody reaps helps nobody. 0, or
 * EINTR when a signal from pthread_kill broke it off (*left: the time left). */
int weft__posix_sleep_until(clockid_t clk, const struct timespec *abs)
{
    _Atomic uint32_t word = 0;
    for (;;) {
        int r = weft__posix_park(&word, 0, clk, abs);
        if (r == ETIMEDOUT)
            return 0;
        if (r == EINTR && weft__posix_deliver())
            return EINTR;
        if (r == EAGAIN) /* the timer could not be armed: a plain sleep */
            return clock_nanosleep(clk, TIMER_ABSTIME, abs, NULL) == 0 ? 0 : errno;
    }
}

struct timespec weft__posix_deadline_ns(uint64_t ns)
{
    struct timespec abs;
    clock_gettime(CLOCK_MONOTONIC, &abs);
    uint64_t t = (uint64_t)abs.tv_nsec + ns % 1000000000u;
    abs.tv_sec += (time_t)(ns / 1000000000u + t / 1000000000u);
    abs.tv_nsec = (long)(t % 1000000000u);
    return abs;
}

void weft__posix_sleep_ns(uint64_t ns)
{
    if (weft__posix_on_user()) {
        struct timespec abs = weft__posix_deadline_ns(ns);
        while (weft__posix_sleep_until(CLOCK_MONOTONIC, &abs) == EINTR)
            ;
        return;
    }
    struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int weft__posix_timed_out(clockid_t clk, const struct timespec *abs)
{
    struct timespec now;
    clock_gettime(clk, &now);
    return now.tv_sec > abs->tv_sec || (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
}
