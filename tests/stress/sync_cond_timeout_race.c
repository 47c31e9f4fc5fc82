/* Stress: the race between a timed wait's timeout and a signal. Untimed
 * waiters and timed waiters whose deadlines fall around the signals share
 * one weft_cond; the signaler posts exactly one token per signal (never a
 * broadcast), and only untimed waiters take tokens. A timed waiter that
 * was signalled (returns 0) passes the signal on; one that timed out must
 * not have absorbed a signal. A signal lost to a timed-out waiter would
 * leave an untimed waiter asleep forever (the watchdog fires). Both user
 * threads (timer service) and plain threads (futex deadline) time out. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

#define ROUNDS    2000
#define U_UNTIMED 3
#define U_TIMED   4
#define P_UNTIMED 1
#define P_TIMED   1

static weft_mutex m = WEFT_MUTEX_INIT;
static weft_cond c = WEFT_COND_INIT;
static long tokens; /* under m */
static int stop;    /* under m */
static atomic_long passed_on, got_untimed, timeouts;
static atomic_int plain_done;

static void *untimed(void *arg)
{
    long want = (long)(intptr_t)arg;
    for (long i = 0; i < want; i++) {
        CHECK_EQ(weft_mutex_lock(&m), 0);
        while (tokens == 0)
            CHECK_EQ(weft_cond_wait(&c, &m), 0);
        tokens--;
        CHECK_EQ(weft_mutex_unlock(&m), 0);
        atomic_fetch_add(&got_untimed, 1);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void *timed(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg;
    for (;;) {
        CHECK_EQ(weft_mutex_lock(&m), 0);
        if (stop) {
            CHECK_EQ(weft_mutex_unlock(&m), 0);
            break;
        }
        /* Deadlines from 0 to ~300 µs: the same scale as the signals. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(test_splitmix(&seed) % 300000);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int r = weft_cond_timedwait(&c, &m, &ts);
        CHECK(r == 0 || r == ETIMEDOUT);
        if (r == ETIMEDOUT) {
            atomic_fetch_add(&timeouts, 1);
        } else if (!stop) {
            CHECK_EQ(weft_cond_signal(&c), 0);
            atomic_fetch_add(&passed_on, 1);
        }
        CHECK_EQ(weft_mutex_unlock(&m), 0);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void *signaler(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++) {
        CHECK_EQ(weft_mutex_lock(&m), 0);
        tokens++;
        CHECK_EQ(weft_cond_signal(&c), 0);
        CHECK_EQ(weft_mutex_unlock(&m), 0);
        if (i % 4 == 0)
            st_yield_ms(0);
        else
            weft_yield();
    }
    return NULL;
}

static void run(int workers)
{
    st_init(workers);
    long per = ROUNDS;
    long nuntimed = U_UNTIMED + P_UNTIMED;
    tokens = 0;
    stop = 0;
    atomic_store(&passed_on, 0);
    atomic_store(&got_untimed, 0);
    atomic_store(&plain_done, 0);
    weft_thread *uu[U_UNTIMED], *ut[U_TIMED];
    pthread_t pu[P_UNTIMED], pt[P_TIMED];
    for (int i = 0; i < P_UNTIMED; i++)
        pu[i] = st_pthread(untimed, (void *)(intptr_t)per);
    for (int i = 0; i < P_TIMED; i++)
        pt[i] = st_pthread(timed, (void *)(intptr_t)(77 + i));
    for (int i = 0; i < U_UNTIMED; i++)
        uu[i] = st_spawn(untimed, (void *)(intptr_t)per);
    for (int i = 0; i < U_TIMED; i++)
        ut[i] = st_spawn(timed, (void *)(intptr_t)(7 + i));
    weft_thread *s = st_spawn(signaler, (void *)(intptr_t)(nuntimed * per));
    st_join(s);
    st_join_n(uu, U_UNTIMED);
    st_await(&plain_done, P_UNTIMED);
    CHECK_EQ(weft_mutex_lock(&m), 0);
    stop = 1;
    CHECK_EQ(weft_cond_broadcast(&c), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    st_join_n(ut, U_TIMED);
    st_await(&plain_done, P_UNTIMED + P_TIMED);
    st_pthread_join_n(pu, P_UNTIMED);
    st_pthread_join_n(pt, P_TIMED);
    CHECK_EQ(atomic_load(&got_untimed), nuntimed * per);
    CHECK_EQ(tokens, 0);
    CHECK_EQ(weft_cond_destroy(&c), 0);
    printf("workers=%d: %ld timeouts, %ld signals passed on by timed waiters\n", weft_num_workers(),
           atomic_load(&timeouts), atomic_load(&passed_on));
    st_finalize();
}

int main(void)
{
    st_watchdog(120);
    run(1);
    run(0);
    run(4);
    printf("sync_cond_timeout_race: ok\n");
    return 0;
}
