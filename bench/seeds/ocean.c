/* ocean.c: an Ocean-like grid solver (after seed 1's SPLASH-2 Ocean): red-black
 * Gauss-Seidel relaxation of a Poisson problem on an (N+2) x (N+2) grid, rows
 * split in bands among T threads, every iteration four phases separated by
 * barriers: red points, black points, the residual (partial sums added to the
 * total under a lock), the convergence bookkeeping by thread 0.
 *
 *   seeds_ocean [-n GRID_LIST] [-w WORKERS] [-k TOTAL_THREADS] [-r REPS] [-i IMPL]
 * Defaults: -n 258,514 (grid sides, borders included) -w 1,2 -k 2,4,8,16 -r 5;
 * 200 iterations at 258, 50 at 514 (about the same work).
 * RESULT bench=ocean_<side> param=T (total threads); *_ns per solve.
 * mltp uses a spin (ticket) lock for the residual.
 */
#include "bench.h"

#include <math.h>

#include "seeds.h"

struct ocean {
    int n; /* interior points per side */
    int nthreads, iters;
    double *u, *f; /* (n+2)^2; u written by band owners between barriers */
    double h2;
    double acc;  /* under lock: this iteration's residual */
    double last; /* written by thread 0 in phase 4 */
    struct seeds_lock lock;
    struct seeds_barrier bar;
};

static void sweep(struct ocean *o, int lo, int hi, int color)
{
    int w = o->n + 2;
    double *u = o->u;
    const double *f = o->f;
    for (int i = lo; i < hi; i++) {
        double *r = u + (size_t)i * w;
        const double *up = r - w, *dn = r + w, *fr = f + (size_t)i * w;
        for (int j = 1 + ((i + color) & 1); j <= o->n; j += 2)
            r[j] = 0.25 * (up[j] + dn[j] + r[j - 1] + r[j + 1] - o->h2 * fr[j]);
    }
}

static double residual(struct ocean *o, int lo, int hi)
{
    int w = o->n + 2;
    const double *u = o->u, *f = o->f;
    double s = 0;
    for (int i = lo; i < hi; i++) {
        const double *r = u + (size_t)i * w, *up = r - w, *dn = r + w, *fr = f + (size_t)i * w;
        for (int j = 1; j <= o->n; j++) {
            double d = up[j] + dn[j] + r[j - 1] + r[j + 1] - 4 * r[j] - o->h2 * fr[j];
            s += d * d;
        }
    }
    return s;
}

static void ocean_member(void *arg, int id)
{
    struct ocean *o = arg;
    int lo = 1 + o->n * id / o->nthreads, hi = 1 + o->n * (id + 1) / o->nthreads;
    for (int it = 0; it < o->iters; it++) {
        sweep(o, lo, hi, 0);
        seeds_barrier_wait(&o->bar);
        sweep(o, lo, hi, 1);
        seeds_barrier_wait(&o->bar);
        double r = residual(o, lo, hi);
        seeds_lock(&o->lock);
        o->acc += r;
        seeds_unlock(&o->lock);
        seeds_barrier_wait(&o->bar);
        if (id == 0) {
            o->last = sqrt(o->acc);
            o->acc = 0;
        }
        seeds_barrier_wait(&o->bar);
    }
}

static double reference = -1; /* the residual after the first solve, for later ones */

static double run_once(enum seeds_impl impl, int side, int nthreads, int iters, int check)
{
    int n = side - 2;
    size_t cells = (size_t)side * side;
    struct ocean o = { n,
                       nthreads,
                       iters,
                       calloc(cells, sizeof(double)),
                       malloc(cells * sizeof(double)),
                       1.0 / ((double)(n + 1) * (n + 1)),
                       0,
                       0,
                       { 0 },
                       { 0 } };
    if (!o.u || !o.f)
        bench_die("calloc", ENOMEM);
    for (int i = 0; i < side; i++)
        for (int j = 0; j < side; j++)
            o.f[(size_t)i * side + j] = sin(3.0 * i / side) * cos(5.0 * j / side);
    seeds_lock_init(&o.lock, impl, MLTP_LOCK_SPIN);
    seeds_barrier_init(&o.bar, impl, nthreads);
    uint64_t t0 = bench_now_ns();
    seeds_team_run(impl, nthreads, ocean_member, &o);
    uint64_t t1 = bench_now_ns();
    seeds_barrier_destroy(&o.bar);
    seeds_lock_destroy(&o.lock);
    /* Red-black ordering makes the result independent of the thread count
     * up to the order of the residual's additions. */
    if (check && reference < 0)
        reference = o.last;
    if (check && !(fabs(o.last - reference) <= 1e-9 * reference)) {
        fprintf(stderr, "ocean: residual %.12g, first run %.12g\n", o.last, reference);
        exit(1);
    }
    free(o.u);
    free(o.f);
    return (double)(t1 - t0);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 258,514 -w 1,2 -k 2,4,8,16 (total threads)\n");
    static const long k[] = { 2, 4, 8, 16 }, sizes[] = { 258, 514 };
    seeds_defaults(&o, k, 4, sizes, 2);
    double samples[BENCH_MAX_RUNS];
    for (int ni = 0; ni < o.n.len; ni++) {
        int side = (int)o.n.v[ni];
        int iters = (int)(200L * 258 * 258 / ((long)side * side));
        if (iters < 10)
            iters = 10;
        reference = -1;
        char bench[32];
        snprintf(bench, sizeof bench, "ocean_%d", side);
        for (seeds_iter it = SEEDS_ITER_INIT; seeds_next(&o, &it);) {
            enum seeds_impl impl = (enum seeds_impl)it.impl;
            for (int ki = 0; ki < o.threads.len; ki++) {
                int t = (int)o.threads.v[ki];
                run_once(impl, side, t, iters / 10 + 1, 0); /* warm-up */
                for (int r = 0; r < o.reps; r++)
                    samples[r] = run_once(impl, side, t, iters, 1);
                seeds_report(&o, bench, &it, t, samples, o.reps, "ns");
            }
        }
    }
    return 0;
}
