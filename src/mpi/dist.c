/* dist.c: weft_dist_init, run and finalize: MPI, the checks that every rank
 * can take part, the choice of transport, and the uni-address region
 * (layout in mpi/dist.h). Under the shm transport MPI is called only
 * here, outside runs; under rma, mpi/rma.c calls it during runs too. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mpi/dist.h"
#include "mpi/state.h"
#include "weft_dist.h"

#define PAGE_SIZE_MAX ((size_t)4096)

/* Where the region may go: high, far from the executable, the heap and the
 * mmap area of an unrandomised layout. The first free on every rank wins. */
static const uintptr_t region_candidates[] = { 0x200000000000u, 0x300000000000u, 0x400000000000u,
                                               0x500000000000u, 0x100000000000u };

/* WEFT_DIST_TRANSPORT's values */
enum { TRANSPORT_AUTO, TRANSPORT_SHM, TRANSPORT_RMA, TRANSPORT_BAD };

static MPI_Comm comm = MPI_COMM_NULL;
static int mpi_ours; /* weft_dist_init initialised MPI */
static char *region; /* the reservation; NULL when none */
static size_t region_size;

static void say(const char *cause)
{
    fprintf(stderr, "weft_dist: rank %d: %s\n", weft__dist.rank, cause);
}

/* 1 when every rank says ok. Collective. */
static int all_ok(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

static int reserve_region(size_t size)
{
    for (size_t i = 0; i < sizeof region_candidates / sizeof region_candidates[0]; i++) {
        void *want = (void *)region_candidates[i];
        void *p = mmap(want, size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        int ok = p == want;
        if (p != MAP_FAILED && !ok)
            munmap(p, size); /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
        if (all_ok(ok)) {
            region = want;
            region_size = size;
            return 0;
        }
        if (ok)
            munmap(p, size);
    }
    return EADDRNOTAVAIL;
}

static void shm_name(char *buf, size_t n, uint64_t tag, int rank)
{
    snprintf(buf, n, "/weft-dist-%llx-%d", (unsigned long long)tag, rank);
}

/* Maps the ranks' shared objects into the region (under rma, only this
 * rank's own: the others are reached through the window); collective. */
static int map_ranks(int rma)
{
    struct weft__dist *d = &weft__dist;
    uint64_t tag = ((uint64_t)getpid() << 24) ^ weft__now_ns();
    MPI_Bcast(&tag, 1, MPI_UINT64_T, 0, comm);
    char name[64];
    shm_name(name, sizeof name, tag, d->rank);
    int ok = 0;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    char *mine = d->slots + ((size_t)d->rank << WEFT__DIST_SLOT_SHIFT);
    if (fd >= 0) {
        ok = ftruncate(fd, (off_t)d->object_size) == 0 &&
             mmap(d->stack_lo, WEFT__DIST_STACK_SIZE, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
             mmap(mine, d->object_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) !=
                 MAP_FAILED;
        close(fd);
    }
    int all = all_ok(ok);
    for (int r = 0; all && !rma && r < d->size; r++) {
        if (r == d->rank)
            continue;
        char other[64];
        shm_name(other, sizeof other, tag, r);
        int ofd = shm_open(other, O_RDWR, 0);
        if (ofd < 0) {
            ok = 0;
            break;
        }
        if (mmap(d->slots + ((size_t)r << WEFT__DIST_SLOT_SHIFT), d->object_size,
                 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ofd, 0) == MAP_FAILED)
            ok = 0;
        close(ofd);
    }
    if (all)
        all = all_ok(ok); /* also: every rank has opened every object */
    if (fd >= 0)
        shm_unlink(name); /* mapped where needed: nothing is left in /dev/shm */
    return all ? 0 : ENOMEM;
}

static int transport_wanted(void)
{
    const char *t = getenv("WEFT_DIST_TRANSPORT");
    if (!t || !*t || strcmp(t, "auto") == 0)
        return TRANSPORT_AUTO;
    if (strcmp(t, "shm") == 0)
        return TRANSPORT_SHM;
    if (strcmp(t, "rma") == 0)
        return TRANSPORT_RMA;
    return TRANSPORT_BAD;
}

/* Why this rank cannot take part, or NULL; *code gets the error, *node_size
 * the number of ranks on this rank's node, *rma whether it needs the rma
 * transport. */
static const char *local_problem(int *code, int *node_size, int *rma)
{
    MPI_Comm node;
    *node_size = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, node_size);
        MPI_Comm_free(&node);
    }
    int want = transport_wanted();
    if (want == TRANSPORT_BAD) {
        *code = EINVAL;
        return "WEFT_DIST_TRANSPORT must be auto, shm or rma";
    }
    *rma = want == TRANSPORT_RMA || (want == TRANSPORT_AUTO && *node_size != weft__dist.size);
    if (want == TRANSPORT_SHM && *node_size != weft__dist.size) {
        *code = ENOTSUP;
        return "WEFT_DIST_TRANSPORT=shm, but the ranks span several nodes (use rma or auto)";
    }
    const char *aslr = weft__dist.size > 1 ? weft__dist_aslr_problem() : NULL;
    if (aslr) {
        *code = EADDRNOTAVAIL;
        return aslr;
    }
    return NULL;
}

/* Code and static data at the same addresses on every rank; collective. */
static int same_addresses(void *caller)
{
    uint64_t mine[3] = { (uint64_t)(uintptr_t)&weft__dist, (uint64_t)(uintptr_t)weft_dist_init,
                         (uint64_t)(uintptr_t)caller };
    uint64_t lo[3], hi[3];
    MPI_Allreduce(mine, lo, 3, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(mine, hi, 3, MPI_UINT64_T, MPI_MAX, comm);
    return memcmp(lo, hi, sizeof lo) == 0;
}

/* WEFT_DIST_POLL: spawns between two polls of MPI under rma, rounded up
 * to a power of two; 0: never. */
static unsigned long poll_every(void)
{
    const char *p = getenv("WEFT_DIST_POLL");
    if (!p || !*p)
        return WEFT__DIST_POLL_EVERY;
    unsigned long n = strtoul(p, NULL, 10), every = 1;
    if (n == 0)
        return 0;
    while (every < n && every < (1ul << 30))
        every <<= 1;
    return every;
}

/* Node first: the other ranks of this rank's node, which its thieves try
 * before the rest (ranksched.c's victim). None when every rank is on one
 * node (they all are near) or none shares ours. WEFT_DIST_NODE_RANKS=n
 * groups consecutive ranks by n instead of by node (tests, experiments on
 * one machine). Collective. */
static void find_near(struct weft__dist *d)
{
    const char *e = getenv("WEFT_DIST_NODE_RANKS");
    long per = e && *e ? strtol(e, NULL, 10) : 0;
    int key = d->rank, n = 0;
    MPI_Comm node;
    if (per > 0)
        key = (int)(d->rank / per);
    else if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
             MPI_SUCCESS) {
        MPI_Allreduce(&d->rank, &key, 1, MPI_INT, MPI_MIN, node); /* the node's lowest rank */
        MPI_Comm_free(&node);
    }
    int *keys = malloc(sizeof *keys * (size_t)d->size);
    int *near = malloc(sizeof *near * (size_t)d->size);
    int ok = keys && near, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (all_ok) {
        MPI_Allgather(&key, 1, MPI_INT, keys, 1, MPI_INT, comm);
        for (int r = 0; r < d->size; r++)
            if (r != d->rank && keys[r] == key)
                near[n++] = r;
    }
    free(keys);
    if (n == 0 || n == d->size - 1) {
        free(near);
        near = NULL;
        n = 0;
    }
    d->near = near;
    d->nnear = n;
    d->near_left = n ? WEFT__DIST_NEAR_TRIES : 0;
}

static void release_all(void)
{
    free(weft__dist.near);
    weft__dist.near = NULL;
    weft__dist.nnear = 0;
    weft__dist_rma_close();
    if (region)
        munmap(region, region_size);
    region = NULL;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    comm = MPI_COMM_NULL;
    if (mpi_ours)
        MPI_Finalize();
    mpi_ours = 0;
    memset(&weft__dist, 0, sizeof weft__dist);
}

int weft_dist_init(int *argc, char ***argv)
{
    struct weft__dist *d = &weft__dist;
    if (weft__dist_active)
        return ENOTSUP;
    if (d->inited)
        return EBUSY;
#if defined(WEFT_SANITIZE_THREAD)
    /* Before MPI is touched: MPICH's MPI_Finalize crashes under TSan. */
    fprintf(stderr, "weft_dist: not available in ThreadSanitizer builds (stack frames are "
                    "copied between processes, which TSan cannot follow)\n");
    (void)argc;
    (void)argv;
    return ENOTSUP;
#endif
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        int fin = 0, provided;
        MPI_Finalized(&fin);
        if (fin) {
            fprintf(stderr, "weft_dist: MPI was finalised already; it cannot start again\n");
            return EINVAL;
        }
        if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            fprintf(stderr, "weft_dist: MPI_Init_thread failed\n");
            return EIO;
        }
        mpi_ours = 1;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &d->rank);
    MPI_Comm_size(comm, &d->size);

    int code = 0, rc, node_size, rma, any_rma = 0;
    const char *why = local_problem(&code, &node_size, &rma);
    if (why)
        say(why);
    MPI_Allreduce(&code, &rc, 1, MPI_INT, MPI_MAX, comm);
    MPI_Allreduce(&rma, &any_rma, 1, MPI_INT, MPI_MAX, comm); /* one transport for all */
    if (rc == 0 && !same_addresses(__builtin_return_address(0))) {
        if (d->rank == 0)
            say("code or static data sit at different addresses on different ranks; run the "
                "same executable on every rank, as: mpiexec -n N setarch $(uname -m) -R PROG");
        rc = EADDRNOTAVAIL;
    }
    d->object_size = WEFT__DIST_STACK_SIZE +
                     ((sizeof(struct weft__dctl) + PAGE_SIZE_MAX - 1) & ~(PAGE_SIZE_MAX - 1));
    if (rc == 0 && (rc = reserve_region((size_t)(d->size + 1) << WEFT__DIST_SLOT_SHIFT)) != 0 &&
        d->rank == 0)
        say("no virtual address range is free on every rank for the thread stacks");
    if (rc == 0) {
        d->stack_lo = region + PAGE_SIZE_MAX; /* below it: a guard page */
        d->stack_hi = d->stack_lo + WEFT__DIST_STACK_SIZE;
        /* slots on a slot boundary: an address's rank is a shift */
        d->slots = region + WEFT__DIST_SLOT_SIZE;
        if ((rc = map_ranks(any_rma)) != 0 && d->rank == 0)
            say("could not share the thread stacks through POSIX shared memory (/dev/shm)");
    }
    if (rc == 0 && any_rma && (rc = weft__dist_rma_open(comm)) != 0 && d->rank == 0)
        say("the MPI cannot expose the thread stacks as an RMA window with the unified memory "
            "model");
    if (rc != 0) {
        release_all();
        return rc;
    }
    d->me = weft__dist_ctl(d->rank);
    d->rng = WEFT_GOLDEN64 ^ ((uint64_t)d->rank << 32 | 1);
    find_near(d);
    const char *force = getenv("WEFT_DIST_FORCE_STEAL");
    d->force_steal = force && *force && strcmp(force, "0") != 0;
    d->oversubscribed = node_size > sysconf(_SC_NPROCESSORS_ONLN);
    if (!any_rma) {
        d->xp = &weft__dist_shm;
        d->all_mapped = 1;
    }
    unsigned long every = any_rma ? poll_every() : 0;
    if (d->oversubscribed && (!every || every > WEFT__DIST_SHARE_EVERY))
        every = WEFT__DIST_SHARE_EVERY;
    d->spawn_hook = every != 0;
    d->hook_mask = every ? every - 1 : 0;
    d->inited = 1;
    return 0;
}

int weft_dist_run(weft_fn root, void *arg, void **result)
{
    struct weft__dist *d = &weft__dist;
    if (weft__dist_active)
        return ENOTSUP;
    if (!d->inited)
        return EINVAL;
    d->gen++;
    weft__dist_reset(d->me);
    /* Collective: every control block is reset before anybody steals, and
     * rank 0's root decides for all. */
    int bad = d->rank == 0 && !root, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm);
    if (any_bad)
        return EINVAL;
    weft__dist_active = 1;
    d->in_run = 1;
    if (d->rank == 0 && weft__dist_start_root(root, arg) != 0)
        d->xp->end_run(NULL); /* cannot happen after a reset; end the run */
    weft__dist_loop();
    d->in_run = 0;
    weft__dist_active = 0;
    /* Rank 0's loop saw exit_gen (acquire), so the result is in its block;
     * it reads it before the barrier, after which it may reset the block. */
    void *r = d->rank == 0 ? d->me->result : NULL;
    MPI_Bcast(&r, sizeof r, MPI_BYTE, 0, comm);
    /* Nobody reads another rank's block after this (a thief mid-steal). */
    MPI_Barrier(comm);
    if (result)
        *result = r;
    return 0;
}

int weft_dist_finalize(void)
{
    struct weft__dist *d = &weft__dist;
    if (weft__dist_active)
        return ENOTSUP;
    if (!d->inited)
        return EINVAL;
    const char *stats = getenv("WEFT_DIST_STATS");
    if (stats && *stats && strcmp(stats, "0") != 0) {
        struct weft__dctl *c = d->me;
        fprintf(stderr,
                "weft_dist: rank %d: spawns %llu steals %llu steal_ns_mean %llu suspends %llu "
                "fails %llu idle_ns %llu near %llu transport %s\n",
                d->rank, (unsigned long long)c->nspawns, (unsigned long long)c->nsteals,
                (unsigned long long)(c->nsteals ? c->steal_ns / c->nsteals : 0),
                (unsigned long long)c->nsuspends, (unsigned long long)c->nfails,
                (unsigned long long)c->idle_ns, (unsigned long long)c->nnear, d->xp->name);
    }
    MPI_Barrier(comm);
    release_all();
    return 0;
}

int weft_dist_rank(void)
{
    return weft__dist.inited ? weft__dist.rank : -1;
}

int weft_dist_size(void)
{
    return weft__dist.inited ? weft__dist.size : 0;
}
