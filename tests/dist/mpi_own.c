/* mpi_own.c: a program that initialised MPI itself keeps it: weft_dist_init
 * and finalize leave MPI alone, and the program finalises it. */
#include <mpi.h>
#include <stdint.h>

#include "dist_test.h"

#define FIB_N 16

int main(int argc, char **argv)
{
    dist_test_mpi_init(&argc, &argv);
    int rc = weft_dist_init(&argc, &argv);
    if (rc == ENOTSUP) {
        MPI_Finalize(); /* ours to finalise, skipping or not */
        SKIP("weft_dist is not available in this build");
    }
    CHECK_EQ(rc, 0);
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_EQ(weft_dist_rank(), rank);
    void *r = NULL;
    CHECK_EQ(weft_dist_run(dist_test_fib, (void *)(intptr_t)FIB_N, &r), 0);
    CHECK_EQ((intptr_t)r, dist_test_fib_serial(FIB_N));
    CHECK_EQ(weft_dist_finalize(), 0);
    int fin = 1;
    MPI_Finalized(&fin);
    CHECK_EQ(fin, 0);
    long v = (intptr_t)r, sum = 0;
    CHECK_EQ(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_EQ(sum, v * size);
    /* and weft_dist may start again on the program's MPI */
    dist_test_init(&argc, &argv);
    CHECK_EQ(weft_dist_run(dist_test_fib, (void *)(intptr_t)FIB_N, &r), 0);
    CHECK_EQ((intptr_t)r, dist_test_fib_serial(FIB_N));
    CHECK_EQ(weft_dist_finalize(), 0);
    MPI_Finalize();
    return 0;
}
