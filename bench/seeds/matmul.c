/* matmul.c: seed 1's matrix multiplication: C = A x B for N x N doubles,
 * computed as BS x BS sub-matrices of C (each over the full inner
 * dimension), handed out dynamically (self-scheduling: the next block index
 * under one lock) or fixed (thread `id` takes blocks id, id + T, ...).
 *
 *   seeds_matmul [-n N_LIST] [-w WORKERS] [-k THREADS_PER_WORKER] [-r REPS] [-i IMPL]
 *                [-s dynamic|fixed|both]
 * Defaults: -n 512,1024 -w 1,2 -k 1,2,4,8 -r 5 -s both.
 * RESULT bench=matmul_<scheme>_<N> param=T (total threads); *_ns per
 * product. mltp uses a spin (ticket) lock.
 */
#include "bench.h"

#include "seeds.h"

#define BS 64

struct mm {
    int n, nb, nthreads, dynamic;
    const double *a, *b;
    double *c;
    long next; /* under lock: the next block (dynamic) */
    struct seeds_lock lock;
};

static void block(struct mm *m, long blk)
{
    int n = m->n;
    int bi = (int)(blk / m->nb), bj = (int)(blk % m->nb);
    for (int i = bi * BS; i < (bi + 1) * BS; i++) {
        double *restrict c = m->c + (size_t)i * n + bj * BS;
        for (int j = 0; j < BS; j++)
            c[j] = 0;
        const double *arow = m->a + (size_t)i * n;
        for (int k = 0; k < n; k++) {
            double a = arow[k];
            const double *restrict b = m->b + (size_t)k * n + bj * BS;
            for (int j = 0; j < BS; j++)
                c[j] += a * b[j];
        }
    }
}

static void mm_member(void *arg, int id)
{
    struct mm *m = arg;
    long total = (long)m->nb * m->nb;
    if (m->dynamic) {
        for (;;) {
            seeds_lock(&m->lock);
            long blk = m->next++;
            seeds_unlock(&m->lock);
            if (blk >= total)
                return;
            block(m, blk);
        }
    }
    for (long blk = id; blk < total; blk += m->nthreads)
        block(m, blk);
}

static double *amat, *bmat, *cmat;

static void fill(int n)
{
    size_t bytes = (size_t)n * n * sizeof(double);
    amat = aligned_alloc(64, bytes);
    bmat = aligned_alloc(64, bytes);
    cmat = aligned_alloc(64, bytes);
    if (!amat || !bmat || !cmat)
        bench_die("aligned_alloc", ENOMEM);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            amat[(size_t)i * n + j] = (double)((i + 2 * j) % 7 - 3);
            bmat[(size_t)i * n + j] = (double)((3 * i + j) % 5 - 2);
        }
}

/* Small integers: every sum is exact, so a few entries checked against a
 * direct dot product prove the whole computation ran. */
static void verify(int n)
{
    for (int s = 0; s < 64; s++) {
        int i = (s * 7919) % n, j = (s * 104729 + 13) % n;
        double want = 0;
        for (int k = 0; k < n; k++)
            want += amat[(size_t)i * n + k] * bmat[(size_t)k * n + j];
        if (cmat[(size_t)i * n + j] != want) {
            fprintf(stderr, "matmul: C[%d][%d] = %g, want %g\n", i, j, cmat[(size_t)i * n + j],
                    want);
            exit(1);
        }
    }
}

static double run_once(enum seeds_impl impl, int n, int nthreads, int dynamic)
{
    struct mm m = { n, n / BS, nthreads, dynamic, amat, bmat, cmat, 0, { 0 } };
    seeds_lock_init(&m.lock, impl, MLTP_LOCK_SPIN);
    memset(cmat, 0xff, (size_t)n * n * sizeof(double));
    uint64_t t0 = bench_now_ns();
    seeds_team_run(impl, nthreads, mm_member, &m);
    uint64_t t1 = bench_now_ns();
    seeds_lock_destroy(&m.lock);
    verify(n);
    return (double)(t1 - t0);
}

int main(int argc, char **argv)
{
    const char *scheme = seeds_take_opt(&argc, argv, "-s", "both");
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  [-s dynamic|fixed|both]; default -n 512,1024 -w 1,2 -k 1,2,4,8\n");
    static const long k[] = { 1, 2, 4, 8 }, sizes[] = { 512, 1024 };
    seeds_defaults(&o, k, 4, sizes, 2);
    double samples[BENCH_MAX_RUNS];
    for (int ni = 0; ni < o.n.len; ni++) {
        int n = (int)o.n.v[ni];
        if (n < BS || n % BS) {
            fprintf(stderr, "matmul: N must be a multiple of %d\n", BS);
            return 2;
        }
        int reps = o.reps;
        fill(n);
        for (int d = 1; d >= 0; d--) {
            if ((d && !strcmp(scheme, "fixed")) || (!d && !strcmp(scheme, "dynamic")))
                continue;
            char bench[64];
            snprintf(bench, sizeof bench, "matmul_%s_%d", d ? "dynamic" : "fixed", n);
            for (seeds_iter it = SEEDS_ITER_INIT; seeds_next(&o, &it);) {
                for (int ki = 0; ki < o.threads.len; ki++) {
                    int t = (int)(o.threads.v[ki] * it.w);
                    for (int r = 0; r < reps; r++)
                        samples[r] = run_once((enum seeds_impl)it.impl, n, t, d);
                    seeds_report(&o, bench, &it, t, samples, reps, "ns");
                }
            }
        }
        free(amat);
        free(bmat);
        free(cmat);
    }
    return 0;
}
