/* weft_dist.h: weft's fork-join threads across the ranks of an MPI job.
 *
 * The same code that spawns and joins weft threads in one process runs
 * across `mpiexec -n N ./prog`: threads move between ranks, each with its
 * stack at the same address on every rank (uni-address threads), so
 * pointers into a thread's own stack stay valid after a move. Link with
 * `pkg-config --cflags --libs weft-dist` or CMake `weft::dist` (this
 * library carries all of weft; do not link libweft as well).
 *
 * Inside weft_dist_run a user thread may call weft_spawn, weft_spawn_copy,
 * weft_join, weft_yield, weft_self, weft_thread_id, weft_worker_id,
 * weft_dist_rank and weft_dist_size. Every other weft_* call made there
 * returns ENOTSUP (-1 with errno ENOTSUP for the system-call mirrors), as
 * do detached and bound spawns. A thread may move to another rank at
 * weft_spawn, weft_join or weft_yield, and keeps its id. Its argument and
 * the result it returns travel as values: memory they point to must be
 * read before the thread's first move, or hold the same data at the same
 * address on every rank (the program's static data). Heap memory and
 * thread-locals are per rank.
 *
 * The program's code and static data must sit at the same addresses on
 * every rank: where address randomisation is on, the library re-executes
 * the program once before main with randomisation off (as ThreadSanitizer
 * does); where it cannot, weft_dist_init fails with one line saying how to
 * run. docs/distributed.md describes the scheme and its limits.
 */
#ifndef WEFT_DIST_H
#define WEFT_DIST_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective: every rank calls it once, before any other weft_dist_* call.
 * Initialises MPI if the program has not (weft_dist_finalize then
 * finalises it); a program that initialised MPI itself asks for
 * MPI_THREAD_MULTIPLE and finalises it itself. argc and argv are handed to
 * MPI_Init_thread and may be NULL. Returns 0; EBUSY if already called;
 * ENOTSUP inside a run. A rank that cannot take part (identical addresses
 * impossible, ranks spread over several nodes, MPI failing) prints one line
 * naming the cause and returns a non-zero value on every rank. */
WEFT_API int weft_dist_init(int *argc, char ***argv);

/* Collective: rank 0 runs root(arg) as a user thread; the ranks run the
 * threads it spawns, stealing from one another. Returns on every rank once
 * root has returned, with its return value in *result on every rank (when
 * result is not NULL). Blocks the calling kernel thread, which is the
 * rank's worker meanwhile. May be called any number of times between init
 * and finalize. EINVAL before weft_dist_init (or after finalize) or with a
 * NULL root; ENOTSUP inside a run; EAGAIN when the root thread cannot be
 * created. */
WEFT_API int weft_dist_run(weft_fn root, void *arg, void **result);

/* Collective: releases what weft_dist_init set up (and finalises MPI if it
 * initialised it). EINVAL before init; ENOTSUP inside a run. */
WEFT_API int weft_dist_finalize(void);

/* This rank's number in the job (0..size-1); -1 before weft_dist_init and
 * after weft_dist_finalize. Inside a run: the rank the calling thread runs
 * on now (it may change at a spawn, join or yield). */
WEFT_API int weft_dist_rank(void);

/* The number of ranks; 0 before weft_dist_init and after finalize. */
WEFT_API int weft_dist_size(void);

#ifdef __cplusplus
}
#endif

#endif
