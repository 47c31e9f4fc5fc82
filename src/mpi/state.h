/* state.h: the process-local state of a weft_dist rank, the flag that says
 * the calling kernel thread runs weft_dist_run, and the two addresses of
 * the layout every other mpi/ file derives from that state (the layout and
 * its invariants: the design block of mpi/dist.h). The bottom of mpi/:
 * dist.c, gate.c, ranksched.c and rma.c all read it, and it calls none of
 * them. */
#ifndef WEFT_MPI_STATE_H
#define WEFT_MPI_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "mpi/dist.h"

/* Process-local state of the rank (see the invariants of mpi/dist.h). */
struct weft__dist {
    int inited, in_run; /* the API's state; the calling kernel thread only */
    int rank, size;
    int force_steal;    /* WEFT_DIST_FORCE_STEAL: no continuation is popped back */
    int oversubscribed; /* more ranks on the node than CPUs: idle ranks yield */
    int all_mapped;     /* shm: every rank's slot is plain memory here */
    const struct weft__dist_xport *xp;
    int idle_seen;                   /* rma: the last answer of ranksched.c's others_idle ... */
    uint64_t idle_asked_ns;          /* ... and when it was asked */
    int spawn_hook;                  /* oversubscribed or polling: ranksched.c's spawn_hook runs */
    uint64_t hook_mask;              /* every hook_mask + 1 spawns (a power of two) */
    char *stack_lo, *stack_hi;       /* U */
    char *slots;                     /* slot 0 */
    size_t object_size;              /* a rank's shared object: U + the control block */
    struct weft__dctl *me;           /* this rank's control block */
    uint64_t gen;                    /* runs so far: the current run's generation */
    uint64_t id_next;                /* thread ids: rank << 40 | counter */
    uint64_t rng;                    /* victim choice */
    int *near;                       /* the other ranks of this node, when the job spans */
    int nnear;                       /* nodes (thieves try them first); else NULL, 0 */
    int near_left;                   /* attempts on this node before the next elsewhere */
    void *sched_sp;                  /* the scheduler context (native stack) */
    struct weft__drec *cur;          /* the running thread; NULL in the scheduler */
    struct weft__drec *spawn_parent; /* spawn -> child start hand-off */
    void *spawn_sp;                  /* where the spawn saves the parent's context */
    int req;                         /* WEFT__DREQ_*: thread -> scheduler */
    struct weft__drec *req_rec, *req_self;
    void *req_sp;
    /* ASan builds: a fiber switch is under way (set before it, cleared on
     * the other side), and the scheduler's stack, learned at the first */
    int san_switching;
    const void *san_native_lo;
    size_t san_native_size;
    char *san_dirty; /* lowest sp U was left at since its shadow was last cleared */
};

extern struct weft__dist weft__dist WEFT_INTERNAL;

/* 1 while the calling kernel thread runs weft_dist_run (set and cleared
 * there, dist.c); gate.c's public calls test it. */
extern __thread int weft__dist_active __attribute__((tls_model("initial-exec"))) WEFT_INTERNAL;

/* Rank r's control block, at the end of its slot. */
static inline struct weft__dctl *weft__dist_ctl(int r)
{
    return (struct weft__dctl *)(weft__dist.slots + ((size_t)r << WEFT__DIST_SLOT_SHIFT) +
                                 WEFT__DIST_STACK_SIZE);
}

/* The rank whose slot holds p. */
static inline int weft__dist_owner(const void *p)
{
    return (int)(((uintptr_t)p - (uintptr_t)weft__dist.slots) >> WEFT__DIST_SLOT_SHIFT);
}

#endif
