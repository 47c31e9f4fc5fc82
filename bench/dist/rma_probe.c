/*
 * rma_probe.c -- feasibility probe for an MPI-3 RMA based "uni-address threads"
 * multi-node mode (Itoyori-style work stealing).
 *
 * What it does (every rank takes part; rank 0 is the measuring origin):
 *   0. MPI_Init_thread(requested level, default MPI_THREAD_MULTIPLE) and prints
 *      the granted level, the library version and the window memory model.
 *   1. Creates two windows of 1 MiB per rank, both opened with
 *      MPI_Win_lock_all(MPI_MODE_NOCHECK) (passive target, never closed until the end):
 *        W_alloc : MPI_Win_allocate (the MPI library chooses the address)
 *        W_uni   : MPI_Win_create over a region mmap'ed at the SAME virtual
 *                  address on every rank (MAP_FIXED_NOREPLACE, agreed with
 *                  bcast+allreduce) -- this is what a uni-address stack region needs.
 *   2. For each window, rank 0 measures latency to rank 1 (a remote rank) of
 *        (a) MPI_Fetch_and_op(MPI_SUM, int64) + MPI_Win_flush
 *        (b) MPI_Compare_and_swap(int64)       + MPI_Win_flush
 *        (c) MPI_Get 16 KiB                    + MPI_Win_flush
 *        (d) MPI_Put 16 KiB                    + MPI_Win_flush
 *        (e) an emulated Itoyori steal: get queue state, CAS trylock, FAA base,
 *            get top, get entry, get 16 KiB "stack", FAA unlock  (7 round trips)
 *      in two situations:
 *        [idle] the target sits in MPI_Barrier (it polls MPI => makes progress)
 *        [busy] the target spins on pure computation for BUSY_SEC seconds
 *               without calling MPI. If the RMA path needs the target's CPU
 *               (software / active-message RMA), ops stall until the target
 *               re-enters MPI: we report the worst op latency and how many ops
 *               completed during the busy window.
 *   3. Correctness under contention (all ranks):
 *        - every rank does N MPI_Fetch_and_op(+1) on rank 0's counter
 *        - CAS spin-lock mutual exclusion: every rank does N lock/get/put/unlock
 *          on a plain (non-atomic) counter of rank 0
 *        - mixing CPU atomics and MPI atomics on the same word: rank 0 does
 *          __atomic_fetch_add locally while the other ranks do MPI_Fetch_and_op
 *          (the THE-protocol deque relies on this kind of coherence)
 *
 * Build:  mpicc -O2 -o rma_probe rma_probe.c
 * Run:    mpiexec -n 2 ./rma_probe -b 2   (docs/distributed.md: what the
 *         "busy" rows must show for an MPI that is truly one-sided)
 * Options: -t single|funneled|serialized|multiple  (requested thread level)
 *          -n ITERS (default 2000)   -b BUSY_SEC (default 2.0)
 *          -w alloc|uni|both (which windows)
 *          -p POLL_US: in the busy phase the target calls MPI_Iprobe every
 *             POLL_US microseconds (emulates a runtime polling MPI at
 *             fork/join points); reported as mode "poll"
 *          -f: when polling, also call MPI_Win_flush_all on the window
 *             (drives Open MPI osc/ucx's own UCX worker) 
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WIN_SIZE  (1u << 20)  /* 1 MiB per rank */
#define XFER_SIZE (16u << 10) /* 16 KiB "stack frame" */

/* window layout (offsets in bytes) */
#define OFF_COUNTER 0            /* int64: FAO target                        */
#define OFF_CASWORD 64           /* int64: CAS target                        */
#define OFF_LOCK    128          /* int64: deque lock (0 free, 1 taken)      */
#define OFF_QSTATE  192          /* int32 top, int32 base (Itoyori layout)   */
#define OFF_PLAIN   256          /* int64: non-atomic counter (lock test)    */
#define OFF_MIXED   320          /* int64: mixed CPU/MPI atomic counter      */
#define OFF_ENTRIES 4096         /* deque entries {uint64 frame_base, size}  */
#define OFF_STACK   (512u << 10) /* fake stack region used by (c)(d)(e) */

typedef struct {
    uint64_t frame_base, frame_size;
} wsq_entry_t;

static int rank, nranks;
static int iters = 2000;
static double busy_sec = 2.0;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *win, const char *mode, const char *op, double *v, int n)
{
    if (n == 0) {
        printf("  %-6s %-5s %-22s  no samples\n", win, mode, op);
        return;
    }
    double *s = malloc(sizeof(double) * n);
    memcpy(s, v, sizeof(double) * n);
    qsort(s, n, sizeof(double), cmpd);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    printf("  %-6s %-5s %-22s n=%6d  min=%9.2f  med=%9.2f  mean=%11.2f  p99=%11.2f  max=%12.2f "
           "us\n",
           win, mode, op, n, s[0] * 1e6, s[n / 2] * 1e6, sum / n * 1e6, s[(int)(n * 0.99)] * 1e6,
           s[n - 1] * 1e6);
    fflush(stdout);
    free(s);
}

/* pure computation, no MPI calls */
static volatile double sink;
static double poll_us = 0; /* >0: call MPI_Iprobe every poll_us while "busy" */
static int poll_flush = 0; /* -f: additionally MPI_Win_flush_all(poll_win) when polling */
static MPI_Win poll_win = MPI_WIN_NULL;
static void busy_spin(double sec)
{
    double t0 = now(), x = 1.0, last_poll = t0;
    while (now() - t0 < sec) {
        for (int i = 0; i < 100; i++)
            x = x * 1.0000001 + 1e-9;
        if (poll_us > 0) {
            double t = now();
            if ((t - last_poll) * 1e6 >= poll_us) {
                /* what a runtime can do at fork/join points: poke the progress engine */
                int f;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
                /* Open MPI osc/ucx progresses its own UCX worker only inside window calls */
                if (poll_flush && poll_win != MPI_WIN_NULL)
                    MPI_Win_flush_all(poll_win);
                last_poll = t;
            }
        }
    }
    sink = x;
}

/* ------------------------------------------------------------------ */
/* single operations (each completes with a flush, like Itoyori's     */
/* mpi_*_value helpers in include/ityr/common/mpi_rma.hpp)            */
/* ------------------------------------------------------------------ */
static int64_t faa64(MPI_Win w, int tgt, MPI_Aint off, int64_t v)
{
    int64_t r;
    MPI_Fetch_and_op(&v, &r, MPI_INT64_T, tgt, off, MPI_SUM, w);
    MPI_Win_flush(tgt, w);
    return r;
}
static int32_t faa32(MPI_Win w, int tgt, MPI_Aint off, int32_t v)
{
    int32_t r;
    MPI_Fetch_and_op(&v, &r, MPI_INT32_T, tgt, off, MPI_SUM, w);
    MPI_Win_flush(tgt, w);
    return r;
}
static int64_t cas64(MPI_Win w, int tgt, MPI_Aint off, int64_t newv, int64_t cmp)
{
    int64_t r;
    MPI_Compare_and_swap(&newv, &cmp, &r, MPI_INT64_T, tgt, off, w);
    MPI_Win_flush(tgt, w);
    return r;
}
static void get_bytes(MPI_Win w, int tgt, MPI_Aint off, void *buf, int n)
{
    MPI_Get(buf, n, MPI_BYTE, tgt, off, n, MPI_BYTE, w);
    MPI_Win_flush(tgt, w);
}
static void put_bytes(MPI_Win w, int tgt, MPI_Aint off, const void *buf, int n)
{
    MPI_Put(buf, n, MPI_BYTE, tgt, off, n, MPI_BYTE, w);
    MPI_Win_flush(tgt, w);
}

/* Emulated Itoyori steal (scheduler_randws::steal + wsqueue::steal_nolock):
 *   1. wsq_.empty(target): MPI_Get of {top,base}
 *   2. global_lock::trylock: MPI_Compare_and_swap(1, 0) on lock word
 *   3. MPI_Fetch_and_op(+1) on base
 *   4. MPI_Get top
 *   5. MPI_Get entry[b]
 *   6. callstack::direct_copy_from: MPI_Get of frame (16 KiB here)
 *   7. global_lock::unlock: MPI_Fetch_and_op(-1) on lock
 * To keep the victim's deque non-empty across iterations we undo step 3
 * (FAA -1 on base) before unlocking, like wsqueue::abort_steal. Returns 1 on
 * "success" (frame copied). */
static int emulated_steal(MPI_Win w, int tgt, char *stackbuf)
{
    int32_t qs[2];
    get_bytes(w, tgt, OFF_QSTATE, qs, sizeof(qs));
    if (qs[0] <= qs[1])
        return 0; /* empty */
    if (cas64(w, tgt, OFF_LOCK, 1, 0) != 0)
        return 0; /* trylock failed */
    int32_t b = faa32(w, tgt, OFF_QSTATE + 4, 1);
    int32_t t;
    get_bytes(w, tgt, OFF_QSTATE, &t, sizeof(t));
    int ok = 0;
    if (b < t) {
        wsq_entry_t e;
        get_bytes(w, tgt, OFF_ENTRIES + (MPI_Aint)b * sizeof(e), &e, sizeof(e));
        get_bytes(w, tgt, (MPI_Aint)e.frame_base, stackbuf, (int)e.frame_size);
        ok = 1;
    }
    faa32(w, tgt, OFF_QSTATE + 4, -1); /* undo (emulation only) */
    faa64(w, tgt, OFF_LOCK, -1);       /* unlock */
    return ok;
}

enum { OP_FAO, OP_CAS, OP_GET, OP_PUT, OP_STEAL, N_OPS };
static const char *op_names[N_OPS] = { "FetchAndOp+flush", "CompareAndSwap+flush", "Get16KiB+flush",
                                       "Put16KiB+flush", "steal(7 RTT)" };

static int64_t cas_cur = 0; /* only rank 0 CASes the target's CAS word */

static void do_op(int op, MPI_Win w, int tgt, char *buf)
{
    switch (op) {
    case OP_FAO: faa64(w, tgt, OFF_COUNTER, 1); break;
    case OP_CAS: {
        int64_t r = cas64(w, tgt, OFF_CASWORD, cas_cur + 1, cas_cur);
        if (r != cas_cur) {
            fprintf(stderr, "CAS mismatch %ld vs %ld\n", (long)r, (long)cas_cur);
        }
        cas_cur++;
    } break;
    case OP_GET: get_bytes(w, tgt, OFF_STACK, buf, XFER_SIZE); break;
    case OP_PUT: put_bytes(w, tgt, OFF_STACK + XFER_SIZE, buf, XFER_SIZE); break;
    case OP_STEAL: emulated_steal(w, tgt, buf); break;
    }
}

static void bench_window(const char *wname, MPI_Win w, char *base)
{
    const int tgt = 1;
    double *lat = malloc(sizeof(double) * (iters + 1000000));
    char *buf = malloc(XFER_SIZE);
    memset(buf, rank, XFER_SIZE);

    poll_win = w;
    /* victim deque set-up on every rank: one entry pointing at a 16 KiB frame */
    memset(base, 0, OFF_ENTRIES);
    cas_cur = 0;
    int32_t *qs = (int32_t *)(base + OFF_QSTATE);
    wsq_entry_t *ent = (wsq_entry_t *)(base + OFF_ENTRIES);
    qs[1] = 10;                     /* base */
    ent[10].frame_base = OFF_STACK; /* (in the real scheme: an absolute uni-address) */
    ent[10].frame_size = XFER_SIZE;
    qs[0] = 11; /* top  */
    MPI_Win_sync(w);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---------- [idle] target waits inside MPI_Barrier ---------- */
    for (int op = 0; op < N_OPS; op++) {
        if (rank == 0) {
            int n = (op == OP_STEAL) ? iters / 4 : iters;
            for (int i = 0; i < 50; i++)
                do_op(op, w, tgt, buf); /* warm-up */
            for (int i = 0; i < n; i++) {
                double t0 = now();
                do_op(op, w, tgt, buf);
                lat[i] = now() - t0;
            }
            report(wname, "idle", op_names[op], lat, n);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* ---------- [busy] target computes for busy_sec without MPI (or with
     MPI_Iprobe every poll_us if -p was given: mode name "poll") ---------- */
    const char *bmode = poll_us > 0 ? "poll" : "busy";
    for (int op = 0; op < N_OPS; op++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            /* let the others enter their compute loop */
            double t_start = now();
            usleep(20000);
            int n = 0;
            double worst_first = 0;
            /* issue ops until (busy_sec - 0.3 s) has elapsed so that every op is
         issued while the target is guaranteed to be busy */
            while (now() - t_start < busy_sec - 0.3 && n < iters + 999999) {
                double t0 = now();
                do_op(op, w, tgt, buf);
                lat[n] = now() - t0;
                if (n == 0)
                    worst_first = lat[0];
                n++;
            }
            double t_end = now();
            printf("  %-6s %-5s %-22s ops completed in busy window: %d (window %.2fs, first op "
                   "%.1f us, loop ended at %.2fs)\n",
                   wname, bmode, op_names[op], n, busy_sec, worst_first * 1e6, t_end - t_start);
            report(wname, bmode, op_names[op], lat, n);
        } else {
            busy_spin(busy_sec);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(lat);
    free(buf);
}

static void correctness(const char *wname, MPI_Win w, char *base)
{
    const int N = 500;
    memset(base, 0, OFF_ENTRIES);
    MPI_Win_sync(w);
    MPI_Barrier(MPI_COMM_WORLD);

    /* (1) concurrent FAO from all ranks */
    for (int i = 0; i < N; i++)
        faa64(w, 0, OFF_COUNTER, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t c;
    {
        int64_t dummy = 0;
        MPI_Fetch_and_op(&dummy, &c, MPI_INT64_T, 0, OFF_COUNTER, MPI_NO_OP, w);
        MPI_Win_flush(0, w);
    }
    if (rank == 0)
        printf("  %-6s check FAO from %d ranks x %d: got %ld expect %ld -> %s\n", wname, nranks, N,
               (long)c, (long)N * nranks, c == (int64_t)N * nranks ? "OK" : "FAIL");

    /* (2) CAS spin lock protecting a non-atomic get/put counter on rank 0 */
    long spins = 0;
    for (int i = 0; i < N; i++) {
        while (cas64(w, 0, OFF_LOCK, 1, 0) != 0)
            spins++;
        int64_t v;
        get_bytes(w, 0, OFF_PLAIN, &v, 8);
        v++;
        put_bytes(w, 0, OFF_PLAIN, &v, 8);
        faa64(w, 0, OFF_LOCK, -1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long tot_spins = 0;
    MPI_Reduce(&spins, &tot_spins, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_sync(w);
        int64_t v = *(volatile int64_t *)(base + OFF_PLAIN);
        printf("  %-6s check CAS-lock get/put counter %d ranks x %d: got %ld expect %ld -> %s "
               "(failed trylocks %ld)\n",
               wname, nranks, N, (long)v, (long)N * nranks,
               v == (int64_t)N * nranks ? "OK" : "FAIL", tot_spins);
    }

    /* (3) rank 0 uses CPU atomics on its own window word, others MPI atomics */
    const int M = 20000;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int64_t *p = (int64_t *)(base + OFF_MIXED);
        for (int i = 0; i < M; i++) {
            __atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST);
            if ((i & 63) == 0) {
                int f;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
            }
        }
    } else {
        for (int i = 0; i < M / 10; i++)
            faa64(w, 0, OFF_MIXED, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_sync(w);
        int64_t v = __atomic_load_n((int64_t *)(base + OFF_MIXED), __ATOMIC_SEQ_CST);
        int64_t expect = M + (int64_t)(nranks - 1) * (M / 10);
        printf("  %-6s check mixed CPU-atomic(rank0) + MPI-FAO(others): got %ld expect %ld -> %s\n",
               wname, (long)v, (long)expect,
               v == expect ? "OK" : "LOST UPDATES (CPU atomics not coherent with MPI atomics)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* reserve the same virtual address range on all ranks (simplified
   ityr::common::reserve_same_vm_coll: leader picks, others MAP_FIXED_NOREPLACE) */
static void *reserve_same_addr(size_t size)
{
    for (int trial = 0; trial < 50; trial++) {
        uintptr_t addr = 0;
        void *p = NULL;
        if (rank == 0) {
            /* ask for a hint far from the usual mappings, vary it per trial */
            void *hint =
                (void *)(uintptr_t)(0x200000000000ull + (uint64_t)trial * 0x10000000000ull);
            p = mmap(hint, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                p = NULL;
            addr = (uintptr_t)p;
        }
        MPI_Bcast(&addr, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        int ok = 1;
        if (rank != 0) {
            p = mmap((void *)addr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED || p != (void *)addr) {
                ok = 0;
                if (p != MAP_FAILED)
                    munmap(p, size);
                p = NULL;
            }
        }
        int all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (all_ok)
            return p;
        if (p)
            munmap(p, size);
    }
    return NULL;
}

static void print_win_info(const char *wname, MPI_Win w)
{
    int *model, flag;
    MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag);
    MPI_Info info;
    MPI_Win_get_info(w, &info);
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    if (rank == 0) {
        printf("  %-6s memory model: %s; info:", wname,
               flag ? (*model == MPI_WIN_UNIFIED ? "MPI_WIN_UNIFIED" : "MPI_WIN_SEPARATE") : "?");
        for (int i = 0; i < nkeys; i++) {
            char key[MPI_MAX_INFO_KEY + 1], val[256];
            int vflag;
            MPI_Info_get_nthkey(info, i, key);
            MPI_Info_get(info, key, sizeof(val) - 1, val, &vflag);
            printf(" %s=%s", key, vflag ? val : "?");
        }
        printf("\n");
    }
    MPI_Info_free(&info);
}

static void on_alarm(int sig)
{
    (void)sig;
    const char msg[] = "rma_probe: watchdog fired (hang?)\n";
    write(2, msg, sizeof(msg) - 1);
    _exit(3);
}

int main(int argc, char **argv)
{
    int req = MPI_THREAD_MULTIPLE;
    const char *which = "both";
    int opt;
    while ((opt = getopt(argc, argv, "t:n:b:w:p:f")) != -1) {
        if (opt == 't') {
            if (!strcmp(optarg, "single"))
                req = MPI_THREAD_SINGLE;
            else if (!strcmp(optarg, "funneled"))
                req = MPI_THREAD_FUNNELED;
            else if (!strcmp(optarg, "serialized"))
                req = MPI_THREAD_SERIALIZED;
            else
                req = MPI_THREAD_MULTIPLE;
        } else if (opt == 'n')
            iters = atoi(optarg);
        else if (opt == 'b')
            busy_sec = atof(optarg);
        else if (opt == 'w')
            which = optarg; /* alloc | uni | both */
        else if (opt == 'p')
            poll_us = atof(optarg);
        else if (opt == 'f')
            poll_flush = 1;
    }
    signal(SIGALRM, on_alarm);
    alarm(240);

    int prov;
    double t_init = now();
    MPI_Init_thread(&argc, &argv, req, &prov);
    t_init = now() - t_init;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "need >= 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    static const char *lv[] = { "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                "MPI_THREAD_MULTIPLE" };
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(ver, &len);
        char *nl = strchr(ver, '\n');
        if (nl)
            *nl = 0;
        printf("library: %s\n", ver);
        printf("ranks: %d, iters: %d, busy window: %.1fs, poll: %.0f us%s, MPI_Init_thread %.2fs\n",
               nranks, iters, busy_sec, poll_us, poll_flush ? " +Win_flush_all" : "", t_init);
        printf("thread level requested: %s, provided: %s\n", lv[req], lv[prov]);
    }

    /* ---------------- W_alloc: MPI_Win_allocate ---------------- */
    if (!strcmp(which, "both") || !strcmp(which, "alloc")) {
        char *base;
        MPI_Win w;
        double t0 = now();
        MPI_Win_allocate(WIN_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, w);
        double t1 = now() - t0;
        uintptr_t a = (uintptr_t)base, amin, amax;
        MPI_Allreduce(&a, &amin, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&a, &amax, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("\n[W_alloc] MPI_Win_allocate 1 MiB + lock_all: %.3f ms; base addr same on all "
                   "ranks: %s (rank0 %p)\n",
                   t1 * 1e3, amin == amax ? "yes" : "no", base);
        print_win_info("alloc", w);
        bench_window("alloc", w, base);
        correctness("alloc", w, base);
        MPI_Win_unlock_all(w);
        MPI_Win_free(&w);
    }

    /* ---------------- W_uni: MPI_Win_create at a common address ---------------- */
    if (!strcmp(which, "both") || !strcmp(which, "uni")) {
        char *base = reserve_same_addr(WIN_SIZE);
        if (!base) {
            if (rank == 0)
                printf("\n[W_uni] could not reserve a common virtual address\n");
        } else {
            memset(base, 0, WIN_SIZE);
            MPI_Win w;
            double t0 = now();
            MPI_Win_create(base, WIN_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, w);
            double t1 = now() - t0;
            if (rank == 0)
                printf("\n[W_uni] mmap at common address %p + MPI_Win_create 1 MiB + lock_all: "
                       "%.3f ms\n",
                       base, t1 * 1e3);
            print_win_info("uni", w);
            bench_window("uni", w, base);
            correctness("uni", w, base);
            MPI_Win_unlock_all(w);
            MPI_Win_free(&w);
            munmap(base, WIN_SIZE);
        }
    }

    MPI_Finalize();
    if (rank == 0)
        printf("done\n");
    return 0;
}
