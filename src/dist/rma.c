/* rma.c: the MPI-3 RMA transport of weft_dist, for ranks on several nodes
 * (or forced with WEFT_DIST_TRANSPORT=rma; dist.c chooses).
 *
 * Each rank maps only its own shared object (its U, also at the common U
 * address, and its control block: the layout of dist/dist.h) and exposes
 * it as its part of one window, opened once under
 * MPI_Win_lock_all(MPI_MODE_NOCHECK). The displacement of an address in
 * rank r's slot is its offset in the slot, and U's bytes are the object's
 * first ones, so a frame at address p of the common U sits at p - U in
 * every rank's part. Every remote step is one blocking operation followed
 * by MPI_Win_flush (Itoyori's scheme): a steal is a get of top and base,
 * a compare-and-swap on the lock, a fetch-and-op on base, a get of top, of
 * the entry, of the continuation's frame_end and of its frames, and an
 * atomic store that unlocks: eight round trips.
 *
 * Words of one kind of atomics: every read-modify-write of a word that
 * another rank may also change goes through MPI, this rank's on its own
 * window included (the deque lock: the owner's pop and emptiness checks
 * lock it with MPI compare-and-swap; a record's flag; the free-list
 * heads). base is changed only by a holder of the lock, with MPI
 * fetch-and-op, and the owner only loads it (THE protocol's Dekker: the
 * owner stores top, fences and loads base; a thief's fetch-and-op on base
 * is complete at the target before its get of top is issued). Words one
 * party writes and others read (top, exit_gen, a record's state, result
 * and susp) take plain stores here and puts or gets there, which the
 * unified memory model (MPI_WIN_UNIFIED, checked at open) allows.
 *
 * Progress: an MPI whose RMA needs the target's CPU (MPICH without
 * MPICH_ASYNC_PROGRESS, Open MPI's software atomics) completes a thief's
 * operation only when the victim enters MPI. A rank enters MPI in its
 * scheduler loop (every steal attempt), in every remote step, and, while
 * it runs threads, in an MPI_Iprobe every poll_every spawns. A thread that
 * computes long without spawning holds thieves off until it does.
 */
#include <mpi.h>
#include <sched.h>
#include <string.h>

#include "dist/dist.h"

#define LOCK_TRIES_YIELD 64 /* failed tries on a held lock between two sched_yield calls */

static MPI_Win win = MPI_WIN_NULL;
static MPI_Comm rcomm = MPI_COMM_NULL; /* the library's; only polled here */

/* Where p sits in its owner's part of the window. */
static MPI_Aint disp(const void *p)
{
    return (MPI_Aint)(((uintptr_t)p - (uintptr_t)weft__dist.slots) &
                      (WEFT__DIST_SLOT_SIZE - 1));
}

static void flush(int r)
{
    MPI_Win_flush(r, win);
}

static int rma_nonempty(int v)
{
    struct weft__dctl *c = weft__dist_ctl(v);
    /* one get covers both (a hint: base may change under it) */
    const char *lo = (const char *)&c->top;
    const char *hi = (const char *)(&c->base + 1);
    char buf[offsetof(struct weft__dctl, base) + sizeof c->base];
    _Static_assert(offsetof(struct weft__dctl, top) == 0, "top opens the control block");
    MPI_Get(buf, (int)(hi - lo), MPI_BYTE, v, disp(lo), (int)(hi - lo), MPI_BYTE, win);
    flush(v);
    int64_t top, base;
    memcpy(&top, buf, sizeof top);
    memcpy(&base, buf + offsetof(struct weft__dctl, base), sizeof base);
    return base < top;
}

static int rma_trylock(int v)
{
    uint32_t one = 1, zero = 0, old = 1;
    MPI_Compare_and_swap(&one, &zero, &old, MPI_UINT32_T, v, disp(&weft__dist_ctl(v)->lock), win);
    flush(v);
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
    uint32_t zero = 0;
    /* an atomic store: the lock's other accesses are atomics too */
    MPI_Accumulate(&zero, 1, MPI_UINT32_T, r, disp(&weft__dist_ctl(r)->lock), 1, MPI_UINT32_T,
                   MPI_REPLACE, win);
    flush(r);
}

static int rma_take(int v, struct weft__dentry *out)
{
    struct weft__dctl *c = weft__dist_ctl(v);
    int64_t one = 1, minus = -1, b, t;
    MPI_Fetch_and_op(&one, &b, MPI_INT64_T, v, disp(&c->base), MPI_SUM, win);
    flush(v); /* base is raised at the target before top is read: Dekker with pop */
    MPI_Get(&t, 1, MPI_INT64_T, v, disp(&c->top), 1, MPI_INT64_T, win);
    flush(v);
    if (b + 1 > t) {
        MPI_Accumulate(&minus, 1, MPI_INT64_T, v, disp(&c->base), 1, MPI_INT64_T, MPI_SUM, win);
        flush(v);
        return 0;
    }
    const struct weft__dentry *e = &c->entries[b & (WEFT__DIST_DEQUE_CAP - 1)];
    MPI_Get(out, (int)sizeof *out, MPI_BYTE, v, disp(e), (int)sizeof *out, MPI_BYTE, win);
    flush(v);
    return 1;
}

static void rma_copy_frames(int v, char *lo, size_t n)
{
    /* into our own U (free: see dist.h), from the same addresses of v's */
    MPI_Get(lo, (int)n, MPI_BYTE, v, (MPI_Aint)(lo - weft__dist.stack_lo), (int)n, MPI_BYTE, win);
    flush(v);
}

static void rma_get(void *dst, const void *src, size_t n)
{
    int r = weft__dist_owner(src);
    if (r == weft__dist.rank) {
        memcpy(dst, src, n);
        return;
    }
    MPI_Get(dst, (int)n, MPI_BYTE, r, disp(src), (int)n, MPI_BYTE, win);
    flush(r);
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
    MPI_Put(src, (int)n, MPI_BYTE, r, disp(dst), (int)n, MPI_BYTE, win);
    flush(r); /* complete at the target before the atomic that publishes it */
}

static uint32_t rma_flag_add(_Atomic uint32_t *flag)
{
    uint32_t one = 1, old;
    int r = weft__dist_owner(flag);
    MPI_Fetch_and_op(&one, &old, MPI_UINT32_T, r, disp(flag), MPI_SUM, win);
    flush(r);
    MPI_Win_sync(win); /* acquire: what the other party put before its add */
    return old;
}

static uint32_t rma_flag_load(_Atomic uint32_t *flag)
{
    uint32_t old;
    int r = weft__dist_owner(flag);
    MPI_Fetch_and_op(NULL, &old, MPI_UINT32_T, r, disp(flag), MPI_NO_OP, win);
    flush(r);
    MPI_Win_sync(win);
    return old;
}

static void rma_free_push(_Atomic uint32_t *head, uint32_t *link, uint32_t i)
{
    int r = weft__dist_owner(head);
    uint32_t h, old;
    MPI_Fetch_and_op(NULL, &h, MPI_UINT32_T, r, disp(head), MPI_NO_OP, win);
    flush(r);
    for (;;) {
        MPI_Put(&h, 1, MPI_UINT32_T, r, disp(link), 1, MPI_UINT32_T, win);
        flush(r); /* the link lands before the push */
        MPI_Compare_and_swap(&i, &h, &old, MPI_UINT32_T, r, disp(head), win);
        flush(r);
        if (old == h)
            return;
        h = old;
    }
}

static uint32_t rma_free_grab(_Atomic uint32_t *head)
{
    uint32_t zero = 0, old;
    int r = weft__dist.rank;
    MPI_Fetch_and_op(&zero, &old, MPI_UINT32_T, r, disp(head), MPI_REPLACE, win);
    flush(r);
    MPI_Win_sync(win); /* the links the pushers put */
    return old;
}

/* Rank r's run is over (a put: the owner only loads exit_gen). */
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
    MPI_Put(&gen, 1, MPI_UINT64_T, r, disp(g), 1, MPI_UINT64_T, win);
    flush(r);
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

const struct weft__dist_xport weft__dist_rma = {
    .name = "rma",
    .nonempty = rma_nonempty,
    .trylock = rma_trylock,
    .lock = rma_lock,
    .unlock = rma_unlock,
    .take = rma_take,
    .copy_frames = rma_copy_frames,
    .get = rma_get,
    .put = rma_put,
    .flag_add = rma_flag_add,
    .flag_load = rma_flag_load,
    .free_push = rma_free_push,
    .free_grab = rma_free_grab,
    .end_run = rma_end_run,
    .exit_seen = rma_exit_seen,
    .poll = rma_poll,
};

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
