/* Stress: weft_sem used three ways at once by user threads on several
 * workers and plain pthreads: a ring of semaphores passing one token around
 * (strict order, every hop a wake-up), a counting gate that never admits
 * more than its value, and a free-for-all of posts and waits that must
 * balance to the initial value at the end. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

#define RING       6 /* members: 4 user threads, 2 plain threads */
#define HOPS       3000
#define GATE_V     2
#define GATE_USERS 10
#define GATE_PLAIN 2
#define GATE_ITERS 3000

static weft_sem ring[RING];
static long ring_seq; /* written by the token holder only */
static weft_sem gate;
static atomic_int inside;
static atomic_int plain_done;

static void *ring_member(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (int h = 0; h < HOPS; h++) {
        CHECK_EQ(weft_sem_wait(&ring[i]), 0);
        CHECK_EQ(ring_seq % RING, i);
        ring_seq++;
        CHECK_EQ(weft_sem_post(&ring[(i + 1) % RING]), 0);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void *gated(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    for (int k = 0; k < GATE_ITERS; k++) {
        st_sem_take(&gate, test_splitmix(&seed) % 3 == 0);
        CHECK(atomic_fetch_add(&inside, 1) < GATE_V);
        if (weft_self() && test_splitmix(&seed) % 4 == 0)
            weft_yield();
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(weft_sem_post(&gate), 0);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void run(int workers)
{
    st_init(workers);
    ring_seq = 0;
    atomic_store(&plain_done, 0);
    for (int i = 0; i < RING; i++)
        CHECK_EQ(weft_sem_init(&ring[i], 0), 0);
    CHECK_EQ(weft_sem_init(&gate, GATE_V), 0);

    pthread_t p[2 + GATE_PLAIN];
    weft_thread *u[RING + GATE_USERS];
    int np = 0, nu = 0;
    for (int i = 0; i < RING; i++) {
        if (i % 3 == 2)
            p[np++] = st_pthread(ring_member, (void *)(intptr_t)i);
        else
            u[nu++] = st_spawn(ring_member, (void *)(intptr_t)i);
    }
    for (int i = 0; i < GATE_PLAIN; i++)
        p[np++] = st_pthread(gated, (void *)(intptr_t)(900 + i));
    for (int i = 0; i < GATE_USERS; i++)
        u[nu++] = st_spawn(gated, (void *)(intptr_t)(i + 1));
    CHECK_EQ(weft_sem_post(&ring[0]), 0); /* the token */
    st_join_mixed(u, nu, p, np, &plain_done);
    CHECK_EQ(ring_seq, (long)RING * HOPS);
    /* The token is back at ring[0]; everything else is at rest. */
    CHECK_EQ(weft_sem_trywait(&ring[0]), 0);
    for (int i = 0; i < RING; i++) {
        CHECK_EQ(weft_sem_trywait(&ring[i]), EAGAIN);
        CHECK_EQ(weft_sem_destroy(&ring[i]), 0);
    }
    for (int i = 0; i < GATE_V; i++)
        CHECK_EQ(weft_sem_trywait(&gate), 0);
    CHECK_EQ(weft_sem_trywait(&gate), EAGAIN);
    CHECK_EQ(weft_sem_destroy(&gate), 0);
    printf("workers=%d: %ld ring hops\n", weft_num_workers(), ring_seq);
    st_finalize();
}

int main(void)
{
    st_watchdog(120);
    st_run_worker_counts(run, "sync_sem_mixed");
    return 0;
}
