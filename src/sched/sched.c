/* sched.c: the worker loop, stealing, idling and waking, the injection
 * queue, and park/ready (design notes in sched.h).
 *
 * Idling: a worker without work spins for a short while (stealing,
 * checking the injection queue) and then sleeps on its own futex word.
 * Sleep and wake form a Dekker pair: the sleeper marks itself sleeping
 * (seq_cst), then re-checks every source of work; a producer publishes work,
 * issues a seq_cst fence, then reads nsleeping. One of the two always sees
 * the other, so no wake-up is lost. At most one untargeted wake-up is in
 * flight (rt.waking, as Go's "spinning" M): the woken worker clears it and,
 * when it finds more work than it takes, wakes the next one.
 * A worker's deque is always drained by its own (awake) owner, so a missed
 * untargeted wake could only cost parallelism; the injection queue and the
 * pinned initial thread use reliable (targeted) wake-ups.
 */
#include "sched/sched.h"
#include "sched/events.h"

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>

#include "os/futex.h"
#include "os/kwait.h"
#include "sched/account.h"
#include "sched/bell.h"
#include "sched/switch.h"

struct weft__rt weft__rt;

#define SPIN_NS    50000 /* how long an idle worker looks for work before sleeping */
#define WAKE_TOKEN 8u    /* a final wait-word value: woken, holding rt.waking */
/* An idle worker's round between looks for work: RELAX_SPINS pause
 * instructions; under WEFT_WAIT=spin it lets the kernel run others every
 * IDLE_YIELD_EVERY rounds (a power of two). */
#define RELAX_SPINS      32
#define IDLE_YIELD_EVERY 1024u

/* ---- mailbox and attention ------------------------------------------------ */

void weft__mail(struct weft__worker *v, struct weft_thread *t)
{
    weft__lock_acquire(&v->mb_lock);
    weft__tq_push(&v->mb, t);
    /* release: the queued thread is visible before the flag; the owner
     * re-reads the list under mb_lock anyway. */
    atomic_fetch_or_explicit(&v->attn, WEFT__ATTN_MAIL, memory_order_release);
    weft__lock_release(&v->mb_lock);
    weft__wake_worker(v);
}

/* Owner: drain the mailbox into the yield FIFO; serve steal requests by
 * moving yielded threads to the deque, where thieves can take them. */
void weft__attend(struct weft__worker *w)
{
    uint32_t a = atomic_load_explicit(&w->attn, memory_order_acquire);
    if (a & WEFT__ATTN_MAIL) {
        weft__lock_acquire(&w->mb_lock);
        struct weft_thread *t = weft__tq_take_all(&w->mb);
        atomic_fetch_and_explicit(&w->attn, ~WEFT__ATTN_MAIL, memory_order_relaxed);
        weft__lock_release(&w->mb_lock);
        const struct weft__pool_ops *pool = weft__pool();
        while (t) {
            struct weft_thread *n = t->next;
            pool->push(w, t);
            t = n;
        }
    }
    if (a & WEFT__ATTN_IO)
        weft__rt.io->attend(w);
    if (a & WEFT__ATTN_WANT) {
        atomic_fetch_and_explicit(&w->attn, ~WEFT__ATTN_WANT, memory_order_relaxed);
        weft__rt.dflt_pool->share(w); /* other pools' thieves take from them directly */
    }
}

/* A thread readied on w while w's deque is full and cannot grow (out of
 * memory): it waits in w's yield FIFO instead, linked through its
 * descriptor, behind the yielded threads. It stays visible to every check
 * for local work (w->yq), thieves get it through WEFT__ATTN_WANT, and the
 * owner runs it once the deque is empty. Every deque is a worker's. */
void weft__deque_overflow(struct weft__deque *d, struct weft_thread *x)
{
    struct weft__worker *w = (struct weft__worker *)((char *)d - offsetof(struct weft__worker, dq));
    weft__yq_push(w, x);
}

/* weft__make_ready for a plug-in pool, or the pinned initial thread readied
 * on another worker than 0. */
void weft__make_ready_slow(struct weft__worker *w, struct weft_thread *t)
{
    if (weft__pool_plugged()) {
        weft__pool()->push(w, t);
        if (t->pinned && w->id != 0)
            weft__wake_worker(weft__worker0()); /* only worker 0 may run it */
        else
            weft__maybe_wake();
        return;
    }
    weft__mail(weft__worker0(), t); /* t->pinned, w is not worker 0 */
}

/* ---- injection queue ------------------------------------------------------ */

void weft__inject(struct weft_thread *t)
{
    int c = weft__cls(t); /* read before t is published: it may run at once */
    weft__lock_acquire(&weft__rt.inj_lock);
    weft__tq_push(&weft__rt.inj[c - WEFT_PRIO_BACKGROUND], t);
    atomic_fetch_add_explicit(&weft__rt.ninj, 1, memory_order_relaxed);
    /* Every worker's next scheduling point takes the slow pick and looks
     * here (weft__take_injected clears the bit under this lock once the
     * queue is empty, so no set is lost). relaxed: a hint, as ninj. */
    for (int i = 0; i < weft__rt.nworkers; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        if (v && !(atomic_load_explicit(&v->gate, memory_order_relaxed) & WEFT__GATE_INJ))
            atomic_fetch_or_explicit(&v->gate, WEFT__GATE_INJ, memory_order_relaxed);
    }
    weft__lock_release(&weft__rt.inj_lock);
    /* seq_cst: as in weft__maybe_wake, but unconditionally: no worker may be
     * awake to notice this thread otherwise. */
    weft__fence();
    if (atomic_load_explicit(&weft__rt.nsleeping, memory_order_relaxed) > 0)
        weft__wake_one();
    else if (weft__pool_plugged())
        weft__rt.preempt_class(c); /* every worker busy: maybe a lower class */
}

/* Under inj_lock. */
static struct weft_thread *inj_pop_locked(void)
{
    struct weft_thread *t = NULL;
    for (int i = WEFT_PRIO_URGENT - WEFT_PRIO_BACKGROUND; i >= 0 && !t; i--)
        t = weft__tq_pop(&weft__rt.inj[i]);
    if (t)
        atomic_fetch_sub_explicit(&weft__rt.ninj, 1, memory_order_relaxed);
    return t;
}

struct weft_thread *weft__inject_pop(void)
{
    if (atomic_load_explicit(&weft__rt.ninj, memory_order_relaxed) == 0)
        return NULL;
    weft__lock_acquire(&weft__rt.inj_lock);
    struct weft_thread *t = inj_pop_locked();
    weft__lock_release(&weft__rt.inj_lock);
    return t;
}

/* Moves one injected thread to w's pool (see below for where);
 * clears w's GATE_INJ once the queue is empty. */
void weft__take_injected(struct weft__worker *w)
{
    weft__lock_acquire(&weft__rt.inj_lock);
    struct weft_thread *t = inj_pop_locked();
    if (atomic_load_explicit(&weft__rt.ninj, memory_order_relaxed) == 0)
        atomic_fetch_and_explicit(&w->gate, ~WEFT__GATE_INJ, memory_order_relaxed);
    weft__lock_release(&weft__rt.inj_lock);
    /* Behind the ready threads of its class: the queue is a FIFO shared by
     * every worker (and preempted threads wait there, preempt.c), so that
     * a worker that takes one at each pick never starves its own. */
    if (t)
        weft__push_yield(w, t);
}

/* weft__pick_local when w->attn or w->gate is not zero: serve attention
 * (whatever bits are set: weft__attend knows them), take an injected thread
 * so that none starves behind a busy worker, then pick from the pool. */
struct weft_thread *weft__pick_slow(struct weft__worker *w)
{
    /* relaxed: hints, re-read under the locks they stand for. */
    uint32_t gate = atomic_load_explicit(&w->gate, memory_order_relaxed);
    /* A pick by a user thread precedes its switch out: check its canary
     * here, off every fast path (stack.c). */
    if ((gate & WEFT__GATE_CANARY) && w->current)
        weft__stack_check(w->current);
    if (atomic_load_explicit(&w->attn, memory_order_relaxed)) {
        weft__attend(w);
        /* worker 0 must go back to the main kernel thread: through the
         * scheduler context, which releases it (machine.c) */
        if (weft__reclaimed(w))
            return NULL;
    }
    if (gate & WEFT__GATE_INJ)
        weft__take_injected(w);
    struct weft_thread *t = weft__pool()->pop(w);
    if ((gate & WEFT__GATE_TRACE) && t && w->current) /* the picker switches to t */
        weft__trace(w, WEFT__EV_RUN, t, 0);
    return t;
}

int weft__has_ready(struct weft__worker *w)
{
    /* relaxed: hints; a miss costs a caller one round. */
    if (atomic_load_explicit(&w->attn, memory_order_relaxed) & ~(WEFT__ATTN_IO | WEFT__ATTN_RESCUE))
        return 1;
    if (atomic_load_explicit(&weft__rt.ninj, memory_order_relaxed) > 0)
        return 1;
    return weft__pool()->has_ready(w);
}

/* Acts on the thread that left the CPU for us (see "Hand-off" in sched.h);
 * x is not NULL. An exit nobody waited for never gets here in plain
 * builds: the switch itself marks it done (weft__switch_exit). */
static void handle_xfer(struct weft__worker *w, uintptr_t x)
{
    struct weft_thread *t = (struct weft_thread *)(x & ~XF_MASK);
    switch (x & XF_MASK) {
    case XF_EXIT: weft__rt.exited(w, t); break;
    case XF_PUSH: weft__make_ready(w, t); break;
    case XF_YIELD: weft__push_yield(w, t); break;
    case XF_FRONT: weft__push_front(w, t); break;
    case XF_PARK: {
        /* Copy before commit: once committed, the parked thread may be
         * readied and resumed elsewhere, ending the record's life. */
        struct weft__parkx *p = (struct weft__parkx *)t;
        struct weft_thread *pt = p->t;
        weft__commit_fn commit = p->commit;
        void *arg = p->arg;
        if (commit && !commit(arg, pt))
            weft__make_ready(w, pt);
        break;
    }
    default: weft__panic("sched: bad xfer %#lx", (unsigned long)x);
    }
}

/* ---- stealing -------------------------------------------------------------- */

static struct weft_thread *steal_work(struct weft__worker *w)
{
    if (weft__rt.nworkers < 2)
        return NULL;
    const struct weft__pool_ops *pool = weft__pool();
    return pool->steal ? pool->steal(w) : NULL;
}

static struct weft_thread *find_work(struct weft__worker *w)
{
    struct weft_thread *t = weft__pick_local(w);
    if (!t)
        t = weft__inject_pop();
    if (!t)
        t = steal_work(w);
    return t;
}

static int has_work_anywhere(struct weft__worker *w)
{
    if (atomic_load_explicit(&weft__rt.ninj, memory_order_relaxed) > 0)
        return 1;
    /* Own yielded threads and mail; others' deques. Others' yield FIFOs do
     * not count: only their owners run them (or hand them over on request,
     * waking us through weft__maybe_wake). */
    if (w->yq || (atomic_load_explicit(&w->attn, memory_order_relaxed) &
                  ~(WEFT__ATTN_IO | WEFT__ATTN_RESCUE)))
        return 1;
    if (weft__rt.task->has_work())
        return 1;
    return weft__pool()->has_work(w);
}

/* ---- sleeping and waking ----------------------------------------------------- */

static void go_to_sleep(struct weft__worker *w)
{
    __atomic_store_n(&w->nsleeps, w->nsleeps + 1, __ATOMIC_RELAXED); /* weft_stats_get reads it */
    /* I/O in flight: sleep in the ring, where completions also wake us. */
    int ring = weft__rt.io->pending(w);
    atomic_store_explicit(&w->sleep_in_ring, (uint32_t)ring, memory_order_seq_cst);
    atomic_store_explicit(&w->sleeping, 1, memory_order_seq_cst);
    /* seq_cst: pairs with the fences in weft__maybe_wake / weft__inject. */
    atomic_fetch_add_explicit(&weft__rt.nsleeping, 1, memory_order_seq_cst);
    if (!has_work_anywhere(w) && !atomic_load_explicit(&weft__rt.stopping, memory_order_seq_cst)) {
        if (ring) {
            if (atomic_load_explicit(&w->wake, memory_order_acquire) < WEFT__WORD_DONE)
                weft__rt.io->idle_wait(w); /* one completion or a wake-up */
        } else {
            /* The wait policy's kernel-thread wait (sync/wait.c): UMWAIT
             * where the CPU has it, then the futex; the waker pays a futex
             * wake only if we got that far (SLEEPER). We spun already. */
            weft__wait_word(&w->wake, 0, NULL, 0);
        }
    }
    atomic_fetch_sub_explicit(&weft__rt.nsleeping, 1, memory_order_seq_cst);
    atomic_store_explicit(&w->sleeping, 0, memory_order_seq_cst);
    weft__monitor_kick(); /* it may sleep, all workers having slept */
    /* acq_rel: consume the wake; WAKE_TOKEN: we held the global wake token. */
    if ((atomic_exchange_explicit(&w->wake, WEFT__WORD_WAITING, memory_order_acq_rel) &
         ~WEFT__WORD_SLEEPER) == WAKE_TOKEN)
        atomic_store_explicit(&weft__rt.waking, 0, memory_order_seq_cst);
}

/* Claims v's wake word for one wake-up (val: WEFT__WORD_WOKEN, or
 * WAKE_TOKEN when the caller hands over rt.waking); then knocks on the door
 * v sleeps behind: its ring's eventfd, or the futex if it set SLEEPER.
 * Returns 0 if v was being woken already. */
static int claim_and_knock(struct weft__worker *v, uint32_t val)
{
    /* acq_rel: publishes our work before v's wait ends; pairs with the
     * acquire loads in weft__wait_word and go_to_sleep. */
    uint32_t cur = atomic_load_explicit(&v->wake, memory_order_relaxed);
    do {
        if ((cur & ~(uint32_t)WEFT__WORD_SLEEPER) >= WEFT__WORD_DONE)
            return 0;
    } while (!atomic_compare_exchange_weak_explicit(&v->wake, &cur, val, memory_order_acq_rel,
                                                    memory_order_relaxed));
    if (atomic_load_explicit(&v->sleep_in_ring, memory_order_seq_cst))
        weft__rt.io->wake(v);
    else if (cur & WEFT__WORD_SLEEPER)
        weft__futex_wake(&v->wake, 1);
    return 1;
}

void weft__wake_one(void)
{
    if (atomic_load_explicit(&weft__rt.waking, memory_order_relaxed) ||
        atomic_exchange_explicit(&weft__rt.waking, 1, memory_order_acq_rel))
        return;
    int n = weft__rt.nworkers;
    for (int i = 0; i < n; i++) {
        struct weft__worker *v = weft__rt.workers[i];
        if (atomic_load_explicit(&v->sleeping, memory_order_seq_cst) &&
            claim_and_knock(v, WAKE_TOKEN))
            return;
    }
    atomic_store_explicit(&weft__rt.waking, 0, memory_order_release);
}

void weft__wake_worker(struct weft__worker *v)
{
    /* seq_cst: the work given to v is published before we read v->sleeping;
     * pairs with the seq_cst store in go_to_sleep. */
    weft__fence();
    if (atomic_load_explicit(&v->sleeping, memory_order_seq_cst))
        claim_and_knock(v, WEFT__WORD_WOKEN);
}

/* ---- the scheduler context ------------------------------------------------- */

/* The resumed half of every switch (arch/context.h): runs on the resumed
 * stack when the xfer is not NULL (always in sanitizer builds). token is
 * the resumer's worker, which is ours now, and its current is the resumed
 * thread (NULL: w's scheduler context). */
void weft__ctx_resumed(void *token, void *xfer)
{
    struct weft__worker *w = token;
#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)
    if (!w) { /* a machine's home (machine.c), resumed with no xfer */
        weft__san_resumed(weft__tls_home->fake);
        return;
    }
    struct weft_thread *self = w->current;
    weft__san_resumed(self ? self->san_fake_stack : w->sched_fake_stack);
    if (!xfer)
        return;
#endif
    handle_xfer(w, (uintptr_t)xfer);
    /* Install errno again: the hand-off may have called out (see
     * sched/switch.h). Re-read current rather than keep it across the
     * hand-off's calls. */
    struct weft_thread *cur = w->current;
    if (cur)
        *w->errno_loc = cur->err;
}

int weft__worker_loop(struct weft__worker *w)
{
    /* The wait policy (WEFT_WAIT, sync/wait.c) sets how long an idle worker
     * looks for work before it sleeps: spin never sleeps (it only lets the
     * kernel run others now and then), futex sleeps at once. */
    enum weft__wait_policy policy = weft__wait_policy();
    uint64_t spin_ns = policy == WEFT__WAIT_FUTEX ? 0 : SPIN_NS;
    unsigned rounds = 0;
    uint64_t idle_since = 0;
    for (;;) {
        if (WEFT_UNLIKELY(weft__reclaimed(w)))
            return WEFT__LOOP_RECLAIMED;
        /* Local tasks first (a thread that switched here to let them run,
         * weft_finalize's, is queued already); stolen ones after threads. */
        int ntasks = weft__rt.task->run(w, 0);
        struct weft_thread *t = find_work(w);
        if (t) {
            idle_since = 0;
            if (WEFT_UNLIKELY(weft__trace_on))
                weft__trace(w, WEFT__EV_RUN, t, 0);
            weft__switch_from_sched(w, t);
            continue;
        }
        if (ntasks || weft__rt.task->run(w, 1)) {
            idle_since = 0;
            continue;
        }
        if (atomic_load_explicit(&weft__rt.stopping, memory_order_acquire))
            return WEFT__LOOP_STOPPED;
        if (policy == WEFT__WAIT_SPIN && !weft__rt.io->pending(w)) {
            if ((++rounds & (IDLE_YIELD_EVERY - 1)) == 0)
                sched_yield();
            for (int i = 0; i < RELAX_SPINS; i++)
                weft__cpu_relax();
            continue;
        }
        uint64_t now = weft__now_ns();
        if (!idle_since) {
            idle_since = now;
        } else if (now - idle_since >= spin_ns) {
            go_to_sleep(w);
            idle_since = 0;
            continue;
        }
        for (int i = 0; i < RELAX_SPINS; i++)
            weft__cpu_relax();
    }
}

/* ---- a work-first child's parent ---------------------------------------- */

void weft__parent_ready_slow(struct weft__worker *w, struct weft_thread *parent,
                             struct weft_thread *child)
{
    weft__make_ready_slow(w, parent);
    if (weft__cls(parent) <= weft__cls(child))
        return;
    /* A lower-priority child is queued: it has not started its function
     * yet, so it goes behind its class's ready threads unseen. */
    w = weft__worker_now();
    weft__switch(w, child, weft__pick_local(w), (uintptr_t)child | XF_PUSH);
}

/* ---- yield to the front --------------------------------------------------- */

void weft__push_front(struct weft__worker *w, struct weft_thread *t)
{
    const struct weft__pool_ops *pool = weft__pool();
    if (pool->push_front)
        pool->push_front(w, t);
    else
        pool->push(w, t);
}

void weft__yield_front(void)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self;
    if (!w || !(self = w->current)) {
        sched_yield();
        return;
    }
    struct weft_thread *next = weft__pick_local(w);
    if (next || weft__reclaimed(w))
        weft__switch(w, self, next, (uintptr_t)self | XF_FRONT);
}

/* ---- park / ready -------------------------------------------------------- */

struct weft_thread *weft__self(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w ? w->current : NULL;
}

void weft__park(weft__commit_fn commit, void *arg)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w->current;
    weft__stack_check(self);
    weft__acct_stamp(self);
    struct weft__parkx p = { self, commit, arg };
    if (WEFT_UNLIKELY(weft__trace_on))
        weft__trace_pending(w, WEFT__RUN_PARKED | weft__thread_waits(self) << WEFT__RUN_WAIT_SHIFT);
    struct weft_thread *next = weft__pick_local(w);
    if (WEFT_UNLIKELY(weft__trace_on) && !next)
        weft__trace_leave(w, self);
    weft__switch(w, self, next, (uintptr_t)&p | XF_PARK);
    weft__thread_wait(self, WEFT__WAIT_NONE); /* resumed: not waiting any more */
}

void weft__ready(struct weft_thread *t)
{
    weft__acct_stamp(t);
    struct weft__worker *w = weft__tls_worker;
    weft__thread_wait(t, WEFT__WAIT_NONE); /* ready now; still ours until queued */
    if (WEFT_UNLIKELY(weft__trace_on))
        weft__trace(w, WEFT__EV_WAKE, t, 0);
    if (w) {
        weft__make_ready(w, t);
        return;
    }
    if (t->pinned) {
        weft__mail(weft__worker0(), t);
        return;
    }
    weft__inject(t);
}
