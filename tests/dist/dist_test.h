/* dist_test.h: what the weft_dist tests share. Each test is one program that
 * ctest runs under mpiexec on 1, 2 and 4 ranks (tests/dist/dist.cmake);
 * every rank checks and exits 0, 77 to skip, anything else to fail. */
#ifndef WEFT_TEST_DIST_TEST_H
#define WEFT_TEST_DIST_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <weft_dist.h>

#include "check.h"

#define DIST_TEST_ALARM_S 60 /* a hang becomes a failure, never a stuck CI */

/* weft_dist_init, or skip where the distributed mode is not built in
 * (ThreadSanitizer builds refuse it with ENOTSUP). */
static inline void dist_test_init(int *argc, char ***argv)
{
    alarm(DIST_TEST_ALARM_S);
    int rc = weft_dist_init(argc, argv);
    if (rc == ENOTSUP)
        SKIP("weft_dist is not available in this build");
    CHECK_EQ(rc, 0);
}

#ifdef MPI_VERSION
/* MPI_Init_thread by the test itself, for the tests of a program that owns
 * MPI (include <mpi.h> first); skips under ThreadSanitizer, where MPICH's
 * MPI_Finalize crashes. */
static inline void dist_test_mpi_init(int *argc, char ***argv)
{
#if defined(WEFT_SANITIZE_THREAD)
    SKIP("MPICH's MPI_Finalize crashes under ThreadSanitizer");
#endif
    int provided = 0;
    CHECK_EQ(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    alarm(DIST_TEST_ALARM_S);
}
#endif

/* weft_dist_finalize with WEFT_DIST_STATS=1, its stderr captured: the
 * statistics line this rank printed, in buf (size bytes, NUL-terminated);
 * returns weft_dist_finalize's result. */
static inline int dist_test_finalize_stats(char *buf, size_t size)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    fflush(stderr);
    int saved = dup(2);
    CHECK(saved >= 0);
    CHECK(dup2(fileno(f), 2) == 2);
    setenv("WEFT_DIST_STATS", "1", 1);
    int rc = weft_dist_finalize();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return rc;
}

static inline void *dist_test_fib(void *arg)
{
    intptr_t n = (intptr_t)arg;
    if (n < 2)
        return (void *)n;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, dist_test_fib, (void *)(n - 1), NULL), 0);
    intptr_t b = (intptr_t)dist_test_fib((void *)(n - 2));
    void *a = NULL;
    CHECK_EQ(weft_join(t, &a), 0);
    return (void *)((intptr_t)a + b);
}

static inline intptr_t dist_test_fib_serial(intptr_t n)
{
    return n < 2 ? n : dist_test_fib_serial(n - 1) + dist_test_fib_serial(n - 2);
}

#endif
