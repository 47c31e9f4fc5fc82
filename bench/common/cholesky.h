/* cholesky.h: blocked Cholesky factorisation (lower, right-looking) shared
 * by the weft-task and OpenMP-depend programs: tiles, the four kernels on
 * single-threaded OpenBLAS/LAPACKE, the operation list with its
 * dependencies, and the check.
 *
 * The matrix (N x N, SPD: a random symmetric one plus N on the diagonal)
 * is kept as nt x nt tiles of b x b doubles, each column-major and
 * contiguous; only the lower triangle is used. For k = 0 .. nt-1:
 *   potrf(k)      L(k,k) = chol(A(k,k))
 *   trsm(i,k)     A(i,k) = A(i,k) L(k,k)^-T               i > k
 *   syrk(i,k)     A(i,i) -= A(i,k) A(i,k)^T               i > k
 *   gemm(i,j,k)   A(i,j) -= A(i,k) A(j,k)^T               i > j > k
 * Each operation writes one tile and reads others; it depends on the last
 * writer of each tile it touches (no tile is written after it is read by a
 * later step, so no anti-dependence arises). N^3/3 flops.
 */
#ifndef WEFT_BENCH_CHOLESKY_H
#define WEFT_BENCH_CHOLESKY_H

#include "bench.h" /* first: it asks for _GNU_SOURCE */

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void openblas_set_num_threads(int n); /* OpenBLAS: its own threads off (one per task) */

enum { CH_POTRF, CH_TRSM, CH_SYRK, CH_GEMM };

struct ch_op {
    int kind, i, j, k;
    int npred;    /* distinct operations it waits for */
    int nsucc;    /* operations waiting for it */
    int *succ;    /* their indices (into ch_ops) */
    void *handle; /* the model's (weft: its task) */
};

static long ch_n, ch_b, ch_nt;
static double **ch_tile; /* ch_tile[i * nt + j], i >= j */
static double **ch_orig; /* the input, for the check */
static struct ch_op *ch_ops;
static int ch_nops;

static inline double *ch_t(long i, long j)
{
    return ch_tile[i * ch_nt + j];
}

static inline void ch_run_op(const struct ch_op *o)
{
    int b = (int)ch_b;
    switch (o->kind) {
    case CH_POTRF:
        if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', b, ch_t(o->k, o->k), b) != 0) {
            fprintf(stderr, "bench: cholesky: dpotrf failed at tile %d\n", o->k);
            exit(1);
        }
        break;
    case CH_TRSM:
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0,
                    ch_t(o->k, o->k), b, ch_t(o->i, o->k), b);
        break;
    case CH_SYRK:
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, b, -1.0, ch_t(o->i, o->k), b, 1.0,
                    ch_t(o->i, o->i), b);
        break;
    default:
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, b, -1.0, ch_t(o->i, o->k), b,
                    ch_t(o->j, o->k), b, 1.0, ch_t(o->i, o->j), b);
        break;
    }
}

static inline uint64_t ch_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Element (r, c), r >= c, of tile storage t. */
static inline double *ch_at(double **t, long r, long c)
{
    return &t[(r / ch_b) * ch_nt + c / ch_b][(c % ch_b) * ch_b + r % ch_b];
}

static inline void ch_init(long n, long b)
{
    ch_n = n;
    ch_b = b;
    ch_nt = n / b;
    openblas_set_num_threads(1);
    ch_tile = (double **)calloc((size_t)(ch_nt * ch_nt), sizeof *ch_tile);
    ch_orig = (double **)calloc((size_t)(ch_nt * ch_nt), sizeof *ch_orig);
    if (!ch_tile || !ch_orig) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < ch_nt; i++)
        for (long j = 0; j <= i; j++) {
            ch_tile[i * ch_nt + j] = (double *)aligned_alloc(64, (size_t)(b * b) * sizeof(double));
            ch_orig[i * ch_nt + j] = (double *)aligned_alloc(64, (size_t)(b * b) * sizeof(double));
            if (!ch_tile[i * ch_nt + j] || !ch_orig[i * ch_nt + j]) {
                fprintf(stderr, "bench: out of memory\n");
                exit(1);
            }
        }
    uint64_t s = 1;
    for (long r = 0; r < n; r++)
        for (long c = 0; c <= r; c++)
            *ch_at(ch_orig, r, c) =
                (double)(ch_rand(&s) >> 11) * 0x1.0p-53 + (r == c ? (double)n : 0.0);
    /* the operations and their dependencies, in program order */
    long nt = ch_nt, max = nt + nt * nt * nt;
    ch_ops = (struct ch_op *)calloc((size_t)max, sizeof *ch_ops);
    int *last = (int *)malloc((size_t)(nt * nt) * sizeof *last);
    int *succ_cap = (int *)calloc((size_t)max, sizeof *succ_cap);
    if (!ch_ops || !last || !succ_cap) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (long t = 0; t < nt * nt; t++)
        last[t] = -1;
    ch_nops = 0;
    for (long k = 0; k < nt; k++) {
        for (long stage = 0; stage < 4; stage++)
            for (long i = k; i < nt; i++)
                for (long j = k; j <= i; j++) {
                    struct ch_op o = { 0, (int)i, (int)j, (int)k, 0, 0, NULL, NULL };
                    long tiles[3], ntiles = 0;
                    if (stage == 0 && i == k && j == k) {
                        o.kind = CH_POTRF;
                        tiles[ntiles++] = k * nt + k;
                    } else if (stage == 1 && i > k && j == k) {
                        o.kind = CH_TRSM;
                        tiles[ntiles++] = i * nt + k;
                        tiles[ntiles++] = k * nt + k;
                    } else if (stage == 2 && i > k && j == i) {
                        o.kind = CH_SYRK;
                        tiles[ntiles++] = i * nt + i;
                        tiles[ntiles++] = i * nt + k;
                    } else if (stage == 3 && i > j && j > k) {
                        o.kind = CH_GEMM;
                        tiles[ntiles++] = i * nt + j;
                        tiles[ntiles++] = i * nt + k;
                        tiles[ntiles++] = j * nt + k;
                    } else {
                        continue;
                    }
                    int me = ch_nops++;
                    ch_ops[me] = o;
                    int preds[3], np = 0;
                    for (long x = 0; x < ntiles; x++) {
                        int p = last[tiles[x]], dup = 0;
                        for (int y = 0; y < np; y++)
                            dup |= preds[y] == p;
                        if (p >= 0 && !dup)
                            preds[np++] = p;
                    }
                    ch_ops[me].npred = np;
                    for (int y = 0; y < np; y++) {
                        struct ch_op *q = &ch_ops[preds[y]];
                        if (q->nsucc == succ_cap[preds[y]]) {
                            succ_cap[preds[y]] = succ_cap[preds[y]] ? 2 * succ_cap[preds[y]] : 4;
                            q->succ = (int *)realloc(q->succ,
                                                     (size_t)succ_cap[preds[y]] * sizeof *q->succ);
                            if (!q->succ) {
                                fprintf(stderr, "bench: out of memory\n");
                                exit(1);
                            }
                        }
                        q->succ[q->nsucc++] = me;
                    }
                    last[tiles[0]] = me;
                }
    }
    free(last);
    free(succ_cap);
}

/* The input again, before each run. */
/* The start of a cholesky program: its options (-n N, a multiple of the
 * tile, default 4096) and the matrix, in tiles of `tile`. */
static inline void ch_main_init(int argc, char **argv, bench_opts *o, long tile)
{
    bench_parse(argc, argv, o, "  -n N (a multiple of 256; default 4096)\n");
    ch_init(bench_size(o, 4096), tile);
}

static inline void ch_reset(void)
{
    for (long i = 0; i < ch_nt; i++)
        for (long j = 0; j <= i; j++)
            memcpy(ch_tile[i * ch_nt + j], ch_orig[i * ch_nt + j],
                   (size_t)(ch_b * ch_b) * sizeof(double));
}

/* (L L^T)(r, c) against the input at a few places. */
static inline void ch_check(void)
{
    uint64_t s = 7;
    for (int x = 0; x < 64; x++) {
        long r = (long)(ch_rand(&s) % (uint64_t)ch_n), c = (long)(ch_rand(&s) % (uint64_t)(r + 1));
        double sum = 0;
        for (long m = 0; m <= c; m++)
            sum += *ch_at(ch_tile, r, m) * *ch_at(ch_tile, c, m);
        double want = *ch_at(ch_orig, r, c);
        if (fabs(sum - want) > 1e-8 * fabs(want) + 1e-8) {
            fprintf(stderr, "bench: cholesky: (LL^T)(%ld,%ld) = %g, want %g\n", r, c, sum, want);
            exit(1);
        }
    }
}

static inline double ch_gflops(double ns)
{
    return (double)ch_n * (double)ch_n * (double)ch_n / 3.0 / ns;
}

/* RESULT lines carry ns per factorisation; the human line adds GFLOPS. */
static inline void ch_report(const bench_opts *o, const char *impl, long workers, double *samples,
                             int runs)
{
    char param[48];
    snprintf(param, sizeof param, "n%ld_b%ld", ch_n, ch_b);
    bench_stats st = bench_report(o, "cholesky", impl, workers, param, samples, runs, "ns");
    printf("  cholesky %s workers=%ld: %.2f GFLOPS (median)\n", impl, workers,
           ch_gflops(st.median));
}

#endif
