/* Stress: readers and writers of both kinds (user threads on several
 * workers, plain pthreads) on one weft_rwlock for a fixed time. Inside a
 * read section no writer is inside; inside a write section nobody else is;
 * writers keep two counters equal that readers check; the per-thread
 * write counts must add up. Writers must make progress while readers
 * stream in (writer preference): each writer completes a minimum number of
 * sections. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

#define U_READERS 16
#define U_WRITERS 4
#define P_READERS 2
#define P_WRITERS 1

static weft_rwlock l = WEFT_RWLOCK_INIT;
static atomic_int readers_in, writers_in;
static long a_, b_; /* under l (write) */
static atomic_long writes_done, reads_done;
static atomic_int plain_done;
static double deadline;

static void *reader(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    int user = weft_self() != NULL;
    long n = 0;
    while (check_now() < deadline) {
        CHECK_EQ(weft_rwlock_rdlock(&l), 0);
        atomic_fetch_add(&readers_in, 1);
        CHECK_EQ(atomic_load(&writers_in), 0);
        long x = a_;
        if (user && test_splitmix(&seed) % 8 == 0)
            weft_yield();
        CHECK_EQ(x, b_);
        CHECK_EQ(atomic_load(&writers_in), 0);
        atomic_fetch_sub(&readers_in, 1);
        CHECK_EQ(weft_rwlock_unlock(&l), 0);
        n++;
    }
    atomic_fetch_add(&reads_done, n);
    st_plain_done(&plain_done);
    return NULL;
}

static void *writer(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    int user = weft_self() != NULL;
    long n = 0;
    while (check_now() < deadline) {
        CHECK_EQ(weft_rwlock_wrlock(&l), 0);
        CHECK_EQ(atomic_fetch_add(&writers_in, 1), 0);
        CHECK_EQ(atomic_load(&readers_in), 0);
        a_++;
        if (user && test_splitmix(&seed) % 4 == 0)
            weft_yield();
        b_++;
        CHECK_EQ(atomic_load(&readers_in), 0);
        CHECK_EQ(atomic_fetch_sub(&writers_in, 1), 1);
        CHECK_EQ(weft_rwlock_unlock(&l), 0);
        n++;
        if (user)
            weft_yield();
    }
    CHECK(n >= 10); /* writers are not starved by the stream of readers */
    atomic_fetch_add(&writes_done, n);
    st_plain_done(&plain_done);
    return NULL;
}

static void run(int workers, double seconds)
{
    st_init(workers);
    a_ = b_ = 0;
    atomic_store(&writes_done, 0);
    atomic_store(&reads_done, 0);
    atomic_store(&plain_done, 0);
    deadline = check_now() + seconds;
    pthread_t p[P_READERS + P_WRITERS];
    weft_thread *u[U_READERS + U_WRITERS];
    int np = 0, nu = 0;
    for (int i = 0; i < P_READERS; i++)
        p[np++] = st_pthread(reader, (void *)(intptr_t)(100 + i));
    for (int i = 0; i < P_WRITERS; i++)
        p[np++] = st_pthread(writer, (void *)(intptr_t)(200 + i));
    for (int i = 0; i < U_READERS; i++)
        u[nu++] = st_spawn(reader, (void *)(intptr_t)(300 + i));
    for (int i = 0; i < U_WRITERS; i++)
        u[nu++] = st_spawn(writer, (void *)(intptr_t)(400 + i));
    st_join_mixed(u, nu, p, np, &plain_done);
    CHECK_EQ(a_, atomic_load(&writes_done));
    CHECK_EQ(b_, a_);
    CHECK_EQ(weft_rwlock_destroy(&l), 0);
    printf("workers=%d: %ld writes, %ld reads\n", weft_num_workers(), a_, atomic_load(&reads_done));
    st_finalize();
}

int main(void)
{
    st_watchdog(120);
    run(1, 1.0);
    run(0, 2.0);
    run(2 * test_affinity_cpus() + 1, 2.0);
    printf("sync_rwlock_mixed: ok\n");
    return 0;
}
