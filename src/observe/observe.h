/* observe.h: the registry of live user threads, and the unwinder behind
 * weft_dump (observe/registry.c, observe/unwind.c, observe/dump.c).
 *
 * Design
 * ------
 * No list of threads is kept: a spawn would pay for the insert. Every
 * descriptor sits at the top of a stack slot (stack/stack.c), so the stack
 * slabs are the registry: weft__stack_each visits every slot ever carved,
 * and a slot holds a live thread when its join word says so (RUNNING,
 * DETACHED or a joiner; never FREED or DONE) and it ever ran a function.
 * The initial thread and the bound threads live outside the slabs and are
 * added from their own places (weft__rt.main, weft__bound_each).
 *
 * The walk races spawns and exits: a slot may be reused while it is read.
 * It is read without locks, fields copied first and the join word and id
 * read again afterwards: a slot whose words changed is dropped (it was
 * recycled; the thread it held is gone or new). What survives may still be
 * a little stale, as any snapshot of running threads is. Reads of another
 * thread's stack (the unwinder) are bounded by that thread's stack slot,
 * which stays mapped for the runtime's life, so a stale saved context gives
 * a wrong backtrace, never a fault.
 *
 * State: RUNNING when a worker's current thread is it; BLOCKING, PARKED
 * (with the kind of object) from the wait byte that park sites set
 * (thread->wait); READY otherwise. Rejected: a state word updated at every
 * switch (instructions on the yield and spawn paths).
 *
 * Deadlocks: a thread parked on a mutex waits for its holder (the mutex is
 * thread->wait_on, set by the mutex's slow path), one parked in weft_join
 * for the thread whose join word names it; a cycle of those edges that
 * holds on two re-reads is a deadlock (the block in registry.c).
 * Rejected: a wait-for graph kept by lock and join (cost on every
 * contended lock), and stopping the workers for the dump (it must run from
 * any thread while the program goes on).
 */
#ifndef WEFT_OBSERVE_OBSERVE_H
#define WEFT_OBSERVE_OBSERVE_H

#include <stddef.h>
#include <stdint.h>

#include "weft.h"

struct weft_thread;

/* A snapshot of one live user thread. */
struct weft__obs_thread {
    const struct weft_thread *t;
    uint64_t id;
    const char *name;
    int state;    /* WEFT_STATE_* */
    uint8_t wait; /* WEFT__WAIT_*, for PARKED */
    int worker;   /* -1 unless RUNNING on a worker */
    int priority;
    uint64_t cpu_ns, state_ns;
    void *sp;            /* saved context (READY, PARKED), else NULL */
    char *lo, *hi;       /* its stack's bounds; the unwinder reads nothing else */
    uintptr_t join;      /* its join word as read: a joining user thread's descriptor, or tags */
    const void *wait_on; /* the mutex it parks on (wait MUTEX), else NULL */
    uint64_t waits_for;  /* the id of the thread it waits for: the holder of the mutex it
                            parks on, or the thread it joins; 0: none (weft__obs_edges) */
    uint8_t borrowed;    /* 1: on a caller's stack (weft__stack_adopt), which its owner may
                            free once the walk is over: nothing reads the descriptor or
                            the stack again (no backtrace, no wait-for edges) */
};

/* Snapshot of t; ESRCH when it is not a live user thread. */
int weft__obs_snapshot(const struct weft_thread *t, struct weft__obs_thread *out);

/* Every live user thread: *out (malloc'ed, the caller frees) and *n; ENOMEM. */
int weft__obs_collect(struct weft__obs_thread **out, size_t *n);

/* Fills v[i].waits_for for the n threads of a collect: the wait-for
 * edges of the deadlock report. */
void weft__obs_edges(struct weft__obs_thread *v, size_t n);

/* The cycles of those edges that still hold when read again twice, one
 * call fn(ids, len, arg) each, ids in wait-for order from the smallest;
 * 0 or ENOMEM. Run after weft__obs_edges on the same v. */
int weft__obs_cycles(const struct weft__obs_thread *v, size_t n,
                     void (*fn)(const uint64_t *ids, size_t len, void *arg), void *arg);

/* The word for a WEFT__WAIT_* kind ("mutex", ...), and for a WEFT_STATE_*. */
const char *weft__obs_wait_word(uint8_t kind);
const char *weft__obs_state_word(int state);

/* WEFT_DUMP_SIGNAL (dump.c): from weft__dump_signal_start(signo) until
 * stop, signal signo makes a kernel thread of the library write weft_dump
 * to stderr. signo 0: nothing. Called by weft_init and weft_finalize. */
int weft__dump_signal_start(int signo);
void weft__dump_signal_stop(void);

/* WEFT_TRACE (trace.c): weft__trace_start(path) once the workers exist
 * and before they run (path NULL: nothing); weft__trace_finish once they
 * have stopped: writes the file and one line on stderr with the number of
 * events written and dropped. */
int weft__trace_start(const char *path);
void weft__trace_finish(void);

/* ---- unwinding and symbols (unwind.c) ----------------------------------- */

struct weft__unwinder;

/* Opens an unwinder over the process as it is mapped now, or NULL (no
 * memory); one user at a time. */
struct weft__unwinder *weft__unwind_open(void);
void weft__unwind_close(struct weft__unwinder *u);

/* Return addresses of the context saved at sp (arch/context.h's layout),
 * innermost first, reading only [lo, hi); returns how many (<= max). */
int weft__unwind_saved(struct weft__unwinder *u, void *sp, char *lo, char *hi, uintptr_t *pcs,
                       int max);

/* "function+0xoff (file:line)" or what is known of pc into buf. inner: pc
 * is the innermost frame's (an exact address, not a return address). */
void weft__unwind_symbol(struct weft__unwinder *u, uintptr_t pc, int inner, char *buf, size_t n);

/* 1 when DWARF unwinding (libdw) was built in; else only the innermost
 * frame of a saved context is known, and symbols come from dladdr. */
extern const int weft__unwind_dwarf;

#endif
