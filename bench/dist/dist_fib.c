/* dist_fib.c: weft_dist benchmarks (make bench-dist, bench/scripts/dist.sh).
 *
 *   dist_fib fib N REPS    fib(N), a weft_spawn per call, REPS runs in a row:
 *                          one line "dist_fib ranks=R n=N ms=..." per run (rank 0)
 *   dist_fib serial N REPS the plain recursive fib(N) (no weft), same lines
 *   dist_fib steal REPS    a steal from a rank that computes without calling
 *                          weft: the root spawns a child that spins for
 *                          SPIN_MS; the root's continuation, stolen by another
 *                          rank, reports how long after the spawn it resumed
 *   dist_fib steal-fib REPS the same, but the child computes fib(STEAL_FIB),
 *                          spawning as it goes (a victim that enters weft,
 *                          so the rma transport's polls can serve the thief)
 *   dist_fib mem K...      per rank: virtual and resident memory after a run
 *                          with K threads alive at once
 * Run under mpiexec; WEFT_DIST_STATS=1 adds each rank's steal counts and
 * mean steal time at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft_dist.h>

#define SPIN_MS   50 /* the victim's computation in `steal` */
#define STEAL_FIB 27 /* the victim's computation in `steal-fib` */
#define MAX_LIVE  60000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *fib(void *arg)
{
    intptr_t n = (intptr_t)arg;
    if (n < 2)
        return (void *)n;
    weft_thread *t;
    if (weft_spawn(&t, fib, (void *)(n - 1), NULL) != 0)
        abort();
    intptr_t b = (intptr_t)fib((void *)(n - 2));
    void *a;
    if (weft_join(t, &a) != 0)
        abort();
    return (void *)((intptr_t)a + b);
}

static __attribute__((noinline)) long fib_serial(long n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static void *spin(void *arg)
{
    (void)arg;
    uint64_t end = now_ns() + (uint64_t)SPIN_MS * 1000000u;
    volatile uint64_t x = 0;
    while (now_ns() < end)
        x++;
    return NULL;
}

static void *fib(void *arg);

static void *busy_fib(void *arg)
{
    (void)arg;
    return fib((void *)(intptr_t)STEAL_FIB);
}

/* The continuation after the spawn runs wherever it was stolen to; t0 is on
 * the stack that moved with it. arg: the victim's computation. */
static void *steal_root(void *arg)
{
    weft_fn victim = arg;
    /* first let every rank reach its scheduler loop (they leave the run's
     * opening collective at different times) */
    spin(NULL);
    int home = weft_dist_rank();
    uint64_t t0 = now_ns();
    weft_thread *t;
    if (weft_spawn(&t, victim, NULL, NULL) != 0)
        abort();
    uint64_t waited = now_ns() - t0;
    int moved = weft_dist_rank() != home;
    weft_join(t, NULL);
    return (void *)(intptr_t)(moved ? (intptr_t)waited : -1);
}

static void *hold(void *arg)
{
    (void)arg;
    return NULL;
}

/* K threads alive at once: each spawns a child and, having been stolen or
 * not, joins it; the root joins them all at the end. */
static void *live_root(void *arg)
{
    intptr_t k = (intptr_t)arg;
    static weft_thread *t[MAX_LIVE]; /* static data: the same address on every rank */
    for (intptr_t i = 0; i < k; i++)
        if (weft_spawn(&t[i], hold, NULL, NULL) != 0)
            return (void *)(intptr_t)-1;
    for (intptr_t i = 0; i < k; i++)
        weft_join(t[i], NULL);
    return NULL;
}

static void memory(long *vm_kb, long *rss_kb)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    *vm_kb = *rss_kb = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmSize:", 7))
            *vm_kb = atol(line + 7);
        if (!strncmp(line, "VmRSS:", 6))
            *rss_kb = atol(line + 6);
    }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    if (weft_dist_init(&argc, &argv) != 0)
        return 1;
    int rank = weft_dist_rank(), size = weft_dist_size();
    const char *mode = argc > 1 ? argv[1] : "fib";
    if (!strcmp(mode, "fib") || !strcmp(mode, "serial")) {
        long n = argc > 2 ? atol(argv[2]) : 35, reps = argc > 3 ? atol(argv[3]) : 1;
        for (long r = 0; r < reps; r++) {
            uint64_t t0 = now_ns();
            void *v = NULL;
            if (!strcmp(mode, "fib"))
                weft_dist_run(fib, (void *)(intptr_t)n, &v);
            else
                v = (void *)(intptr_t)fib_serial(n);
            double ms = (double)(now_ns() - t0) / 1e6;
            if (rank == 0)
                printf("dist_%s ranks=%d n=%ld result=%ld ms=%.2f\n", mode, size, n,
                       (long)(intptr_t)v, ms);
        }
    } else if (!strcmp(mode, "steal") || !strcmp(mode, "steal-fib")) {
        long reps = argc > 2 ? atol(argv[2]) : 5;
        int spins = !strcmp(mode, "steal");
        for (long r = 0; r < reps; r++) {
            void *v = NULL;
            weft_dist_run(steal_root, spins ? (void *)spin : (void *)busy_fib, &v);
            if (rank == 0)
                printf("dist_%s ranks=%d victim=%s resumed_after_us=%.1f\n", mode, size,
                       spins ? "spin_50ms" : "fib_27",
                       (intptr_t)v < 0 ? -1.0 : (double)(intptr_t)v / 1e3);
        }
    } else if (!strcmp(mode, "mem")) {
        for (int i = 2; i < argc; i++) {
            long k = atol(argv[i]), vm, rss;
            if (k > MAX_LIVE)
                k = MAX_LIVE;
            void *v = NULL;
            weft_dist_run(live_root, (void *)(intptr_t)k, &v);
            memory(&vm, &rss);
            printf("dist_mem ranks=%d rank=%d live_threads=%ld vm_kb=%ld rss_kb=%ld%s\n", size,
                   rank, k, vm, rss, v ? " (spawn failed)" : "");
        }
    }
    weft_dist_finalize();
    return 0;
}
