/* pollcost.c: what one poll of MPI costs a rank of weft_dist under rma,
 * for the scale model (bench/scale/calibrate.sh builds and runs it).
 *
 * A busy rank calls MPI_Iprobe once every WEFT_DIST_POLL spawns (rma.c's
 * rma_poll); its cost grows when the job has peers (MPICH's progress
 * engine then polls their queues too), so the model adds it per spawn at
 * the rank count it runs rather than folding it into the 1-rank spawn cost.
 * Set up as rma.c is: a window open under MPI_Win_lock_all, the poll on a
 * communicator of its own. Each rank times ROUNDS rounds of CALLS calls;
 * rank 0 prints the median round of the slowest rank:
 *   pollcost ranks=R ns=X
 * Usage: mpiexec -n R pollcost
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CALLS  200000
#define ROUNDS 7

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int provided, rank, size, flag;
    static int64_t words[512];
    double ns[ROUNDS], mine, worst;
    MPI_Win win;
    MPI_Comm comm;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_create(words, sizeof words, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Barrier(comm);
        double t0 = now_ns();
        for (int i = 0; i < CALLS; i++)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
        ns[r] = (now_ns() - t0) / CALLS;
    }
    qsort(ns, ROUNDS, sizeof ns[0], by_value);
    mine = ns[ROUNDS / 2];
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0)
        printf("pollcost ranks=%d ns=%.1f\n", size, worst);
    MPI_Comm_free(&comm);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
