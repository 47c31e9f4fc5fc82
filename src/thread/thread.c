/* thread.c: the user thread's life cycle, end to end: spawn, join, detach,
 * exit and free (the join word), bound threads, and yield.
 *
 * Join protocol (thread->join, one word):
 *   RUNNING --joiner CAS--> joiner|tag --exit--> DONE    (joiner readied)
 *   RUNNING --detach CAS--> DETACHED   --exit--> FREED
 *   RUNNING --exit-------> DONE        --join or detach CAS--> FREED
 * Only the CAS that leaves DONE (or the exit that leaves DETACHED) frees
 * the slot, so a second join or detach, racing or late, finds FREED (or a
 * new thread's state) and never puts one slot in a cache twice.
 * The exiting thread's last step runs on the next context's stack, so a
 * joiner never frees a stack that is still in use: RUNNING -> DONE is the
 * switch's own CAS in plain builds (weft__switch_exit), anything else is
 * weft__finish_exit, which the scheduler calls for the XF_EXIT xfer. If the
 * joiner is already parked, the exiting thread switches straight to it: a
 * join of a running child costs the child's exit one switch and nothing
 * else.
 */
#include "thread/thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "os/kwait.h"
#include "policy/machine.h"
#include "policy/monitor.h"
#include "policy/prio.h"
#include "sched/events.h"
#include "sched/sched.h"
#include "sched/switch.h"
#include "thread/member.h"

#if defined(WEFT_SANITIZE_ADDRESS)
#include <sanitizer/asan_interface.h>
#endif

/* weft__ctx_spawn names the parent by its saved-sp slot: the descriptor. */
_Static_assert(offsetof(struct weft_thread, sp) == 0, "sp must be the descriptor's first field");

/* Switches away from an exiting thread for good: to `to`, or to w's
 * scheduler context when to is NULL. The next context finishes the exit
 * once this stack is no longer in use: it acts on the XF_EXIT xfer
 * (weft__finish_exit, through weft__ctx_resumed). */
static inline __attribute__((always_inline, noreturn)) void
exit_jump(struct weft__worker *w, struct weft_thread *self, struct weft_thread *to)
{
    weft__switch_exit(w, to, (uintptr_t)self | XF_EXIT, NULL, 0, NULL);
}

/* exit_jump for a thread whose join word was RUNNING: in plain builds the
 * switch marks it DONE on the next context's stack itself (one CAS and the
 * exit count, weft__ctx_exit) and hands it over as an XF_EXIT xfer only if
 * a joiner or detacher came meanwhile; no call of the resumed half. */
static inline __attribute__((always_inline, noreturn)) void
exit_to(struct weft__worker *w, struct weft_thread *self, struct weft_thread *to)
{
    _Static_assert(WEFT__J_RUNNING == 0, "weft__ctx_exit's CAS starts from 0");
    weft__switch_exit(w, to, (uintptr_t)self | XF_EXIT, &self->join, WEFT__J_DONE, &w->nexited);
}

/* The end of a group member's exit, once it has counted itself out of its
 * group (thread/member.h): it leaves for `to`, and its slot is freed with no
 * CAS, as nobody else can name it: by the switch itself in the usual case,
 * else by weft__finish_exit on the next context. */
static inline __attribute__((always_inline, noreturn)) void
member_exit_to(struct weft__worker *w, struct weft_thread *self, struct weft_thread *to)
{
#if !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
    /* The switch pushes the slot on the cache's list as weft__stack_cache_push
     * would. Nothing else runs on w before it does, so the room found here
     * is still there. */
    if (WEFT_LIKELY(weft__stack_cache_fits(&w->cache, self))) {
        /* relaxed: only stale handles read FREED, and a member has none */
        atomic_store_explicit(&self->join, WEFT__J_FREED, memory_order_relaxed);
        weft__switch_exit_push(w, self, to);
    }
#endif
    exit_jump(w, self, to);
}

/* What every exit but the usual ones does first: the canary, a priority to
 * forget (a slot starts NORMAL, thread.h: every exit of a thread with a
 * priority comes here, as priorities set GATE_POOL first), the trace. */
static inline __attribute__((always_inline)) void exit_prelude(struct weft__worker *w,
                                                               struct weft_thread *self)
{
    weft__stack_check(self);
    if (self->prio || self->pcls || self->boost) {
        __atomic_store_n(&self->prio, WEFT_PRIO_NORMAL, __ATOMIC_RELAXED);
        __atomic_store_n(&self->pcls, WEFT_PRIO_NORMAL, __ATOMIC_RELAXED);
        __atomic_store_n(&self->boost, 0, __ATOMIC_RELAXED);
    }
    if (WEFT_UNLIKELY(weft__trace_on))
        weft__trace_pending(w, WEFT__RUN_EXITED);
    if (WEFT_UNLIKELY(weft__eh_get != NULL)) /* every exit, with WEFT__GATE_CXX */
        weft__eh_clear();
}

/* 1 when the only thing that sent w's thread off a fast path is the C++
 * runtime (WEFT__GATE_CXX alone in attn_any: attn in the low half, gate in
 * the high one): the slow path then takes the fast path's steps with the
 * exception state carried (sched/eh.h). relaxed: as the fast paths' test. */
WEFT_INLINE int cxx_gate_alone(struct weft__worker *w)
{
    return atomic_load_explicit(&w->attn_any, memory_order_relaxed) == (uint64_t)WEFT__GATE_CXX
                                                                           << 32;
}

/* A member's exit but for the usual case (thread_exit): a canary to check,
 * attention to serve, waiters to wake. */
static WEFT_NOINLINE __attribute__((noreturn)) void exit_member(struct weft__worker *w,
                                                                struct weft_thread *self)
{
    /* thread_exit's usual case in a program with the C++ runtime loaded
     * (WEFT__GATE_CXX alone), leaving no exception state (sched/eh.h) */
    if (cxx_gate_alone(w) && self->guard != WEFT__GUARD_CANARY &&
        weft__group_leave_quick(self->group)) {
        weft__eh_clear();
        member_exit_to(w, self, weft__pick_default(w));
    }
    /* A thread rescued from a blocked worker (policy/machine.c) ends on a
     * kernel thread without one: it rejoins first (its old worker's attn
     * sent it here; w is stale). */
    if (WEFT_UNLIKELY(weft__rescue_settle()))
        w = weft__worker_now();
    exit_prelude(w, self);
    weft__group_leave(self->group); /* waking waiters only queues them: still on w */
    struct weft_thread *to = weft__pick_local(w);
    if (WEFT_UNLIKELY(weft__trace_on) && !to)
        weft__trace_leave(w, self);
    member_exit_to(w, self, to);
}

/* The general exit: a canary to check, a joiner that may be parked (then
 * the exit switches straight to it), attention to serve. */
static WEFT_NOINLINE __attribute__((noreturn)) void exit_other(struct weft_thread *self)
{
    weft__rescue_settle(); /* as in exit_member */
    struct weft__worker *w = weft__worker_now();
    exit_prelude(w, self);
    /* acquire: a parked joiner published itself with a CAS after its context
     * was saved; switching to it directly is then safe. */
    uintptr_t s = atomic_load_explicit(&self->join, memory_order_acquire);
    struct weft_thread *to;
    if (s != WEFT__J_RUNNING && !(s & (WEFT__J_DETACHED | WEFT__J_KWAIT | WEFT__J_DONE)) &&
        (!((struct weft_thread *)WEFT__J_PTR(s))->pinned || w->id == 0)) {
        to = (struct weft_thread *)WEFT__J_PTR(s);
        if (WEFT_UNLIKELY(weft__trace_on))
            weft__trace(w, WEFT__EV_RUN, to, 0);
    } else
        to = weft__pick_local(w);
    if (WEFT_UNLIKELY(weft__trace_on) && !to)
        weft__trace_leave(w, self);
    if (s == WEFT__J_RUNNING)
        exit_to(w, self, to);
    exit_jump(w, self, to);
}

/* exit_attn's end for a next thread (or, with none, an exiting one)
 * without an id yet. */
static WEFT_NOINLINE __attribute__((noreturn)) void
exit_traced_id(struct weft__worker *w, struct weft_thread *self, struct weft_thread *to)
{
    struct weft__trace_ring *r = weft__trace_ring(w);
    if (to)
        weft__trace_run_as(r, to, WEFT__RUN_EXITED, weft__thread_id_of(to));
    else
        weft__trace_put(r, WEFT__EV_EXIT, 0, weft__thread_id_of(self));
    exit_to(w, self, to);
}

/* thread_exit's usual case (nobody joined or detached yet, no canary) when
 * w's attention word is set: tracing (WEFT_TRACE) sets a gate bit on every
 * worker, so that exits come here and record their event with the fast
 * path's other steps; anything else goes to exit_other. */
static WEFT_NOINLINE __attribute__((noreturn)) void exit_attn(struct weft__worker *w,
                                                              struct weft_thread *self)
{
    /* relaxed, as thread_exit's test: a bit set meanwhile is served at the
     * next switch. attn holds a rescued thread's count (exit_other). A
     * joiner that arrived since thread_exit read RUNNING is met by
     * exit_to's CAS, as on the fast path. WEFT__GATE_CXX alone: the fast
     * path's steps, leaving no exception state (sched/eh.h). */
    if (cxx_gate_alone(w)) {
        weft__eh_clear();
        exit_to(w, self, weft__pick_default(w));
    }
    if (!weft__trace_on || atomic_load_explicit(&w->attn, memory_order_relaxed) != 0 ||
        atomic_load_explicit(&w->gate, memory_order_relaxed) != WEFT__GATE_TRACE)
        exit_other(self);
    struct weft_thread *to = weft__pick_default(w);
    struct weft__trace_ring *r = weft__trace_ring(w);
    /* relaxed: the id is the only datum (weft_thread_id) */
    uint64_t id = __atomic_load_n(to ? &to->id : &self->id, __ATOMIC_RELAXED);
    if (WEFT_UNLIKELY(!id)) /* no call here but the switch */
        exit_traced_id(w, self, to);
    if (to)
        weft__trace_run_as(r, to, WEFT__RUN_EXITED, id);
    else
        weft__trace_put(r, WEFT__EV_EXIT, 0, id);
    exit_to(w, self, to);
}

/* Ends self (running on w) with `result`. Inline only for the usual case,
 * with no call before the final jump (so callers need no callee-saved
 * registers): no canary, nobody joined or detached yet, nothing to attend. */
static inline __attribute__((always_inline, noreturn)) void
thread_exit(struct weft__worker *w, struct weft_thread *self, void *result)
{
    /* relaxed: only RUNNING is acted on here, and then the next context's
     * CAS (weft__ctx_exit, or weft__finish_exit) orders the exit; exit_other
     * re-reads with acquire. A member's word never changes. */
    uintptr_t s = atomic_load_explicit(&self->join, memory_order_relaxed);
    /* A group member, in the usual case with no call before the jump
     * either. Nobody reads a member's result: it is not stored. */
    if (WEFT_UNLIKELY(s != WEFT__J_RUNNING) && s == WEFT__J_MEMBER) {
        if (self->guard != WEFT__GUARD_CANARY &&
            !atomic_load_explicit(&w->attn_any, memory_order_relaxed) &&
            weft__group_leave_quick(self->group))
            member_exit_to(w, self, weft__pick_default(w));
        exit_member(w, self);
    }
    self->result = result;
    if (WEFT_UNLIKELY(s != WEFT__J_RUNNING || self->guard == WEFT__GUARD_CANARY))
        exit_other(self);
    if (WEFT_UNLIKELY(atomic_load_explicit(&w->attn_any, memory_order_relaxed)))
        exit_attn(w, self);
    exit_to(w, self, weft__pick_default(w));
}

/* ---- unwinding through a thread's first frame --------------------------
 *
 * A thread ends by a jump (thread_exit), never by returning or unwinding
 * through its first frame. An unwind that gets there is pthread_exit()
 * (glibc ends a kernel thread by a forced unwind of its stack): it would end
 * the worker's kernel thread under every user thread it runs and leave the
 * runtime waiting for ever, so the first frame of every worker-run thread
 * holds a guard whose cleanup stops the process with one line instead (the
 * initial and bound threads are watched through keys, below). This file is
 * built with -fexceptions so that the unwinder runs the cleanup. A C++
 * exception nobody catches finds no handler and ends in std::terminate
 * before any cleanup runs. */

static void pthread_exit_unwound(void)
{
    weft__panic("pthread_exit called in a user thread: it would end the worker's kernel "
                "thread; use weft_exit or return from the thread function");
}

/* Cleanup of a user thread's first frame: reached only by unwinding. */
static void entry_unwound(char *guard)
{
    (void)guard;
    pthread_exit_unwound();
}

/* The guard variable of a first frame: no code on the normal path. */
#define ENTRY_GUARD char entry_guard_ __attribute__((cleanup(entry_unwound), unused))

/* The initial thread's frames are the program's own (main's), and a bound
 * thread's end may be reached without unwinding through bound_main (frames
 * without unwind information stop glibc's unwind early), so these two
 * kinds are watched through thread-specific data instead: glibc runs a
 * key's destructor when a kernel thread ends by pthread_exit or by
 * returning from its start routine, after the unwind, never at exit(). */
static pthread_key_t initial_key, bound_key;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static int initial_key_ok, bound_key_ok; /* written once, under keys_once */

static void initial_ended(void *value)
{
    (void)value;
    weft__panic("the kernel thread that called weft_init ended (pthread_exit in the initial "
                "thread?) while the runtime runs: use weft_exit, or call weft_finalize first");
}

static void bound_ended(void *value);

static void keys_create(void)
{
    initial_key_ok = pthread_key_create(&initial_key, initial_ended) == 0;
    bound_key_ok = pthread_key_create(&bound_key, bound_ended) == 0;
}

void weft__initial_guard(int on)
{
    pthread_once(&keys_once, keys_create);
    if (initial_key_ok)
        pthread_setspecific(initial_key, on ? (void *)&initial_key : NULL);
}

/* Cleanup of weft__blocking_run's frame: armed while the callback runs. */
static void blocking_unwound(int *armed)
{
    if (*armed)
        weft__panic("a C++ exception (or pthread_exit) left a weft_blocking callback, which "
                    "runs while another kernel thread holds the caller's worker: catch it "
                    "inside the callback");
}

void weft__blocking_run(void *call)
{
    struct weft__blocking_call *c = call;
    int armed __attribute__((cleanup(blocking_unwound))) = 1;
    c->fn(c->arg);
    armed = 0;
}

/* First code of a thread made by weft__ctx_make (help-first, injected):
 * weft__ctx_resumed has acted on the xfer of its first resume. */
/* The entries live in a section of their own: the return address into
 * them marks the bottom of a thread's own frames (policy/preempt.c). */
static WEFT_ENTRY void thread_entry(void *data)
{
    ENTRY_GUARD;
    struct weft_thread *self = data;
    struct weft__worker *w = self->worker;
    *w->errno_loc = 0;
    void *r = self->fn(self->arg);
    thread_exit(self->worker, self, r); /* fn may have moved us to another worker */
}

/* First code of a child started by a work-first spawn (weft__ctx_spawn): the
 * parent's context is saved now (in parent->sp, the descriptor's first
 * field, which is how weft__ctx_spawn names it), so it may become ready
 * (and stealable). */
static WEFT_ENTRY __attribute__((noreturn)) void child_entry(void *data, void **parent_sp)
{
    ENTRY_GUARD;
    struct weft_thread *self = data;
    weft__san_resumed(NULL);
    weft__make_ready_parent(self->worker, (struct weft_thread *)parent_sp, self);
    *self->worker->errno_loc = 0;
    void *r = self->fn(self->arg);
    struct weft__worker *w = self->worker; /* fn may have moved us to another worker */
    thread_exit(w, self, r);
}

/* ---- weft_exit: unwinding as pthread_exit does ---------------------------
 *
 * weft_exit unwinds the thread's frames (C++ destructors and C cleanups
 * run, as under pthread_exit) with a forced unwind whose stop function ends
 * the thread once the unwind reaches its first frame (or frames without
 * unwind information). The exception object lives on the heap: the frames
 * below a running cleanup are free stack for the calls it makes. */

#define EXIT_EXC_CLASS 0x5745465400455854ull /* "WEFT\0EXT" */

/* A catch (...) that swallowed the unwind instead of rethrowing it. */
static void exit_exc_cleanup(_Unwind_Reason_Code reason, struct _Unwind_Exception *exc)
{
    (void)reason;
    (void)exc;
    weft__panic("weft_exit's unwind was caught and not rethrown (a catch (...) must rethrow)");
}

static __attribute__((noreturn)) void exit_unwound(void)
{
    struct weft__worker *w = weft__worker_now(); /* a cleanup may have moved us */
    struct weft_thread *self = w->current;
    thread_exit(w, self, self->result);
}

static _Unwind_Reason_Code exit_stop(int version, _Unwind_Action actions,
                                     _Unwind_Exception_Class cls, struct _Unwind_Exception *exc,
                                     struct _Unwind_Context *ctx, void *param)
{
    (void)version;
    (void)cls;
    (void)param;
    if (!(actions & _UA_END_OF_STACK)) {
        uintptr_t fn = _Unwind_GetRegionStart(ctx);
        if (fn != (uintptr_t)thread_entry && fn != (uintptr_t)child_entry)
            return _URC_NO_REASON;
    }
    free(exc);
    exit_unwound();
}

/* Unwinds the calling user thread and ends it (self->result set); returns
 * only if the unwind could not start (no memory, or the unwinder failed
 * before reaching any cleanup), and then nothing has run. */
static WEFT_NOINLINE void exit_unwind(void)
{
    struct _Unwind_Exception *exc = calloc(1, sizeof *exc);
    if (!exc)
        return;
    exc->exception_class = EXIT_EXC_CLASS;
    exc->exception_cleanup = exit_exc_cleanup;
#if defined(WEFT_SANITIZE_ADDRESS)
    /* The frames the unwind leaves keep their redzones poisoned, and the
     * cleanups' calls reuse that stack. */
    __asan_handle_no_return();
#endif
    _Unwind_ForcedUnwind(exc, exit_stop, NULL);
    free(exc);
}

/* ---- exit and free: the join word's last steps ---------------------------- */

static void bound_free(struct weft_thread *t);

/* Out of line: inlined into weft_join, its calls would cost the join's
 * fast path the saving of callee-saved registers. */
WEFT_NOINLINE void weft__free_thread(struct weft__worker *w, struct weft_thread *t)
{
    weft__san_thread_destroyed(t);
    if (t->bound) {
        bound_free(t);
        return;
    }
    if (WEFT_UNLIKELY(!t->cls)) { /* the caller's stack (weft__spawn_on): not ours */
        weft__monitor_forget(t);
        weft__stack_disown(t);
        return;
    }
    weft__stack_free(w ? &w->cache : NULL, t);
}

/* Marks t DONE and hands it on: frees it if detached, wakes its joiner if
 * one waits. w: the caller's worker, or NULL on a kernel thread of its own
 * (a bound thread finishing). */
static void publish_done(struct weft__worker *w, struct weft_thread *t)
{
    /* acq_rel: release publishes t->result to the joiner (pairs with its
     * acquire load of DONE); acquire pairs with the joiner's/detacher's CAS.
     * A detached thread goes straight to FREED: a stale join must never
     * find it DONE once it is on its way to a cache. */
    uintptr_t old = atomic_load_explicit(&t->join, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&t->join, &old,
                                                  old == WEFT__J_DETACHED ? WEFT__J_FREED
                                                                          : WEFT__J_DONE,
                                                  memory_order_acq_rel, memory_order_relaxed))
        ;
    if (old & WEFT__J_DETACHED) {
        weft__free_thread(w, t);
    } else if (old & WEFT__J_KWAIT) {
        struct weft__kwaiter *kw = (struct weft__kwaiter *)WEFT__J_PTR(old);
        weft__wake_word(&kw->word, WEFT__WORD_WOKEN); /* release: the joiner's wait acquires */
    } else if (old != WEFT__J_RUNNING) {
        struct weft_thread *j = (struct weft_thread *)WEFT__J_PTR(old);
        if (!w)
            weft__ready(j);
        else if (j != w->current) /* else the exit switched straight to it */
            weft__make_ready(w, j);
    }
}

void weft__finish_exit(struct weft__worker *w, struct weft_thread *t)
{
    if (atomic_load_explicit(&t->join, memory_order_relaxed) == WEFT__J_MEMBER) {
        /* A group member, counted out of its group already (thread/member.h):
         * nobody else can name it, so it goes to FREED and back to a cache
         * with no CAS. relaxed: only stale handles read FREED. */
        atomic_store_explicit(&t->join, WEFT__J_FREED, memory_order_relaxed);
        if (WEFT_LIKELY(weft__stack_cache_push(&w->cache, t)))
            weft__san_thread_destroyed(t);
        else
            weft__free_thread(w, t); /* odd-sized, canary, cache full, sanitizers */
    } else {
        publish_done(w, t);
    }
    /* release: the exit is complete before finalize can count it; pairs
     * with the acquire in runtime.c's live_threads (weft__ctx_exit's plain
     * add is the same store on x86). */
    atomic_store_explicit(&w->nexited, atomic_load_explicit(&w->nexited, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* ---- bound threads: a kernel thread of their own ------------------------- */

/* Every bound descriptor not yet freed, so that finalize can free those
 * nobody joined (their kernel threads have ended by then), and the freed
 * ones, kept for the next bound spawns rather than returned to malloc: a
 * stale handle then still reads a descriptor (FREED), as for slab slots. */
static struct {
    pthread_mutex_t lock;
    struct weft_thread *head;  /* live; linked through ->next; under lock */
    struct weft_thread *spare; /* freed; linked through ->next; under lock */
} bound_list = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL };

/* Bytes of a bound thread's descriptor: room after it for the largest
 * argument copy (thread/member.h), so that any spare descriptor fits any
 * bound thread; a multiple of the alignment keeps aligned_alloc's rule. A
 * kernel thread's stack dwarfs it. */
#define BOUND_BYTES                                                                                \
    ((sizeof(struct weft_thread) + weft__arg_reserve(WEFT__ARG_COPY_MAX) + WEFT_CACHELINE - 1) &   \
     ~(size_t)(WEFT_CACHELINE - 1))

/* The least stack a bound thread's kernel thread gets, whatever its
 * attribute asks: its stack is the kernel thread's, which also runs glibc's
 * and the unwinder's frames. */
#define BOUND_STACK_MIN ((size_t)64 << 10)

/* A zeroed descriptor for a bound thread, or NULL. */
static struct weft_thread *bound_alloc(void)
{
    pthread_mutex_lock(&bound_list.lock);
    struct weft_thread *t = bound_list.spare;
    if (t)
        bound_list.spare = t->next;
    pthread_mutex_unlock(&bound_list.lock);
    if (!t)
        t = aligned_alloc(WEFT_CACHELINE, BOUND_BYTES);
    if (t)
        memset(t, 0, BOUND_BYTES);
    return t;
}

static void bound_track(struct weft_thread *t)
{
    pthread_mutex_lock(&bound_list.lock);
    t->next = bound_list.head;
    t->bound_prev = NULL;
    if (bound_list.head)
        bound_list.head->bound_prev = t;
    bound_list.head = t;
    pthread_mutex_unlock(&bound_list.lock);
}

static void bound_free(struct weft_thread *t)
{
    pthread_mutex_lock(&bound_list.lock);
    struct weft_thread *prev = t->bound_prev;
    if (prev)
        prev->next = t->next;
    else
        bound_list.head = t->next;
    if (t->next)
        t->next->bound_prev = prev;
    /* relaxed: whoever freed t already moved it to FREED (or never shared it) */
    atomic_store_explicit(&t->join, WEFT__J_FREED, memory_order_relaxed);
    t->next = bound_list.spare;
    bound_list.spare = t;
    pthread_mutex_unlock(&bound_list.lock);
}

void weft__bound_each(void (*fn)(struct weft_thread *t, void *arg), void *arg)
{
    pthread_mutex_lock(&bound_list.lock);
    for (struct weft_thread *t = bound_list.head; t; t = t->next)
        fn(t, arg);
    pthread_mutex_unlock(&bound_list.lock);
}

static void free_chain(struct weft_thread *t)
{
    while (t) {
        struct weft_thread *n = t->next;
        free(t);
        t = n;
    }
}

void weft__bound_free_all(void)
{
    pthread_mutex_lock(&bound_list.lock);
    struct weft_thread *live = bound_list.head, *spare = bound_list.spare;
    bound_list.head = bound_list.spare = NULL;
    pthread_mutex_unlock(&bound_list.lock);
    free_chain(live);
    free_chain(spare);
}

/* Set by weft_exit in a bound thread before its pthread_exit. */
static __thread uint8_t bound_exiting;
/* The bound thread's alternate signal stack (weft__stack_bound_enter), given
 * back however the thread ends. */
static __thread void *bound_altstack;

/* The last step of bound thread t, on its kernel thread, however it ends
 * (bound_main, bound_ended, weft_exit): gives back its alternate signal
 * stack, leaves it, and publishes its end. */
static void bound_finish(struct weft_thread *t)
{
    weft__altstack_pop(bound_altstack);
    bound_altstack = NULL;
    weft__tls_bound = NULL;
    if (atomic_load_explicit(&t->join, memory_order_relaxed) == WEFT__J_MEMBER) {
        weft__group_leave(t->group);
        weft__free_thread(NULL, t); /* nobody else can name it */
    } else {
        publish_done(NULL, t);
    }
    /* release: the thread's effects are visible to finalize. */
    atomic_fetch_sub_explicit(&weft__rt.bound_live, 1, memory_order_release);
}

/* bound_key's destructor: the bound thread's kernel thread ended without
 * returning from bound_main (which clears the key). weft_exit's
 * pthread_exit finishes the thread here, after the destructors of its
 * frames; any other end is the thread's own pthread_exit. */
static void bound_ended(void *value)
{
    if (!bound_exiting)
        pthread_exit_unwound();
    bound_exiting = 0;
    bound_finish(value);
}

static void *bound_main(void *arg)
{
    struct weft_thread *t = arg;
    weft__tls_bound = t;
    bound_altstack = weft__stack_bound_enter(t); /* for the overflow report */
    if (bound_key_ok)
        pthread_setspecific(bound_key, t);
    t->result = t->fn(t->arg);
    if (bound_key_ok)
        pthread_setspecific(bound_key, NULL);
    bound_finish(t);
    return NULL;
}

/* A spawn's request, as the slow path checks it once (plan_check): every
 * spawn but the fast path's usual one (spawn_fast) runs from a plan. */
struct spawn_plan {
    weft_thread **out;
    weft_fn fn;
    const void *arg;
    size_t arg_size;          /* > 0: arg is copied to the child's stack */
    const weft_attr *attr;    /* never NULL once checked */
    _Atomic uintptr_t *group; /* weft_group_spawn's group, else NULL */
    uintptr_t join;           /* the child's first join word (WEFT__J_*) */
    struct weft_thread *slot; /* weft__spawn_on's slot on the caller's stack, else NULL */
};

static int spawn_bound(const struct spawn_plan *p)
{
    pthread_once(&keys_once, keys_create); /* bound_key, read by the new thread */
    struct weft_thread *t = bound_alloc();
    if (!t)
        return ENOMEM;
    t->bound = 1;
    t->prio = t->pcls = (int8_t)p->attr->priority; /* stored only: never queued */
    t->fn = p->fn;
    t->arg = (void *)p->arg;
    if (p->arg_size) {
        t->arg = (char *)(t + 1);
        memcpy(t->arg, p->arg, p->arg_size);
    }
    t->name = p->attr->name;
    t->id = 0; /* assigned on first use: weft_thread_id */
    t->stack_size = p->attr->stack_size ? p->attr->stack_size : weft__rt.stack_size;
    atomic_init(&t->join, p->join);
    pthread_attr_t pa;
    pthread_attr_init(&pa);
    pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&pa,
                              t->stack_size < BOUND_STACK_MIN ? BOUND_STACK_MIN : t->stack_size);
    pthread_attr_setguardsize(&pa, WEFT__STACK_GUARD); /* as large as a user stack's */
    pthread_t pt;
    atomic_fetch_add_explicit(&weft__rt.bound_live, 1, memory_order_relaxed);
    if (p->out)
        *p->out = t;
    if (p->group) /* before it can finish */
        weft__group_add(p->group, t);
    bound_track(t);
    int rc = pthread_create(&pt, &pa, bound_main, t);
    pthread_attr_destroy(&pa);
    if (rc != 0) {
        if (p->group) /* a member that never ran is waited for no longer */
            weft__group_leave(p->group);
        atomic_fetch_sub_explicit(&weft__rt.bound_live, 1, memory_order_relaxed);
        bound_free(t);
        if (p->out)
            *p->out = NULL;
        return EAGAIN;
    }
    return 0;
}

/* ---- public API ------------------------------------------------------------ */

/* Runs the new thread t at once on w, the parent's continuation becoming
 * ready (and stealable) in child_entry once its context is saved. */
WEFT_INLINE int spawn_child_first(struct weft__worker *w, struct weft_thread *self,
                                  struct weft_thread *t, void *top)
{
    /* errno: the child sets its own; whoever resumes us installs ours. */
    weft__switch_spawn(w, self, t, top, child_entry);
    return 0;
}

/* The per-spawn fields of a slot (the stack fields stay from its carving). */
WEFT_INLINE void init_thread(struct weft__worker *w, struct weft_thread *t, weft_fn fn, void *arg,
                             const char *name, uintptr_t join, uint64_t id)
{
    t->fn = fn;
    t->arg = arg;
    t->name = name;
#if WEFT_POSIX
    t->fs = weft__tls_spawn_fs; /* the caller's choice (src/posix) */
#endif
    /* 0: assigned on first use (weft_thread_id); a traced spawn gives one.
     * relaxed: the monitor and weft_dump read ids of slots racily. */
    __atomic_store_n(&t->id, id, __ATOMIC_RELAXED);
    /* relaxed: t is published by the switch or queue that follows */
    atomic_store_explicit(&t->join, join, memory_order_relaxed);
    weft__san_thread_created(t);
}

/* Arguments of these sizes are copied as words (place_arg). */
#define SMALL_COPY_MIN 8
#define SMALL_COPY_MAX 32

/* Reserves the top of t's stack for the copy of arg (arg_size > 0), makes
 * the copy and returns where the stack starts (thread/member.h). */
WEFT_INLINE void *place_arg(struct weft_thread *t, const void *arg, size_t arg_size)
{
    char *top = (char *)t - weft__arg_reserve(arg_size);
    if (arg_size) {
        t->arg = top;
#if defined(__x86_64__) && !defined(WEFT_SANITIZE_ADDRESS) && !defined(WEFT_SANITIZE_THREAD)
        /* No call to memcpy, so the spawn's fast path keeps nothing in
         * callee-saved registers (sanitizer builds want the checked call).
         * The usual argument, a struct of 8 to 32 bytes, moves as two
         * pairs of possibly overlapping words (rep movsb starts slowly);
         * anything else with rep movsb. */
        const char *src = arg;
        char *d = top;
        if (arg_size >= SMALL_COPY_MIN && arg_size <= SMALL_COPY_MAX) {
            uint64_t w0, w1, w2, w3;
            memcpy(&w0, src, sizeof w0);
            memcpy(&w1, src + arg_size - sizeof w1, sizeof w1);
            if (arg_size > 2 * sizeof(uint64_t)) {
                memcpy(&w2, src + sizeof w0, sizeof w2);
                memcpy(&w3, src + arg_size - 2 * sizeof w3, sizeof w3);
                memcpy(d + sizeof w0, &w2, sizeof w2);
                memcpy(d + arg_size - 2 * sizeof w3, &w3, sizeof w3);
            }
            memcpy(d, &w0, sizeof w0);
            memcpy(d + arg_size - sizeof w1, &w1, sizeof w1);
        } else {
            __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(arg_size) : : "memory");
        }
#else
        memcpy(top, arg, arg_size);
#endif
    }
    return top;
}

WEFT_INLINE void count_spawn(struct weft__worker *w)
{
#if defined(__x86_64__) && !defined(WEFT_SANITIZE_THREAD)
    /* One add to memory instead of a relaxed load, add and store (a C11
     * atomic cannot say it): only this worker writes the count, and an
     * aligned 8-byte store is single-copy atomic, so finalize's reads see
     * the old count or the new one, as weft__ctx_exit's add of an exit.
     * TSan builds keep the C11 form, which it can follow. */
    __asm__("addq $1, %0" : "+m"(*(uint64_t *)&w->nspawned));
#else
    /* relaxed: only this worker writes it; see live_threads() */
    atomic_store_explicit(&w->nspawned,
                          atomic_load_explicit(&w->nspawned, memory_order_relaxed) + 1,
                          memory_order_relaxed);
#endif
}

/* 1 for the initial thread on several workers (WEFT__PIN_CHOOSE). */
WEFT_INLINE int main_chooses(const struct weft_thread *self)
{
    return self->pinned & WEFT__PIN_CHOOSE;
}

/* Spawns from kernel threads that are no user thread: such a spawn may find
 * the runtime running and then queue its thread while weft_finalize stops it,
 * so finalize, once stopping, waits for this count to drain and then runs
 * whatever was queued. */
static _Atomic int64_t kernel_spawns;

int64_t weft__kernel_spawns(void)
{
    /* acquire: pairs with the release decrement below: the queued thread is
     * counted (ext_spawned, bound_live) when finalize reads the threads. */
    return atomic_load_explicit(&kernel_spawns, memory_order_acquire);
}

/* ---- the initial thread's spawns on several workers ----------------------
 *
 * The initial thread never leaves worker 0, so its continuation cannot be
 * stolen: were it to run every child at once (work-first), a loop of spawns
 * in main would run on worker 0 alone, and a child that waits (without a
 * scheduling point) for a later sibling would wait for ever. So it queues
 * its children where idle workers take them (help-first), but for one
 * case: its previous MAIN_PAIRS children were each joined before the next
 * spawn. That is a loop that spawns and joins one child at a time, where a
 * queued child would only be taken back by the join, or stolen and waited
 * for across workers: the child runs at once, as work-first, for the price
 * of a spawn and join on one worker (33 ns where queueing cost 93). A spawn
 * whose predecessor is not joined queues and starts the count again, so a
 * spawn loop after such a loop loses at most its first child to worker 0,
 * and a few spawns and joins before a loop (a warm-up, a check) lose it
 * nothing.
 * Rejected: queueing only while another worker looks for work (a sleeping
 * worker never learns of a spawn loop's children), and also requiring every
 * other worker to sleep (an awake worker steals a queued child now and
 * then, stays awake for it, and a spawn-join loop queues for ever). */

#define MAIN_PAIRS 8

/* The previous child the initial thread spawned with weft_spawn or
 * weft_spawn_copy (NULL: none yet, a detached one, or a group member since),
 * and how many spawns in a row found their predecessor joined (up to
 * MAIN_PAIRS); read and written by the initial thread only, reset by
 * weft_init. main_prev may be freed and reused since: only its join word is
 * read, and descriptors stay mapped while the runtime runs (a reused one
 * reads not FREED: the child is queued, which is always safe). */
static struct weft_thread *main_prev;
static unsigned main_pairs;

void weft__spawn_main_reset(void)
{
    main_prev = NULL;
    main_pairs = 0;
}

/* Counts the spawn about to happen; 1 if its child may run at once. */
WEFT_INLINE int main_runs_child_first(void)
{
    struct weft_thread *p = main_prev;
    /* relaxed: a hint; a stale answer only picks the other policy. */
    if (!p || atomic_load_explicit(&p->join, memory_order_relaxed) != WEFT__J_FREED) {
        main_pairs = 0;
        return 0;
    }
    if (main_pairs < MAIN_PAIRS)
        main_pairs++;
    return main_pairs == MAIN_PAIRS;
}

/* ---- the slow path: one plan, checked once ------------------------------ */

/* Checks p's arguments and fills in what follows from them: 0 or EINVAL. */
static int plan_check(struct spawn_plan *p)
{
    static const weft_attr dflt = WEFT_ATTR_INIT;
    if (!p->attr)
        p->attr = &dflt;
    const weft_attr *a = p->attr;
    if (!p->fn || (!p->out && !a->detached && !p->group) || (p->group && a->detached))
        return EINVAL;
    if (p->arg_size > WEFT__ARG_COPY_MAX || (p->arg_size && !p->arg))
        return EINVAL;
    if (a->priority < WEFT_PRIO_BACKGROUND || a->priority > WEFT_PRIO_URGENT)
        return EINVAL;
    if (a->stack_size && (a->stack_size < WEFT__STACK_MIN || a->stack_size > WEFT__STACK_MAX))
        return EINVAL;
    p->join = p->group ? WEFT__J_MEMBER : a->detached ? WEFT__J_DETACHED : WEFT__J_RUNNING;
    return 0;
}

/* Spawns the checked plan p from worker w (NULL: a kernel thread that runs
 * no worker): a bound thread, a child that runs at once (work-first, or of
 * a higher class), one queued on w, or one injected. Under WEFT_TRACE every
 * spawn comes here (the fast path tests the traced policy bit first), and
 * this is where it records its event and draws the child's id. */
static int plan_run(struct weft__worker *w, const struct spawn_plan *p)
{
    const weft_attr *attr = p->attr;
    /* seq_cst: pairs with finalize's stopping CAS (kernel_spawns). */
    if (WEFT_UNLIKELY(atomic_load_explicit(&weft__rt.state, memory_order_seq_cst) != RT_RUNNING))
        return EAGAIN;
    if (attr->priority != WEFT_PRIO_NORMAL) {
        int rc = weft__prio_activate();
        if (rc != 0)
            return rc;
    }
    if (attr->bound)
        return spawn_bound(p);

    struct weft_thread *self = w ? w->current : NULL;
    int main = self && main_chooses(self);
    int main_first = main && !p->group && main_runs_child_first();
    if (main)
        main_prev = NULL;
    size_t size = attr->stack_size == weft__rt.stack_size ? 0 : attr->stack_size;
    struct weft_thread *t = p->slot ? p->slot : weft__stack_alloc(w ? &w->cache : NULL, size);
    if (!t)
        return ENOMEM;
    int traced = w && WEFT_UNLIKELY(weft__trace_on);
    init_thread(w, t, p->fn, (void *)p->arg, attr->name, p->join,
                traced ? weft__trace_new_id(weft__trace_ring(w)) : 0);
    __atomic_store_n(&t->prio, (int8_t)attr->priority, __ATOMIC_RELAXED);
    __atomic_store_n(&t->pcls, (int8_t)attr->priority, __ATOMIC_RELAXED);
    void *top = place_arg(t, p->arg, p->arg_size);
    if (p->group)
        weft__group_add(p->group, t);
    if (p->out)
        *p->out = t;
    if (main && !p->group && p->out && !p->slot) /* the caller may free its stack */
        main_prev = t;
    if (!w) {
        t->sp = weft__ctx_make(top, thread_entry, t);
        atomic_fetch_add_explicit(&weft__rt.ext_spawned, 1, memory_order_relaxed);
        weft__inject(t);
        return 0;
    }
    count_spawn(w);
    /* Work-first when the child's class is not lower than the parent's; a
     * higher child runs at once under either policy. */
    int pcls = self ? weft__cls(self) : WEFT_PRIO_NORMAL;
    if (self &&
        (((weft__rt.policy & ~(WEFT__POLICY_TRACED | WEFT__POLICY_CXX)) == WEFT_WORK_FIRST &&
          (!main || main_first) && attr->priority >= pcls) ||
         attr->priority > pcls)) {
        weft__stack_check(self); /* it is switched out: see stack/stack.c */
        if (traced)
            weft__trace(w, WEFT__EV_RUN, t, WEFT__RUN_SPAWNED);
        return spawn_child_first(w, self, t, top);
    }
    if (traced)
        weft__trace(w, WEFT__EV_SPAWN, t, 0);
    t->sp = weft__ctx_make(top, thread_entry, t);
    weft__make_ready(w, t);
    return 0;
}

/* Every spawn that the fast path does not take: checks its plan once and
 * runs it. A plain kernel thread is counted while it spawns (kernel_spawns). */
static WEFT_NOINLINE int spawn_planned_on(weft_thread **out, weft_fn fn, const void *arg,
                                          size_t arg_size, const weft_attr *attr,
                                          _Atomic uintptr_t *group, struct weft_thread *slot)
{
    struct spawn_plan p = { out, fn, arg, arg_size, attr, group, 0, slot };
    int rc = plan_check(&p);
    if (rc != 0)
        return rc;
    struct weft__worker *w = weft__tls_worker;
    if (w || weft__tls_user()) /* a user thread: finalize waits for it */
        return plan_run(w, &p);
    /* seq_cst: counted before plan_run reads the state (Dekker with the
     * stopping CAS in weft_finalize). */
    atomic_fetch_add_explicit(&kernel_spawns, 1, memory_order_seq_cst);
    rc = plan_run(NULL, &p);
    atomic_fetch_sub_explicit(&kernel_spawns, 1, memory_order_release);
    return rc;
}

static WEFT_NOINLINE int spawn_planned(weft_thread **out, weft_fn fn, const void *arg,
                                       size_t arg_size, const weft_attr *attr,
                                       _Atomic uintptr_t *group)
{
    return spawn_planned_on(out, fn, arg, arg_size, attr, group, NULL);
}

/* The drop-in's pthread_attr_setstack (thread.h): a plan like any other
 * with a slot carved from the caller's memory; nothing of the fast path. */
int weft__spawn_on(weft_thread **out, weft_fn fn, void *arg, const weft_attr *attr, void *lo,
                   size_t size)
{
    if (attr && attr->bound)
        return EINVAL; /* a bound thread runs on its kernel thread's stack */
    struct weft_thread *t = weft__stack_adopt(lo, size);
    if (!t)
        return EINVAL;
    weft_attr a = attr ? *attr : (weft_attr)WEFT_ATTR_INIT;
    a.stack_size = 0; /* the slot's: plan_check must not judge it */
    int rc = spawn_planned_on(out, fn, arg, 0, &a, NULL, t);
    if (rc != 0)
        weft__stack_disown(t); /* never ran: the memory is the caller's again */
    return rc;
}

/* ---- the fast path ------------------------------------------------------- */

static int spawn_fast_traced(weft_thread **out, weft_fn fn, const void *arg);
static int spawn_slow(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                      const weft_attr *attr, _Atomic uintptr_t *group);

/* The usual spawn: by a user thread that is not the initial thread on
 * several workers, work-first and untraced, with a slot from the worker's
 * cache. attr is NULL (the default) or one that only sizes the stack or
 * names the thread (what a program that sizes its stacks passes at every
 * spawn): the slot then comes from the cache for that size, and a canary
 * to check in the spawning thread takes the slow path. Anything else, or
 * no cached slot (the slow path refills the caches): the plan. arg_size
 * and group: the copied argument and, for weft_group_spawn, the group. So
 * the only call but tail calls is the switch, and nothing is kept in
 * callee-saved registers. A worker's TLS is set only while the runtime
 * runs. traced: the instance for WEFT_TRACE (spawn_fast_traced), which the
 * policy's traced bit selects for weft_spawn's usual arguments: a
 * spawn-per-call program spawns every few tens of nanoseconds, too often
 * for the plan's checks (every other traced spawn takes the plan); it
 * records the child's run and gives the child its id from the worker's
 * block. */
WEFT_INLINE int spawn_fast(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                           const weft_attr *attr, _Atomic uintptr_t *group, int traced, int eh)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self, *t;
    struct weft__trace_ring *r = NULL;
    size_t size = attr ? attr->stack_size : 0;
    /* help-first, WEFT_TRACE's bit or the C++ runtime's: one test */
    if (!traced && !eh && WEFT_UNLIKELY(weft__rt.policy != WEFT_WORK_FIRST)) {
        if (!attr && !arg_size && !group &&
            weft__rt.policy == (WEFT_WORK_FIRST | WEFT__POLICY_TRACED))
            return spawn_fast_traced(out, fn, arg);
        return spawn_slow(out, fn, arg, arg_size, attr, group);
    }
    if (WEFT_UNLIKELY(
            (attr && (attr->detached || attr->bound || attr->priority != WEFT_PRIO_NORMAL ||
                      (size && (size < WEFT__STACK_MIN || size > WEFT__STACK_MAX)))) ||
            !w || !fn || (!group && !out) ||
            (arg_size && (arg_size > WEFT__ARG_COPY_MAX || !arg)) || !(self = w->current) ||
            main_chooses(self) || (attr && self->guard == WEFT__GUARD_CANARY)))
        return spawn_planned(out, fn, arg, arg_size, attr, group);
    /* a worker whose block of ids ran out takes the plan, which draws more */
    if (traced && (r = weft__trace_ring(w), WEFT_UNLIKELY(r->id_next == r->id_end)))
        return spawn_planned(out, fn, arg, arg_size, attr, group);
    t = size == 0 || size == weft__rt.stack_size ? weft__stack_cache_pop(&w->cache)
                                                 : weft__stack_cache_pop_sized(&w->cache, size);
    if (WEFT_UNLIKELY(!t))
        return spawn_planned(out, fn, arg, arg_size, attr, group);
    /* nobody else can name t yet: its id is a plain store */
    init_thread(w, t, fn, (void *)arg, attr ? attr->name : NULL,
                group ? WEFT__J_MEMBER : WEFT__J_RUNNING, traced ? r->id_next++ : 0);
    void *top = place_arg(t, arg, arg_size);
    if (group)
        weft__group_add(group, t);
    else
        *out = t;
    count_spawn(w);
    if (traced)
        weft__trace_run_as(r, t, WEFT__RUN_SPAWNED, t->id);
    return spawn_child_first(w, self, t, top);
}

static WEFT_NOINLINE int spawn_fast_traced(weft_thread **out, weft_fn fn, const void *arg)
{
    return spawn_fast(out, fn, arg, 0, NULL, NULL, 1, 0);
}

/* The spawn the policy would take without WEFT__POLICY_CXX. */
WEFT_INLINE int spawn_uncarried(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                                const weft_attr *attr, _Atomic uintptr_t *group)
{
    int policy = weft__rt.policy & ~WEFT__POLICY_CXX;
    if (policy == (WEFT_WORK_FIRST | WEFT__POLICY_TRACED) && !attr && !arg_size && !group)
        return spawn_fast_traced(out, fn, arg);
    if (policy == WEFT_WORK_FIRST)
        return spawn_fast(out, fn, arg, arg_size, attr, group, 0, 1);
    return spawn_planned(out, fn, arg, arg_size, attr, group);
}

/* spawn_cxx for a spawner self with exception state: it leaves with self,
 * as at a switch, since a work-first child runs at once on this kernel
 * thread, and comes back once the spawn returns, wherever self resumed. */
static WEFT_NOINLINE int spawn_carried(struct weft_thread *self, weft_thread **out, weft_fn fn,
                                       const void *arg, size_t arg_size, const weft_attr *attr,
                                       _Atomic uintptr_t *group)
{
    weft__eh_leave(self);
    int rc = spawn_uncarried(out, fn, arg, arg_size, attr, group);
    weft__eh_arrive(self);
    return rc;
}

/* Every spawn while the C++ runtime is loaded (WEFT__POLICY_CXX). A user
 * thread that handles no exception (the usual spawner: its kernel
 * thread's globals are zero) has nothing to carry: the child starts with
 * zero globals, and whoever runs before self resumes leaves them zero
 * (sched/eh.h), so the spawn is the plain one, a tail call. */
static WEFT_NOINLINE int spawn_cxx(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                                   const weft_attr *attr, _Atomic uintptr_t *group)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w ? w->current : NULL; /* NULL: nothing switches */
    if (self) {
        struct weft__eh_globals *g = weft__eh_here();
        if (WEFT_UNLIKELY(g->caught || g->uncaught))
            return spawn_carried(self, out, fn, arg, arg_size, attr, group);
    }
    return spawn_uncarried(out, fn, arg, arg_size, attr, group);
}

/* Every spawn that the fast path's first test turns away: the C++
 * runtime's (spawn_cxx), or the plan. */
static WEFT_NOINLINE int spawn_slow(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                                    const weft_attr *attr, _Atomic uintptr_t *group)
{
    if (WEFT_UNLIKELY(weft__rt.policy & WEFT__POLICY_CXX))
        return spawn_cxx(out, fn, arg, arg_size, attr, group);
    return spawn_planned(out, fn, arg, arg_size, attr, group);
}

/* spawn_fast for a given attr, out of line so that the default one's
 * fast path stays free of the attribute tests. */
static WEFT_NOINLINE int spawn_fast_attr(weft_thread **out, weft_fn fn, const void *arg,
                                         size_t arg_size, const weft_attr *attr,
                                         _Atomic uintptr_t *group)
{
    return spawn_fast(out, fn, arg, arg_size, attr, group, 0, 0);
}

WEFT_INLINE int spawn_into(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                           const weft_attr *attr, _Atomic uintptr_t *group)
{
    if (attr)
        return spawn_fast_attr(out, fn, arg, arg_size, attr, group);
    return spawn_fast(out, fn, arg, arg_size, NULL, group, 0, 0);
}

int weft_spawn(weft_thread **out, weft_fn fn, void *arg, const weft_attr *attr)
{
    return spawn_into(out, fn, arg, 0, attr, NULL);
}

int weft_spawn_copy(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                    const weft_attr *attr)
{
    return spawn_into(out, fn, arg, arg_size, attr, NULL);
}

_Atomic(weft__group_wake_fn *) weft__group_wake;

/* A group is a waiting object (sync/group.c); spawning into it is a spawn,
 * here so that its fast path is weft_spawn's. */
int weft_group_spawn(weft_group *g, weft_fn fn, const void *arg, size_t arg_size,
                     const weft_attr *attr)
{
    if (WEFT_UNLIKELY(!g))
        return EINVAL;
    _Atomic uintptr_t *state = weft__group_word(g);
    /* The usual member takes its argument as is: a fast path of its own
     * without the copy's tests and arithmetic. */
    if (arg_size == 0)
        return spawn_into(NULL, fn, arg, 0, attr, state);
    return spawn_into(NULL, fn, arg, arg_size, attr, state);
}

/* Commit of a user-thread join: publish self as t's joiner, unless t is done. */
static int join_commit(void *arg, struct weft_thread *self)
{
    struct weft_thread *t = arg;
    uintptr_t s = WEFT__J_RUNNING;
    /* release: our context is saved before the exiting thread may switch to
     * us; pairs with the acquire load in exit_other / the CAS in
     * publish_done. */
    return atomic_compare_exchange_strong_explicit(&t->join, &s, (uintptr_t)self,
                                                   memory_order_acq_rel, memory_order_acquire);
}

static int join_any(weft_thread *t, void **result)
{
    if (!t)
        return EINVAL;
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w ? w->current : weft__tls_user();
    if (t == self)
        return EDEADLK;
    if (t->pinned)
        return EINVAL; /* the initial thread ends only in weft_finalize */
    /* acquire: pairs with the release CAS of the exit (publish_done). */
    uintptr_t s = atomic_load_explicit(&t->join, memory_order_acquire);
    if (WEFT_UNLIKELY(s != WEFT__J_DONE)) {
        if (s != WEFT__J_RUNNING)
            return EINVAL; /* detached, somebody else joins it, or freed */
        if (w && self) {
            weft__thread_wait(self, WEFT__WAIT_JOIN);
            weft__park(join_commit, t);
            w = self->worker;
        } else {
            struct weft__kwaiter kw;
            atomic_init(&kw.word, WEFT__WORD_WAITING);
            if (!atomic_compare_exchange_strong_explicit(&t->join, &s,
                                                         (uintptr_t)&kw | WEFT__J_KWAIT,
                                                         memory_order_acq_rel,
                                                         memory_order_acquire)) {
                if (s != WEFT__J_DONE)
                    return EINVAL;
            } else {
                /* the one kernel-thread wait: spin, UMWAIT, futex as WEFT_WAIT says */
                weft__wait_word(&kw.word, WEFT__KTHREAD_SPIN_NS, NULL, 0);
            }
        }
    }
    /* acquire: pairs with the release of the exit's DONE. Failing: detached
     * under our feet, or another joiner took it first; misuses we report. */
    s = WEFT__J_DONE;
    if (!atomic_compare_exchange_strong_explicit(&t->join, &s, WEFT__J_FREED, memory_order_acquire,
                                                 memory_order_relaxed))
        return EINVAL;
    if (result)
        *result = t->result;
    if (WEFT_LIKELY(w && w->current) && weft__stack_cache_push(&w->cache, t)) {
        weft__san_thread_destroyed(t);
        return 0;
    }
    weft__free_thread(w && w->current ? w : NULL, t);
    return 0;
}

/* Joins from kernel threads that are no user thread (plain ones): nothing
 * else counts them, and weft_finalize must not release the descriptor such a
 * joiner still reads and frees once the thread it waits for has finished. */
static _Atomic int64_t kernel_joins;

int64_t weft__kernel_joins(void)
{
    /* acquire: pairs with the release decrement in join_slow, so the
     * joiner's last use of the descriptor precedes finalize's release. */
    return atomic_load_explicit(&kernel_joins, memory_order_acquire);
}

static WEFT_NOINLINE int join_slow(weft_thread *t, void **result)
{
    struct weft__worker *w = weft__tls_worker;
    if ((w && w->current) || weft__tls_user())
        return join_any(t, result); /* a user thread: finalize waits for it */
    if (w) /* a task (sched.h: weft__in_task) must not wait for a running thread */
        return t && atomic_load_explicit(&t->join, memory_order_acquire) == WEFT__J_RUNNING
                   ? EPERM
                   : join_any(t, result);
    /* seq_cst: counted before the join word is read or published, so a
     * finalize that has seen the joined thread's exit sees the count too. */
    atomic_fetch_add_explicit(&kernel_joins, 1, memory_order_seq_cst);
    int rc = join_any(t, result);
    atomic_fetch_sub_explicit(&kernel_joins, 1, memory_order_release);
    return rc;
}

int weft_join(weft_thread *t, void **result)
{
    /* Fast path: a user thread joins a finished thread (the usual case
     * under work-first) and claims it, DONE -> FREED, so that no second
     * join or detach can free it again. acquire: pairs with the release in
     * the exit's CAS (weft__ctx_exit or publish_done). */
    struct weft__worker *w = weft__tls_worker;
    uintptr_t s = WEFT__J_DONE;
    if (WEFT_LIKELY(t && w &&
                    atomic_compare_exchange_strong_explicit(&t->join, &s, WEFT__J_FREED,
                                                            memory_order_acquire,
                                                            memory_order_relaxed))) {
        if (result)
            *result = t->result;
        if (WEFT_LIKELY(weft__stack_cache_push(&w->cache, t)))
            weft__san_thread_destroyed(t);
        else
            weft__free_thread(w, t); /* bound, odd-sized, canary or cache full */
        return 0;
    }
    return join_slow(t, result);
}

int weft_detach(weft_thread *t)
{
    if (!t || t->pinned)
        return EINVAL; /* the initial thread is freed by weft_finalize alone */
    uintptr_t s = atomic_load_explicit(&t->join, memory_order_acquire);
    for (;;) {
        if (s != WEFT__J_RUNNING && s != WEFT__J_DONE)
            return EINVAL; /* detached, being joined, or freed */
        /* acq_rel: acquire pairs with the exit's release of DONE (we free
         * what it left); release pairs with the exit's acquire of DETACHED. */
        if (!atomic_compare_exchange_weak_explicit(&t->join, &s,
                                                   s == WEFT__J_DONE ? WEFT__J_FREED
                                                                     : WEFT__J_DETACHED,
                                                   memory_order_acq_rel, memory_order_acquire))
            continue;
        if (s == WEFT__J_DONE) {
            struct weft__worker *w = weft__tls_worker;
            weft__free_thread(w && w->current ? w : NULL, t);
        }
        return 0;
    }
}

/* weft_yield's rotation of w's yield FIFO (see there): self goes in behind
 * the tail; returns the head, which self switches to, or NULL when self is
 * alone on w. */
WEFT_INLINE struct weft_thread *yield_rotate(struct weft__worker *w, struct weft_thread *self)
{
    struct weft_thread *tail = w->yq;
    if (!tail)
        return NULL;
    struct weft_thread *next = tail->next;
    tail->next = self;
    self->next = next->next;
    __atomic_store_n(&w->yq, self, __ATOMIC_RELAXED); /* racy hint for thieves */
    return next;
}

/* weft_yield but for the inlined common case below. */
static WEFT_NOINLINE void yield_slow(void)
{
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self, *next;
    if (WEFT_UNLIKELY(!w || !(self = w->current))) {
        sched_yield();
        return;
    }
    /* The fast path's case in a program with the C++ runtime loaded
     * (WEFT__GATE_CXX alone): its rotation, with the exception state
     * carried across the switch (sched/eh.h). */
    if (cxx_gate_alone(w) && weft__deque_size_hint(&w->dq) == 0) {
        if ((next = yield_rotate(w, self))) {
            weft__eh_leave(self);
            weft__switch_on(w, self, next, 0);
            weft__eh_arrive(self);
        }
        return;
    }
    /* tasks readied here wait for the scheduler context: it runs them, then
     * the ready threads, this one behind the others */
    if (WEFT_UNLIKELY(atomic_load_explicit(&w->attn, memory_order_relaxed) & WEFT__ATTN_TASK)) {
        weft__switch(w, self, NULL, (uintptr_t)self | XF_YIELD);
        return;
    }
    next = weft__pick_local(w);
    if (!next) {
        /* worker 0 is claimed back (machine.c): leave through the scheduler */
        if (WEFT_UNLIKELY(weft__reclaimed(w)))
            weft__switch(w, self, NULL, (uintptr_t)self | XF_YIELD);
        return;
    }
    if (WEFT_LIKELY(!weft__pool_plugged())) {
        /* Our own FIFO: nobody else can resume us from it before we are
         * switched out, so no hand-off is needed. */
        weft__yq_push(w, self);
        weft__switch(w, self, next, 0);
    } else {
        weft__switch(w, self, next, (uintptr_t)self | XF_YIELD);
    }
}

void weft_yield(void)
{
    /* Fast path: a user thread, nothing to attend (attn), no injected
     * thread and the default pool (gate), an empty deque: the next thread is
     * the head of our own yield FIFO, and we go to its tail before
     * switching (owner only: nobody can resume us from it before we are
     * switched out, so no hand-off). Anything else: yield_slow. */
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self;
    if (WEFT_UNLIKELY(!w || !(self = w->current) ||
                      atomic_load_explicit(&w->attn_any, memory_order_relaxed) ||
                      weft__deque_size_hint(&w->dq) > 0)) {
        yield_slow();
        return;
    }
    /* rotate: self goes in behind the tail and becomes the tail, the head
     * leaves. With one queued thread (next == tail) the first store makes
     * next->next self, so self closes the circle on itself: no branch. */
    struct weft_thread *next = yield_rotate(w, self);
    if (!next)
        return; /* alone on this worker */
    weft__switch_on(w, self, next, 0);
}

void weft_exit(void *result)
{
    if (!weft__tls_worker)
        weft__rescue_settle(); /* a rescued thread rejoins first (policy/machine.c) */
    struct weft__worker *w = weft__tls_worker;
    struct weft_thread *self = w ? w->current : NULL;
    if (self && !self->pinned) {
        self->result = result;
        exit_unwind(); /* returns only if no unwind could start */
        w = weft__worker_now();
        thread_exit(w, self, result);
    }
    if (!w && weft__tls_bound) {
        struct weft_thread *t = weft__tls_bound;
        t->result = result;
        if (bound_key_ok && pthread_getspecific(bound_key) == t) {
            bound_exiting = 1;
            pthread_exit(NULL); /* unwinds; bound_ended finishes the thread */
        }
        bound_finish(t); /* no key: finish before the unwind */
        pthread_exit(NULL);
    }
    if (self) {
        /* The initial thread: as pthread_exit in main, the process lives on
         * until every other thread has finished (weft_finalize waits for
         * them, detached ones included), then exits with status 0. The
         * result has nobody to read it. */
        (void)result;
        int rc = weft__rt.finalize();
        if (rc != 0)
            weft__panic("weft_exit by the initial thread: weft_finalize failed (%d)", rc);
        exit(0);
    }
    weft__panic(weft__tls_lent ? "weft_exit called inside weft_blocking: return from the call first"
                               : "weft_exit called outside a user thread");
}

weft_thread *weft_self(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w ? w->current : weft__tls_user();
}

/* Drawn on first use (weft__thread_id_of, sched/sched.h). Async-signal-safe
 * (the overflow report calls it). */
uint64_t weft_thread_id(const weft_thread *t)
{
    return t ? weft__thread_id_of(t) : 0;
}

const char *weft_thread_name(const weft_thread *t)
{
    return t ? t->name : NULL;
}

int weft_errno(void)
{
    return errno;
}
