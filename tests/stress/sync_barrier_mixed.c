/* Stress: barrier episodes between user threads (more than the workers, so
 * some must park) and plain pthreads on one weft_barrier. Each episode has
 * exactly one WEFT_BARRIER_SERIAL_THREAD, and every participant sees the
 * phase the serial thread of the previous episode published after it left
 * (nobody runs ahead or lags behind an episode). Participants do random
 * small amounts of work per episode so arrivals are spread out. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

#define USERS    12
#define PLAIN    2
#define NPART    (USERS + PLAIN)
#define EPISODES 20000

static weft_barrier b;
static atomic_int serial_count[EPISODES];
/* phase[j & 1] = j, written by the serial thread of wait j before it arrives
 * at wait j+1, read by everybody after wait j+1 and before wait j+2. */
static atomic_int phase[2];
static atomic_int plain_done;

static void *participant(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    int user = weft_self() != NULL;
    for (int j = 0; j < EPISODES; j++) {
        uint64_t r = test_splitmix(&seed);
        if (user && r % 4 == 0)
            weft_yield();
        for (volatile unsigned k = 0; k < (unsigned)(r >> 58); k++)
            ;
        int s = weft_barrier_wait(&b);
        CHECK(s == 0 || s == WEFT_BARRIER_SERIAL_THREAD);
        if (j > 0)
            CHECK_EQ(atomic_load(&phase[(j - 1) & 1]), j - 1);
        if (s == WEFT_BARRIER_SERIAL_THREAD) {
            atomic_fetch_add(&serial_count[j], 1);
            atomic_store(&phase[j & 1], j);
        }
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void run(int workers)
{
    st_init(workers);
    memset(serial_count, 0, sizeof serial_count);
    atomic_store(&phase[0], -1);
    atomic_store(&phase[1], -1);
    atomic_store(&plain_done, 0);
    CHECK_EQ(weft_barrier_init(&b, NPART), 0);
    pthread_t p[PLAIN];
    weft_thread *u[USERS];
    st_pthreads(p, PLAIN, participant, 50, 1);
    st_spawns(u, USERS, participant, 1, 1);
    st_join_mixed(u, USERS, p, PLAIN, &plain_done);
    st_check_all_one(serial_count, EPISODES);
    CHECK_EQ(weft_barrier_destroy(&b), 0);
    printf("workers=%d: %d episodes, %d participants\n", weft_num_workers(), EPISODES, NPART);
    st_finalize();
}

int main(void)
{
    st_watchdog(120);
    st_run_worker_counts(run, "sync_barrier_mixed");
    return 0;
}
