/* Stress: a bounded buffer guarded by one weft_mutex and two weft_cond
 * (not_full, not_empty), with producers and consumers of both kinds (user
 * threads on several workers, plain pthreads); some consumers wait with
 * short deadlines and loop on ETIMEDOUT, some wake-ups are broadcasts.
 * Every produced item must be consumed exactly once. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

#define CAP      8
#define U_PROD   6
#define U_CONS   6
#define P_PROD   2
#define P_CONS   2
#define PER_PROD 20000L
#define NPROD    (U_PROD + P_PROD)
#define NCONS    (U_CONS + P_CONS)
#define STOP     (-1L)

static weft_mutex m = WEFT_MUTEX_INIT;
static weft_cond not_full = WEFT_COND_INIT, not_empty = WEFT_COND_INIT;
static long buf[CAP]; /* under m */
static int head, len; /* under m */
static atomic_long consumed_sum, consumed_n, timeouts;
static atomic_int plain_done;

static void put(long v)
{
    CHECK_EQ(weft_mutex_lock(&m), 0);
    while (len == CAP)
        CHECK_EQ(weft_cond_wait(&not_full, &m), 0);
    buf[(head + len) % CAP] = v;
    len++;
    if (v % 97 == 0)
        CHECK_EQ(weft_cond_broadcast(&not_empty), 0);
    else
        CHECK_EQ(weft_cond_signal(&not_empty), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
}

static void *producer(void *arg)
{
    long base = (long)(intptr_t)arg * PER_PROD;
    for (long i = 1; i <= PER_PROD; i++)
        put(base + i);
    st_plain_done(&plain_done);
    return NULL;
}

static void *consumer(void *arg)
{
    int timed = (int)(intptr_t)arg & 1;
    long sum = 0, n = 0;
    for (;;) {
        CHECK_EQ(weft_mutex_lock(&m), 0);
        while (len == 0) {
            if (timed) {
                struct timespec ts = st_deadline_ms(1);
                int r = weft_cond_timedwait(&not_empty, &m, &ts);
                CHECK(r == 0 || r == ETIMEDOUT);
                if (r == ETIMEDOUT)
                    atomic_fetch_add(&timeouts, 1);
            } else {
                CHECK_EQ(weft_cond_wait(&not_empty, &m), 0);
            }
        }
        long v = buf[head];
        head = (head + 1) % CAP;
        len--;
        CHECK_EQ(weft_cond_signal(&not_full), 0);
        CHECK_EQ(weft_mutex_unlock(&m), 0);
        if (v == STOP)
            break;
        sum += v;
        n++;
    }
    atomic_fetch_add(&consumed_sum, sum);
    atomic_fetch_add(&consumed_n, n);
    st_plain_done(&plain_done);
    return NULL;
}

static void run(int workers)
{
    st_init(workers);
    head = len = 0;
    atomic_store(&consumed_sum, 0);
    atomic_store(&consumed_n, 0);
    atomic_store(&plain_done, 0);
    pthread_t pp[P_PROD], pc[P_CONS];
    weft_thread *up[U_PROD], *uc[U_CONS];
    for (int i = 0; i < P_CONS; i++)
        pc[i] = st_pthread(consumer, (void *)(intptr_t)i);
    for (int i = 0; i < U_CONS; i++)
        uc[i] = st_spawn(consumer, (void *)(intptr_t)i);
    for (int i = 0; i < P_PROD; i++)
        pp[i] = st_pthread(producer, (void *)(intptr_t)i);
    for (int i = 0; i < U_PROD; i++)
        up[i] = st_spawn(producer, (void *)(intptr_t)(P_PROD + i));
    st_join_n(up, U_PROD);
    st_await(&plain_done, P_PROD);
    for (int i = 0; i < NCONS; i++)
        put(STOP);
    st_join_n(uc, U_CONS);
    st_await(&plain_done, P_PROD + P_CONS);
    st_pthread_join_n(pp, P_PROD);
    st_pthread_join_n(pc, P_CONS);
    long total = NPROD * PER_PROD;
    CHECK_EQ(atomic_load(&consumed_n), total);
    CHECK_EQ(atomic_load(&consumed_sum), total * (total + 1) / 2);
    CHECK_EQ(len, 0);
    CHECK_EQ(weft_cond_destroy(&not_full), 0);
    CHECK_EQ(weft_cond_destroy(&not_empty), 0);
    CHECK_EQ(weft_mutex_destroy(&m), 0);
    printf("workers=%d: %ld items, %ld timeouts\n", weft_num_workers(), total,
           atomic_load(&timeouts));
    st_finalize();
}

int main(void)
{
    st_watchdog(120);
    st_run_worker_counts(run, "sync_cond_pc");
    return 0;
}
