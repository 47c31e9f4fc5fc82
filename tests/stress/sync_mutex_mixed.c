/* Stress: many user threads on several workers and plain pthreads hammer a
 * small set of weft_mutex objects (lock, trylock, nested locking in a fixed
 * order, switching while holding) for a fixed time; every critical section
 * is checked for exclusion and the counters must add up. Runs with all
 * CPUs as workers and oversubscribed (more workers than CPUs). */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

#define NLOCKS 4
#define USERS  48
#define PLAIN  3

static weft_mutex locks[NLOCKS];
static long counts[NLOCKS]; /* counts[i] under locks[i] */
static atomic_int inside[NLOCKS];
static atomic_long done_ops;
static atomic_int plain_done;
static double deadline;

static void critical(int i, int may_yield)
{
    CHECK_EQ(atomic_fetch_add(&inside[i], 1), 0);
    counts[i]++;
    if (may_yield)
        weft_yield();
    CHECK_EQ(atomic_fetch_sub(&inside[i], 1), 1);
}

static void *hammer(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg * 0x9e37u + 1;
    int user = weft_self() != NULL;
    long ops = 0;
    while (check_now() < deadline) {
        for (int k = 0; k < 64; k++) {
            uint64_t r = test_splitmix(&seed);
            int i = (int)(r % NLOCKS);
            int yield = user && (r >> 8) % 32 == 0;
            switch ((r >> 16) % 4) {
            case 0: { /* trylock, then lock */
                int e = weft_mutex_trylock(&locks[i]);
                if (e == EBUSY)
                    e = weft_mutex_lock(&locks[i]);
                CHECK_EQ(e, 0);
                critical(i, yield);
                CHECK_EQ(weft_mutex_unlock(&locks[i]), 0);
                ops++;
                break;
            }
            case 1: { /* two locks in index order */
                int j = (i + 1 + (int)((r >> 24) % (NLOCKS - 1))) % NLOCKS;
                int lo = i < j ? i : j, hi = i < j ? j : i;
                CHECK_EQ(weft_mutex_lock(&locks[lo]), 0);
                CHECK_EQ(weft_mutex_lock(&locks[hi]), 0);
                critical(lo, 0);
                critical(hi, yield);
                CHECK_EQ(weft_mutex_unlock(&locks[hi]), 0);
                CHECK_EQ(weft_mutex_unlock(&locks[lo]), 0);
                ops += 2;
                break;
            }
            default:
                CHECK_EQ(weft_mutex_lock(&locks[i]), 0);
                critical(i, yield);
                CHECK_EQ(weft_mutex_unlock(&locks[i]), 0);
                ops++;
                break;
            }
        }
    }
    atomic_fetch_add(&done_ops, ops);
    st_plain_done(&plain_done);
    return NULL;
}

static void run(int workers, double seconds)
{
    st_init(workers);
    for (int i = 0; i < NLOCKS; i++) {
        CHECK_EQ(weft_mutex_init(&locks[i]), 0);
        counts[i] = 0;
    }
    atomic_store(&done_ops, 0);
    atomic_store(&plain_done, 0);
    deadline = check_now() + seconds;
    pthread_t p[PLAIN];
    weft_thread *u[USERS];
    st_pthreads(p, PLAIN, hammer, 1000, 1);
    st_spawns(u, USERS, hammer, 1, 1);
    st_join_mixed(u, USERS, p, PLAIN, &plain_done);
    long total = 0;
    for (int i = 0; i < NLOCKS; i++) {
        total += counts[i];
        CHECK_EQ(weft_mutex_destroy(&locks[i]), 0);
    }
    CHECK_EQ(total, atomic_load(&done_ops));
    printf("workers=%d: %ld critical sections\n", weft_num_workers(), total);
    st_finalize();
}

int main(void)
{
    st_watchdog(120);
    run(0, 2.0);
    run(2 * test_affinity_cpus() + 1, 2.0);
    run(1, 1.0);
    printf("sync_mutex_mixed: ok\n");
    return 0;
}
