/* dump.c: time of one weft_dump (to /dev/null) with N user threads parked
 * on a semaphore, each with a backtrace to unwind and name.
 *
 *   bench_dump [-n N] [-r REPS] [-w LIST]     (default N = 1000)
 *
 * Bars (issue 13): 1,000 threads < 50 ms, 200,000 < 2 s.
 */
#include "bench.h"
#include "bench_weft.h"

#include <fcntl.h>
#include <unistd.h>

#include "weft.h"

static weft_sem sem;

static void *parked(void *arg)
{
    if (weft_sem_wait(&sem) != 0)
        bench_die("weft_sem_wait", 0);
    return arg;
}

static void run(const bench_opts *o, long n, long workers)
{
    double samples[BENCH_MAX_RUNS];
    bench_weft_init(workers, WEFT_WORK_FIRST);
    weft_sem_init(&sem, 0);
    weft_thread **t = malloc((size_t)n * sizeof *t);
    if (!t)
        bench_die("malloc", 0);
    for (long i = 0; i < n; i++) {
        int rc = weft_spawn(&t[i], parked, NULL, NULL);
        if (rc != 0)
            bench_die("weft_spawn", rc);
    }
    int fd = open("/dev/null", O_WRONLY);
    for (int r = 0; r < o->reps; r++) {
        uint64_t t0 = bench_now_ns();
        int rc = weft_dump(fd);
        if (rc != 0)
            bench_die("weft_dump", rc);
        samples[r] = (double)(bench_now_ns() - t0);
    }
    close(fd);
    for (long i = 0; i < n; i++)
        weft_sem_post(&sem);
    for (long i = 0; i < n; i++)
        weft_join(t[i], NULL);
    free(t);
    weft_sem_destroy(&sem);
    int rc = weft_finalize();
    if (rc != 0)
        bench_die("weft_finalize", rc);
    char param[32];
    snprintf(param, sizeof param, "n=%ld", n);
    bench_report(o, "dump", "weft", workers, param, samples, o->reps, "ns");
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "");
    long n = bench_size(&o, 1000);
    for (int i = 0; i < o.workers.len; i++)
        run(&o, n, o.workers.v[i]);
    return 0;
}
