/* thread.h: the user thread's life cycle: spawn, exit, join, detach, the
 * bound threads and weft_blocking's callback. The descriptor itself is
 * desc/desc.h's, shared with every layer.
 */
#ifndef WEFT_THREAD_THREAD_H
#define WEFT_THREAD_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "desc/desc.h"
#include "weft.h"

/* The last step of an exit, on the context that follows the exiting thread
 * t (t is off its stack): marks t DONE and hands it on (frees it if
 * detached, readies its joiner), then counts the exit on w, the caller's
 * worker. weft_init registers it with the scheduler (weft__rt.exited). */
void weft__finish_exit(struct weft__worker *w, struct weft_thread *t);

/* Gives a finished thread's descriptor and stack back: a stack cache (w's,
 * or the shared one for w NULL), or the spare bound descriptors. */
void weft__free_thread(struct weft__worker *w, struct weft_thread *t);

/* weft_spawn on the caller's memory [lo, lo + size) (the drop-in's
 * pthread_attr_setstack): the descriptor at its top (stack/stack.h:
 * weft__stack_adopt), never cached, reused or unmapped: once the thread is
 * joined, or ended detached, weft touches none of it. EINVAL if the memory
 * is too small or attr is bound; otherwise weft_spawn's codes. */
int weft__spawn_on(weft_thread **out, weft_fn fn, void *arg, const weft_attr *attr, void *lo,
                   size_t size);

/* Frees the bound threads nobody joined (their kernel threads have ended):
 * weft_finalize. */
void weft__bound_free_all(void);

/* weft_blocking's callback, for weft__blocking_run. */
struct weft__blocking_call {
    void (*fn)(void *arg);
    void *arg;
};
/* Runs call's callback for weft_blocking on a user thread. An unwind out of
 * the callback (a C++ exception, pthread_exit) would resume the caller on a
 * kernel thread that no longer holds its worker, with the hand-off undone
 * by nobody: it aborts with one line instead. */
void weft__blocking_run(void *call);

/* Arms (on = 1, at the end of weft_init) or disarms (weft_finalize) the
 * check that the calling kernel thread, the one that called weft_init,
 * does not end while the runtime runs: pthread_exit in the initial thread
 * would leave the workers running for ever. Call on that kernel thread. */
void weft__initial_guard(int on);

/* Forgets the initial thread's previous child (thread.c: main_prev): the
 * runtime starts, and its descriptors of an earlier run are gone. */
void weft__spawn_main_reset(void);

/* Calls fn(t, arg) for every bound thread not yet freed, under the bound
 * list's lock (fn must not spawn or free one): weft_dump's registry of the
 * threads that live outside the stack slabs. */
void weft__bound_each(void (*fn)(struct weft_thread *t, void *arg), void *arg);

/* Plain kernel threads now inside weft_join (thread.c); weft_finalize waits
 * for none to be left. */
int64_t weft__kernel_joins(void);
/* Plain kernel threads now inside weft_spawn; weft_finalize, once stopping,
 * waits for none to be left. */
int64_t weft__kernel_spawns(void);

#endif
