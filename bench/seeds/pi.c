/* pi.c: seed 1's Pi benchmark: pi by the rectangle rule over STEPS
 * rectangles, split evenly among T threads; each adds its partial sum to the
 * total under a lock once (no other synchronisation, no forced switches).
 *
 *   seeds_pi [-n STEPS] [-w WORKERS] [-k THREADS_PER_WORKER] [-r REPS] [-i IMPL]
 * Defaults: -n 20000000 -w 1,2 -k 1,2,3,4,5,6,7,8 -r 5.
 * RESULT bench=pi param=T (total threads = k * workers); *_ns per whole
 * computation (threads created and joined inside the timed region).
 * mltp uses a spin (ticket) lock, the seed's low-contention lock.
 */
#include "bench.h"

#include <math.h>

#include "seeds.h"

struct pi {
    long steps;
    int nthreads;
    double h;
    double sum; /* under lock */
    struct seeds_lock lock;
};

static void pi_member(void *arg, int id)
{
    struct pi *p = arg;
    long lo = p->steps * id / p->nthreads, hi = p->steps * (id + 1) / p->nthreads;
    double h = p->h, s = 0;
    for (long i = lo; i < hi; i++) {
        double x = ((double)i + 0.5) * h;
        s += 4.0 / (1.0 + x * x);
    }
    seeds_lock(&p->lock);
    p->sum += s * h;
    seeds_unlock(&p->lock);
}

static double run_once(enum seeds_impl impl, long steps, int nthreads)
{
    struct pi p = { steps, nthreads, 1.0 / (double)steps, 0, { 0 } };
    seeds_lock_init(&p.lock, impl, MLTP_LOCK_SPIN);
    uint64_t t0 = bench_now_ns();
    seeds_team_run(impl, nthreads, pi_member, &p);
    uint64_t t1 = bench_now_ns();
    seeds_lock_destroy(&p.lock);
    if (fabs(p.sum - M_PI) > 1e-6) {
        fprintf(stderr, "pi: %s with %d threads computed %.9f\n", seeds_impl_name[impl], nthreads,
                p.sum);
        exit(1);
    }
    return (double)(t1 - t0);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 20000000 -w 1,2 -k 1..8\n");
    static const long k[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    seeds_defaults(&o, k, 8, NULL, 0);
    long steps = bench_size(&o, 20000000);
    double samples[BENCH_MAX_RUNS];
    for (seeds_iter it = SEEDS_ITER_INIT; seeds_next(&o, &it);) {
        enum seeds_impl impl = (enum seeds_impl)it.impl;
        for (int ki = 0; ki < o.threads.len; ki++) {
            int t = (int)(o.threads.v[ki] * it.w);
            run_once(impl, steps / 10, t); /* warm-up */
            for (int r = 0; r < o.reps; r++)
                samples[r] = run_once(impl, steps, t);
            seeds_report(&o, "pi", &it, t, samples, o.reps, "ns");
        }
    }
    return 0;
}
