/* preempt_test.h: spinners shared by the preemption tests, that can take
 * turns on one worker only by preemption, each counting its rounds in
 * pt_progress. Define PT_ROUNDS (each spinner's rounds that the others
 * must see) before including it; include after testutil.h (which wants
 * _GNU_SOURCE first). */
#ifndef WEFT_TEST_PREEMPT_TEST_H
#define WEFT_TEST_PREEMPT_TEST_H

#include <stdatomic.h>
#include <stdint.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#ifndef PT_ROUNDS
#error "define PT_ROUNDS before including preempt_test.h"
#endif

#define PT_NSPIN 3

/* Rounds each spinner finished; relaxed: only a count to wait for. */
static atomic_int pt_progress[PT_NSPIN];

/* Every spinner has finished at least n rounds. */
static inline int pt_all_reached(int n)
{
    for (int i = 0; i < PT_NSPIN; i++)
        if (atomic_load_explicit(&pt_progress[i], memory_order_relaxed) < n)
            return 0;
    return 1;
}

/* A spinner that calls nothing (arg: its index): PT_ROUNDS rounds of a
 * volatile loop, then spins until every other one has had its rounds. */
static __attribute__((unused)) void *pt_spin_nothing(void *arg)
{
    int me = (int)(intptr_t)arg;
    volatile uint64_t x = 0;
    for (int r = 1; r <= PT_ROUNDS; r++) {
        for (int k = 0; k < 20000; k++)
            x++;
        atomic_store_explicit(&pt_progress[me], r, memory_order_relaxed);
    }
    while (!pt_all_reached(PT_ROUNDS))
        x++; /* only another thread's progress ends this loop */
    return NULL;
}

/* Zeroes the progress (before any spinner runs: a spawn may run the child
 * first), spawns PT_NSPIN threads running fn, the i-th with argument i,
 * and joins them. */
static inline void pt_spinners(weft_fn fn)
{
    for (int i = 0; i < PT_NSPIN; i++)
        atomic_store(&pt_progress[i], 0);
    weft_thread *t[PT_NSPIN];
    for (int i = 0; i < PT_NSPIN; i++)
        CHECK_EQ(weft_spawn(&t[i], fn, (void *)(intptr_t)i, NULL), 0);
    for (int i = 0; i < PT_NSPIN; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
}

#endif
