/* rma.c: the MPI-3 RMA transport of weft_dist, for ranks on several nodes
 * (or forced with WEFT_DIST_TRANSPORT=rma; dist.c chooses).
 *
 * Each rank maps only its own shared object (its U, also at the common U
 * address, and its control block: the layout of mpi/dist.h) and exposes
 * it as its part of one window, opened once under
 * MPI_Win_lock_all(MPI_MODE_NOCHECK). The displacement of an address in
 * rank r's slot is its offset in the slot, and U's bytes are the object's
 * first ones, so a frame at address p of the common U sits at p - U in
 * every rank's part. Every remote step is one operation complete at the
 * target before the next is issued (Itoyori's scheme, with request-based
 * operations awaited in MPI_Test rather than MPI_Win_flush: see await). A
 * steal is a get of top and base, a fetch-and-add that takes the lock, a
 * fetch-and-add on base, a get of top, of the entry, of the continuation's
 * frame_end and of its frames, and an atomic store that unlocks: eight
 * round trips.
 *
 * Words of one kind of atomics: every read-modify-write of a word that
 * another rank may also change goes through MPI, this rank's on its own
 * window included (the deque lock: the owner's pop and emptiness checks
 * take it with an MPI fetch-and-add; a record's flag; the free-list
 * heads). base is changed only by a holder of the lock, with MPI
 * fetch-and-add, and the owner only loads it (THE protocol's Dekker: the
 * owner stores top, fences and loads base; a thief's add to base is
 * complete at the target before its get of top is issued). Words one
 * party writes and others read (top, exit_gen, a record's state, result
 * and susp) take plain stores here and atomic puts or gets there, which
 * the unified memory model (MPI_WIN_UNIFIED, checked at open) allows.
 *
 * Progress: an MPI whose RMA needs the target's CPU (MPICH without
 * MPICH_ASYNC_PROGRESS, Open MPI's software atomics) completes a thief's
 * operation only when the victim enters MPI. A rank enters MPI in its
 * scheduler loop (every steal attempt), in every remote step, and, while
 * it runs threads, in an MPI_Iprobe every WEFT_DIST_POLL spawns (64). A thread that
 * computes long without spawning holds thieves off until it does.
 */
#include <mpi.h>
#include <sched.h>
#include <string.h>

#include "mpi/dist.h"
#include "mpi/state.h"

#define LOCK_TRIES_YIELD 64 /* failed tries on a held lock between two sched_yield calls */
#define TESTS_YIELD      64 /* MPI_Test calls between two sched_yield calls */

static MPI_Win win = MPI_WIN_NULL;
static MPI_Comm rcomm = MPI_COMM_NULL; /* the library's; only polled here */

/* Where p sits in its owner's part of the window. */
static MPI_Aint disp(const void *p)
{
    return (MPI_Aint)(((uintptr_t)p - (uintptr_t)weft__dist.slots) & (WEFT__DIST_SLOT_SIZE - 1));
}

/* Waits for a request in MPI_Test, never in MPI_Wait or MPI_Win_flush:
 * MPICH (ch4:ucx) serves other ranks' operations on our window from its
 * full progress engine, which MPI_Test runs, but a flush waits in UCX's
 * alone; ranks that all wait in flushes for one another then stall (4
 * ranks here: seconds per operation). The target may need our CPU to
 * answer: with more ranks than CPUs, yield it between two tests; else
 * now and then (other programs may hold the other CPUs). */
static void await(MPI_Request *q)
{
    int done = 0;
    for (unsigned tests = 1;; tests++) {
        MPI_Test(q, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (weft__dist.oversubscribed || tests % TESTS_YIELD == 0)
            sched_yield();
    }
}

/* An atomic read-modify-write of one word at rank r, complete at the
 * target when it returns; the old value in *old. */
static void fetch_op(const void *src, void *old, MPI_Datatype type, int r, const void *at,
                     MPI_Op op)
{
    MPI_Request q;
    MPI_Rget_accumulate(src, src ? 1 : 0, type, old, 1, type, r, disp(at), 1, type, op, win, &q);
    await(&q);
}

/* Where this rank writes bytes meant for dst: for our U, its other
 * mapping in our slot (the same pages). ASan's shadow of U keeps the
 * poison of frames that ran there, which MPI's own memcpy (intercepted)
 * would trip over; the slot's view is never poisoned, and ranksched.c clears
 * U's shadow before resuming frames copied in. Thieves read our U through
 * the window, hence through the slot too. */
static void *landing(void *dst)
{
    struct weft__dist *d = &weft__dist;
    char *p = dst;
    if (p >= d->stack_lo && p < d->stack_hi)
        return d->slots + ((size_t)d->rank << WEFT__DIST_SLOT_SHIFT) + (p - d->stack_lo);
    return dst;
}

static void get_bytes(void *dst, int r, MPI_Aint from, size_t n)
{
    MPI_Request q;
    dst = landing(dst);
    MPI_Rget(dst, (int)n, MPI_BYTE, r, from, (int)n, MPI_BYTE, win, &q);
    await(&q);
}

/* Writes words at rank r, complete at the target when it returns: a
 * replace (an atomic store per word), then a fetch of the last word,
 * which MPI's default accumulate ordering puts after it. */
static void put_words(int r, void *dst, const void *src, size_t n)
{
    MPI_Datatype type = n % sizeof(uint64_t) ? MPI_UINT32_T : MPI_UINT64_T;
    size_t w = n % sizeof(uint64_t) ? sizeof(uint32_t) : sizeof(uint64_t);
    WEFT_ASSERT(n % sizeof(uint32_t) == 0);
    uint64_t last;
    MPI_Accumulate(src, (int)(n / w), type, r, disp(dst), (int)(n / w), type, MPI_REPLACE, win);
    fetch_op(NULL, &last, type, r, (char *)dst + n - w, MPI_NO_OP);
}

static int rma_nonempty(int v)
{
    struct weft__dctl *c = weft__dist_ctl(v);
    /* one get covers both (a hint: base may change under it) */
    char buf[offsetof(struct weft__dctl, base) + sizeof c->base];
    _Static_assert(offsetof(struct weft__dctl, top) == 0, "top opens the control block");
    get_bytes(buf, v, disp(&c->top), sizeof buf);
    int64_t top, base;
    memcpy(&top, buf, sizeof top);
    memcpy(&base, buf + offsetof(struct weft__dctl, base), sizeof base);
    return base < top;
}

/* The lock is a counter (Akiyama & Taura's): taken by the add that finds
 * it 0; an add that finds it held fails and leaves it raised, and the
 * holder's unlock stores 0. Adds and stores only: MPICH has no request
 * form of compare-and-swap (see await). */
static int rma_trylock(int v)
{
    uint32_t one = 1, old;
    fetch_op(&one, &old, MPI_UINT32_T, v, &weft__dist_ctl(v)->lock, MPI_SUM);
    return old == 0;
}

static void rma_lock(int r)
{
    for (unsigned tries = 1; !rma_trylock(r); tries++)
        if (tries % LOCK_TRIES_YIELD == 0)
            sched_yield(); /* the holder may be a process preempted on our CPU */
}

static void rma_unlock(int r)
{
    uint32_t zero = 0, old;
    fetch_op(&zero, &old, MPI_UINT32_T, r, &weft__dist_ctl(r)->lock, MPI_REPLACE);
}

static int rma_take(int v, struct weft__dentry *out)
{
    struct weft__dctl *c = weft__dist_ctl(v);
    int64_t one = 1, minus = -1, b, t, old;
    /* base is raised at the target before top is read: Dekker with pop */
    fetch_op(&one, &b, MPI_INT64_T, v, &c->base, MPI_SUM);
    get_bytes(&t, v, disp(&c->top), sizeof t);
    if (b + 1 > t) {
        fetch_op(&minus, &old, MPI_INT64_T, v, &c->base, MPI_SUM);
        return 0;
    }
    get_bytes(out, v, disp(&c->entries[b & (WEFT__DIST_DEQUE_CAP - 1)]), sizeof *out);
    return 1;
}

static void rma_copy_frames(int v, char *lo, size_t n)
{
    /* into our own U (free: see dist.h), from the same addresses of v's */
    get_bytes(lo, v, (MPI_Aint)(lo - weft__dist.stack_lo), n);
}

static void rma_get(void *dst, const void *src, size_t n)
{
    int r = weft__dist_owner(src);
    if (r == weft__dist.rank)
        memcpy(landing(dst), src, n);
    else
        get_bytes(dst, r, disp(src), n);
}

static void rma_put(void *dst, const void *src, size_t n)
{
    int r = weft__dist_owner(dst);
    if (r == weft__dist.rank) {
        memcpy(dst, src, n);
        /* release: before the atomic that publishes it (MPI_Win_sync is a
         * memory barrier in the unified model) */
        MPI_Win_sync(win);
        return;
    }
    put_words(r, dst, src, n); /* complete before the atomic that publishes it */
}

static uint32_t rma_flag_add(_Atomic uint32_t *flag)
{
    uint32_t one = 1, old;
    fetch_op(&one, &old, MPI_UINT32_T, weft__dist_owner(flag), flag, MPI_SUM);
    MPI_Win_sync(win); /* acquire: what the other party put before its add */
    return old;
}

static uint32_t rma_flag_load(_Atomic uint32_t *flag)
{
    uint32_t old;
    fetch_op(NULL, &old, MPI_UINT32_T, weft__dist_owner(flag), flag, MPI_NO_OP);
    MPI_Win_sync(win);
    return old;
}

/* The one compare-and-swap (rare: a record or buffer freed by a rank
 * other than its owner). It has no request form, so a fetch of the same
 * word, ordered after it, is awaited first; the flush then returns at once. */
static uint32_t cas32(int r, _Atomic uint32_t *at, uint32_t expect, uint32_t desire)
{
    uint32_t old, now;
    MPI_Compare_and_swap(&desire, &expect, &old, MPI_UINT32_T, r, disp(at), win);
    fetch_op(NULL, &now, MPI_UINT32_T, r, at, MPI_NO_OP);
    MPI_Win_flush(r, win);
    return old;
}

static void rma_free_push(_Atomic uint32_t *head, uint32_t *link, uint32_t i)
{
    int r = weft__dist_owner(head);
    uint32_t h, old;
    fetch_op(NULL, &h, MPI_UINT32_T, r, head, MPI_NO_OP);
    for (;;) {
        put_words(r, link, &h, sizeof h); /* the link lands before the push */
        if ((old = cas32(r, head, h, i)) == h)
            return;
        h = old;
    }
}

static uint32_t rma_free_grab(_Atomic uint32_t *head)
{
    uint32_t zero = 0, old;
    fetch_op(&zero, &old, MPI_UINT32_T, weft__dist.rank, head, MPI_REPLACE);
    MPI_Win_sync(win); /* the links the pushers put */
    return old;
}

/* Rank r's run is over (a store: the owner only loads exit_gen). */
static void signal_exit(int r)
{
    struct weft__dist *d = &weft__dist;
    _Atomic uint64_t *g = &weft__dist_ctl(r)->exit_gen;
    if (r == d->rank) {
        /* release: the result; pairs with the acquire in the loop */
        atomic_store_explicit(g, d->gen, memory_order_release);
        return;
    }
    uint64_t gen = d->gen;
    put_words(r, g, &gen, sizeof gen);
}

static void rma_end_run(void *result)
{
    rma_put(&weft__dist_ctl(0)->result, &result, sizeof result);
    signal_exit(0); /* rank 0 passes it on: rma_exit_seen */
}

/* Down a binomial tree from rank 0: rank r signals r + m for every power
 * of two m above r, so each rank is signalled once, in log2(size) rounds. */
static void rma_exit_seen(void)
{
    struct weft__dist *d = &weft__dist;
    for (int m = 1; m < d->size; m <<= 1)
        if (d->rank < m && d->rank + m < d->size)
            signal_exit(d->rank + m);
}

static void rma_poll(void)
{
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, rcomm, &flag, MPI_STATUS_IGNORE);
}

const struct weft__dist_xport weft__dist_rma = WEFT__DIST_XPORT(rma, rma_poll);

int weft__dist_rma_open(MPI_Comm comm)
{
    struct weft__dist *d = &weft__dist;
    char *mine = d->slots + ((size_t)d->rank << WEFT__DIST_SLOT_SHIFT);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    int rc = MPI_Win_create(mine, (MPI_Aint)d->object_size, 1, info, comm, &win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        win = MPI_WIN_NULL;
        return EIO;
    }
    int *model = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    int ok = flag && *model == MPI_WIN_UNIFIED, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        MPI_Win_free(&win);
        return ENOTSUP; /* the owner's plain loads and stores need it */
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    rcomm = comm;
    d->xp = &weft__dist_rma;
    d->all_mapped = 0;
    return 0;
}

void weft__dist_rma_close(void)
{
    if (win == MPI_WIN_NULL)
        return;
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    rcomm = MPI_COMM_NULL;
}
