/* io_batch.c: seed 3's wrapped system calls, measured: 64 user threads each
 * write 4 KiB blocks with weft_pwrite to one file; prints the requests per
 * io_uring_enter crossing and the time per write, against the same writes
 * made with pwrite(2) by the same number of pthreads.
 *   bench_io_batch [-t THREADS] [-n WRITES_PER_THREAD] [-w WORKERS] [-r REPS] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "bench.h"

static int nthreads = 64, nwrites = 2000, fd;
static char block[4096];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *writer(void *arg)
{
    long id = (long)(intptr_t)arg;
    for (int i = 0; i < nwrites; i++) {
        off_t off = ((off_t)id * nwrites + i) * (off_t)sizeof block;
        if (weft_pwrite(fd, block, sizeof block, off) != (ssize_t)sizeof block)
            abort();
    }
    return NULL;
}

static void *pwriter(void *arg)
{
    long id = (long)(intptr_t)arg;
    for (int i = 0; i < nwrites; i++) {
        off_t off = ((off_t)id * nwrites + i) * (off_t)sizeof block;
        if (pwrite(fd, block, sizeof block, off) != (ssize_t)sizeof block)
            abort();
    }
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int workers = 1, reps = 5, c;
    while ((c = getopt(argc, argv, "t:n:w:r:")) != -1) {
        switch (c) {
        case 't': nthreads = atoi(optarg); break;
        case 'n': nwrites = atoi(optarg); break;
        case 'w': workers = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        default: return 2;
        }
    }
    memset(block, 'w', sizeof block);
    char path[] = "/tmp/weft-io-batch-XXXXXX";
    fd = mkstemp(path);
    unlink(path);
    double tw[64], tp[64], per_enter[64];
    if (reps > 64)
        reps = 64;
    for (int r = 0; r < reps; r++) {
        weft_config cfg;
        weft_config_default(&cfg);
        cfg.workers = workers;
        weft_init(&cfg);
        weft_thread **t = calloc((size_t)nthreads, sizeof *t);
        double t0 = now();
        for (int i = 0; i < nthreads; i++)
            weft_spawn(&t[i], writer, (void *)(intptr_t)i, NULL);
        for (int i = 0; i < nthreads; i++)
            weft_join(t[i], NULL);
        tw[r] = now() - t0;
        weft_stats st;
        weft_stats_get(&st);
        per_enter[r] = st.io_enters ? (double)st.io_calls / (double)st.io_enters : 0;
        weft_finalize();
        free(t);

        pthread_t *p = calloc((size_t)nthreads, sizeof *p);
        t0 = now();
        for (int i = 0; i < nthreads; i++)
            pthread_create(&p[i], NULL, pwriter, (void *)(intptr_t)i);
        for (int i = 0; i < nthreads; i++)
            pthread_join(p[i], NULL);
        tp[r] = now() - t0;
        free(p);
    }
    qsort(tw, (size_t)reps, sizeof tw[0], cmp);
    qsort(tp, (size_t)reps, sizeof tp[0], cmp);
    qsort(per_enter, (size_t)reps, sizeof per_enter[0], cmp);
    double ops = (double)nthreads * nwrites;
    printf("RESULT bench=io_batch impl=weft workers=%d param=%dx%d median_ns=%.1f min_ns=%.1f "
           "max_ns=%.1f runs=%d calls_per_enter=%.1f commit=%s\n",
           workers, nthreads, nwrites, tw[reps / 2] / ops * 1e9, tw[0] / ops * 1e9,
           tw[reps - 1] / ops * 1e9, reps, per_enter[reps / 2], BENCH_COMMIT);
    printf("RESULT bench=io_batch impl=pthread workers=%d param=%dx%d median_ns=%.1f min_ns=%.1f "
           "max_ns=%.1f runs=%d commit=%s\n",
           nthreads, nthreads, nwrites, tp[reps / 2] / ops * 1e9, tp[0] / ops * 1e9,
           tp[reps - 1] / ops * 1e9, reps, BENCH_COMMIT);
    printf("  %d threads x %d pwrites of 4 KiB: weft %.0f ns/write, %.1f calls per io_uring_enter; "
           "pthreads %.0f ns/write\n",
           nthreads, nwrites, tw[reps / 2] / ops * 1e9, per_enter[reps / 2],
           tp[reps / 2] / ops * 1e9);
    close(fd);
    return 0;
}
