/* dist.h: the shared-memory layout of weft_dist, its transports, and what
 * its files call of one another (the per-rank state: mpi/state.h).
 *
 * Design
 * ------
 * Uni-address threads (Akiyama & Taura, HPDC'15; Itoyori, SC'23): every
 * rank runs one worker, which runs its user threads child-first on one
 * stack region U that sits at the same virtual address on every rank. A
 * spawn saves the parent's registers on U (its continuation), pushes
 * {saved sp, parent} on the rank's deque and calls the child below it. A
 * thief copies the frames of the oldest continuation, [sp - RED, the
 * parent's frame_end), from the victim's U into the same addresses of its
 * own U and resumes them there: no pointer needs fixing, and a thread's
 * stack is only ever as large as its frames. A joiner that must wait
 * copies its frames out (evacuation) and leaves U; whoever finishes the
 * joined thread copies them back into its own U and resumes it. The join
 * race is one atomic counter per thread record (flag): the second of the
 * two parties to arrive goes on with the joiner.
 *
 * Transports (struct weft__dist_xport): how a rank reaches the memory of
 * another. Both keep the same layout at the same addresses, so a thread
 * record or an evacuation buffer is a plain pointer valid everywhere.
 *  - shm, when every rank is on one node: the ranks map each other's U and
 *    control block through POSIX shared memory, and a steal is CPU loads,
 *    stores and atomics: no MPI call runs during weft_dist_run, hence no
 *    progress thread and no polling, and a computing victim is robbed
 *    without its help.
 *  - rma (mpi/rma.c), when the ranks span several nodes, or forced by
 *    WEFT_DIST_TRANSPORT=rma: a rank maps only its own object, exposed as
 *    one MPI-3 window under MPI_Win_lock_all(MPI_MODE_NOCHECK); a remote
 *    step is a blocking get, put, compare-and-swap or fetch-and-op plus
 *    MPI_Win_flush (Itoyori's scheme). A busy rank polls MPI every few
 *    spawns for targets whose MPI needs it (MPICH without its progress
 *    thread).
 * The owner's spawn, push and pop fast path is the same plain code under
 * both. CPU and MPI atomics never meet on one word: under rma every
 * read-modify-write of a word another rank may touch (the deque lock, a
 * record's flag, the free-list heads) is an MPI atomic, the owner's on its
 * own window included; base is changed only by lock holders (MPI
 * fetch-and-op) and only read by the owner; top, exit_gen and the other
 * words are written by one party and read by the others.
 *
 * The region, reserved at one address agreed by all ranks, in slots of
 * SLOT_SIZE (a power of two, so an address's rank is a shift):
 *   [guard page, U: STACK_SIZE, unused][slot 0]...[slot n-1]
 * slot r maps rank r's shared object: its U (the thieves' view of it)
 * followed by its control block (struct weft__dctl). The owner maps its
 * object twice: at U and in its slot.
 *
 * Invariants
 *  - A worker's U holds live frames only of the running thread and of the
 *    continuations in its deque, stacked in deque order (the oldest
 *    highest). So when the deque is empty and no thread runs, U is free,
 *    and the scheduler may copy frames into it.
 *  - A thread's frames are [its saved sp - RED, its record's frame_end):
 *    frame_end is set at spawn and never changes, on any rank.
 *  - Process-local state (struct weft__dist, mpi/state.h) is a static
 *    object: the same address on every rank, but each rank's own
 *    contents. Code that may have moved (after a spawn, join or yield)
 *    re-reads it and keeps no pointer derived from it across such a call.
 */
#ifndef WEFT_DIST_DIST_H
#define WEFT_DIST_DIST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "weft.h"

/* A slot is 64 MiB of address space (U + a control block), a power of two
 * so that an address's rank is a shift. */
#define WEFT__DIST_SLOT_SHIFT 26
#define WEFT__DIST_SLOT_SIZE  ((size_t)1 << WEFT__DIST_SLOT_SHIFT)
/* Bytes below a saved sp that belong to it (the FP control words,
 * arch/x86_64-sysv/context.S). */
#define WEFT__DIST_RED         64
#define WEFT__DIST_STACK_SIZE  ((size_t)16 << 20) /* U: bounds one chain of frames */
#define WEFT__DIST_DEQUE_CAP   (1u << 16)         /* >= U / SPAWN_GAP: never full */
#define WEFT__DIST_NREC        (1u << 16)         /* thread records per rank */
#define WEFT__DIST_NEVAC       512u               /* evacuation buffers per rank */
#define WEFT__DIST_EVAC_SIZE   ((size_t)64 << 10) /* frames of one suspended joiner */
#define WEFT__DIST_SPAWN_GAP   256  /* a spawn starts the child this far below its own sp */
#define WEFT__DIST_STACK_SLACK 8192 /* room a spawn leaves for the child's frames */
#define WEFT__DIST_ARG_MAX     4096 /* weft_spawn_copy's limit */
#define WEFT__DIST_SHARE_EVERY 256  /* oversubscribed: spawns between two looks for idle ranks */
#define WEFT__DIST_POLL_EVERY  64   /* rma: spawns between two polls of MPI (WEFT_DIST_POLL) */
#define WEFT__DIST_NEAR_TRIES  3    /* steal attempts on one's node between two elsewhere */

/* Record states (weft__drec.state). */
enum { WEFT__DREC_LIVE = 0, WEFT__DREC_DONE = 1, WEFT__DREC_FREED = 2 };

/* A thread record: the thread's handle (weft_thread *), in its spawner's
 * control block, so the same pointer on every rank. */
struct weft__drec {
    uint64_t id;            /* immutable while live */
    weft_fn fn;             /* immutable while live */
    void *arg;              /* what fn receives; the copy on the child's stack for spawn_copy */
    const void *copy;       /* spawn_copy: the parent's bytes, read once by the child's start */
    size_t copy_size;       /* spawn_copy: their size; 0: arg is passed as is */
    char *frame_end;        /* top of the thread's frames on U; immutable while live */
    void *result;           /* written by the thread before DONE or its flag add (release) */
    _Atomic uint32_t state; /* LIVE, DONE (finished and popped its parent back: the
                               parent, on this rank, joins it), FREED (joined) */
    _Atomic uint32_t flag;  /* the join race: the finishing thread and a joiner that must
                               wait each add 1 (acq_rel); whoever sees 1 goes on with the
                               joiner */
    /* A joiner that waits: written by its rank before its flag add (one
     * put under rma, hence a struct). */
    struct weft__dsusp {
        char *sp;               /* its saved context on U */
        char *evac;             /* where its frames were copied */
        struct weft__drec *rec; /* its own record */
    } susp;
    uint32_t next_free; /* free-list link (index + 1); owner, or a remote freer
                                    before its CAS */
} WEFT_ALIGNED;

/* A deque entry: a continuation of thread rec saved at sp. */
struct weft__dentry {
    char *sp;
    struct weft__drec *rec;
};

/* One rank's control block, in shared memory. */
struct weft__dctl {
    _Atomic int64_t top WEFT_ALIGNED;       /* owner stores (release: publishes the entry) */
    _Atomic int64_t base WEFT_ALIGNED;      /* thieves, under lock; owner reads */
    _Atomic uint32_t lock WEFT_ALIGNED;     /* 0 free, 1 held: a thief (during its copy), or
                                               the owner deciding a contended pop */
    _Atomic uint64_t exit_gen WEFT_ALIGNED; /* = the run's generation once its root returned
                                               (release by the root's rank) */
    void *result;              /* rank 0's only: the root's result, written before exit_gen */
    _Atomic uint32_t idle;     /* 1 while the owner's scheduler looks for work; a hint for
                                  WEFT_DIST_FORCE_STEAL (relaxed) */
    _Atomic uint64_t loop_gen; /* the generation of the run whose loop the owner entered;
                                  rank 0 waits for it before it starts the root (relaxed:
                                  a hint) */

    /* pools: the owner allocates; anyone frees (a remote free pushes onto
     * the *_remote stack with a CAS; the owner takes the whole stack with
     * one exchange, so no ABA) */
    uint32_t rec_bump, rec_free;              /* owner only */
    uint32_t evac_bump, evac_free;            /* owner only */
    _Atomic uint32_t rec_remote WEFT_ALIGNED; /* index + 1 of the top; 0: empty */
    _Atomic uint32_t evac_remote WEFT_ALIGNED;

    /* counters for WEFT_DIST_STATS; owner only */
    uint64_t nspawns, nsteals, nsuspends, steal_ns;
    uint64_t nfails;  /* steal attempts that came back empty-handed */
    uint64_t idle_ns; /* time in the scheduler loop without a thread to run */
    uint64_t nnear;   /* steal attempts on a rank of this node (node first) */

    struct weft__dentry entries[WEFT__DIST_DEQUE_CAP]; /* [base, top): owner writes at top */
    uint32_t evac_next[WEFT__DIST_NEVAC];              /* free-list links of evac buffers */
    struct weft__drec recs[WEFT__DIST_NREC];
    char evac[WEFT__DIST_NEVAC][WEFT__DIST_EVAC_SIZE] __attribute__((aligned(4096)));
};

/* Requests a user thread leaves for the scheduler context. */
enum { WEFT__DREQ_NONE, WEFT__DREQ_SUSPEND, WEFT__DREQ_RESUME };

/* How a rank reaches another's memory (the design block above). The
 * addresses are those of the layout; rank r is the owner of what they
 * point into. The owner's fast path (spawn, push, pop, a join of a child
 * that popped its parent back) never goes through here. */
struct weft__dist_xport {
    const char *name;
    int (*nonempty)(int v); /* a hint: rank v's deque seems to hold an entry */
    int (*trylock)(int v);  /* rank v's deque lock, one attempt: 1 taken */
    void (*lock)(int r);    /* the lock, waiting (the owner on its own) */
    void (*unlock)(int r);  /* after every access the lock covers is complete */
    /* Under v's lock: claims the entry at base (raises base, then re-reads
     * top, Dekker with the owner's pop); 0 and base restored when the
     * owner took it back. */
    int (*take)(int v, struct weft__dentry *out);
    void (*copy_frames)(int v, char *lo, size_t n);    /* v's U [lo, lo + n) into ours */
    void (*get)(void *dst, const void *src, size_t n); /* src in any rank's slot */
    void (*put)(void *dst, const void *src, size_t n); /* dst in any rank's slot */
    /* The join race on a record's flag: adds 1, returns the old value
     * (acq_rel); and its read (acquire). */
    uint32_t (*flag_add)(_Atomic uint32_t *flag);
    uint32_t (*flag_load)(_Atomic uint32_t *flag);
    /* A free by a rank other than the owner: link = the old head, then
     * head = i, atomically (release); the owner takes the whole stack. */
    void (*free_push)(_Atomic uint32_t *head, uint32_t *link, uint32_t i);
    uint32_t (*free_grab)(_Atomic uint32_t *head); /* acquire */
    /* The root returned with result: rank 0 gets it, and the run's end is
     * signalled (release); exit_seen runs on every rank as it leaves its
     * loop (rma forwards the signal down a binomial tree). */
    void (*end_run)(void *result);
    void (*exit_seen)(void);
    void (*poll)(void); /* lets the MPI serve others' operations on our window */
};

/* A transport's table from its functions, named PREFIX_op for every op
 * (PREFIX_nonempty, ...): one list of the ops for every transport. POLL
 * is given apart, as NULL where the transport needs no polling. */
#define WEFT__DIST_XPORT(prefix, poll_fn)                                                          \
    {                                                                                              \
        .name = #prefix, .nonempty = prefix##_nonempty, .trylock = prefix##_trylock,               \
        .lock = prefix##_lock, .unlock = prefix##_unlock, .take = prefix##_take,                   \
        .copy_frames = prefix##_copy_frames, .get = prefix##_get, .put = prefix##_put,             \
        .flag_add = prefix##_flag_add, .flag_load = prefix##_flag_load,                            \
        .free_push = prefix##_free_push, .free_grab = prefix##_free_grab,                          \
        .end_run = prefix##_end_run, .exit_seen = prefix##_exit_seen, .poll = (poll_fn),           \
    }

extern const struct weft__dist_xport weft__dist_shm WEFT_INTERNAL;
extern const struct weft__dist_xport weft__dist_rma WEFT_INTERNAL;

_Static_assert(WEFT__DIST_STACK_SIZE + sizeof(struct weft__dctl) <= WEFT__DIST_SLOT_SIZE,
               "a rank's shared object fits its slot");

/* ranksched.c: the worker. */
void weft__dist_reset(struct weft__dctl *c) WEFT_INTERNAL;
void weft__dist_loop(void) WEFT_INTERNAL;
int weft__dist_start_root(weft_fn fn, void *arg) WEFT_INTERNAL;
int weft__dist_spawn(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                     const weft_attr *attr) WEFT_INTERNAL;
int weft__dist_join(weft_thread *t, void **result) WEFT_INTERNAL;
int weft__dist_is_rec(const weft_thread *t) WEFT_INTERNAL;
uint64_t weft__dist_rec_id(const weft_thread *t) WEFT_INTERNAL;
_Noreturn void weft__dist_exit(void *result) WEFT_INTERNAL;

/* rma.c: the window over this rank's object, opened (which makes rma the
 * transport) and closed collectively on the library's communicator; open
 * returns 0 or an errno. */
#if defined(MPI_VERSION)
int weft__dist_rma_open(MPI_Comm comm) WEFT_INTERNAL;
#endif
void weft__dist_rma_close(void) WEFT_INTERNAL;

/* reexec.c: why identical addresses are impossible here, or NULL. */
const char *weft__dist_aslr_problem(void) WEFT_INTERNAL;

#endif
