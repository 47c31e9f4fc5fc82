/* debug.c: the one symbol debuggers start from (share/weft/weft-gdb.py).
 *
 * The Release library carries no DWARF types, and a core file has no
 * process to call into, so the gdb extension reads plain memory: this
 * table gives it the addresses of the runtime's state and the offsets of
 * the fields it reads, and travels with the library (exported, so that it
 * survives strip --strip-unneeded). Bump WEFT__DEBUG_VERSION when its
 * meaning changes; the script refuses a version it does not know.
 * Version 2 added what the deadlock report reads: the mutex a thread parks
 * on, and how a mutex word names its holder. Version 3 added, at the end
 * of weft__stack_debug, the list of threads on callers' stacks.
 */
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "stack/stack.h"
#include "thread/thread.h"

#define WEFT__DEBUG_VERSION 3

struct weft__debug {
    uint32_t version;
    uint32_t ctx_words; /* saved context: r15 r14 r13 r12 rbx rbp rip (arch/.../context.S) */
    const void *rt;     /* &weft__rt */
    const void *stack;  /* &weft__stack_debug */
    /* struct weft__rt */
    uint32_t rt_state, rt_nworkers, rt_workers, rt_main;
    int32_t rt_running; /* RT_RUNNING */
    /* struct weft__worker */
    uint32_t w_current, w_id;
    /* struct weft_thread */
    uint32_t t_sp, t_worker, t_pinned, t_bound, t_join, t_fn, t_id, t_name, t_wait;
    uint64_t j_freed, j_done; /* join words of threads no longer live */
    /* version 2: the deadlock report (observe/registry.c). A thread parked
     * on a mutex (wait MUTEX) has it at t_wait_on; the mutex's first 8 bytes
     * are its word, whose bits but mutex_bits are the holder's token; a
     * token with owner_thread set is a user thread's id << owner_shift
     * (sync/wait.c: weft__sync_owner). */
    uint32_t t_wait_on, owner_shift;
    uint64_t owner_thread, mutex_bits;
};

__attribute__((visibility("default"), used)) const struct weft__debug weft__debug = {
    .version = WEFT__DEBUG_VERSION,
    .ctx_words = 7,
    .rt = &weft__rt,
    .stack = &weft__stack_debug,
    .rt_state = offsetof(struct weft__rt, state),
    .rt_nworkers = offsetof(struct weft__rt, nworkers),
    .rt_workers = offsetof(struct weft__rt, workers),
    .rt_main = offsetof(struct weft__rt, main),
    .rt_running = RT_RUNNING,
    .w_current = offsetof(struct weft__worker, current),
    .w_id = offsetof(struct weft__worker, id),
    .t_sp = offsetof(struct weft_thread, sp),
    .t_worker = offsetof(struct weft_thread, worker),
    .t_pinned = offsetof(struct weft_thread, pinned),
    .t_bound = offsetof(struct weft_thread, bound),
    .t_join = offsetof(struct weft_thread, join),
    .t_fn = offsetof(struct weft_thread, fn),
    .t_id = offsetof(struct weft_thread, id),
    .t_name = offsetof(struct weft_thread, name),
    .t_wait = offsetof(struct weft_thread, wait),
    .j_freed = WEFT__J_FREED,
    .j_done = WEFT__J_DONE,
    .t_wait_on = offsetof(struct weft_thread, wait_on),
    .owner_shift = 3,
    .owner_thread = (uint64_t)1 << 63,
    .mutex_bits = 7,
};
