/* Tests weft_cond against the SPEC: EINVAL on NULL and on a malformed
 * deadline, EPERM when the mutex is not held, signal wakes one waiter and
 * broadcast all of them (user threads and plain threads waiting on the same
 * condvar), timedwait on CLOCK_REALTIME returns ETIMEDOUT no earlier than
 * the deadline and with the mutex held (from a user thread through the
 * timer service, from a plain thread through the futex), a past deadline
 * times out at once, a signal before the deadline wins, destroy with
 * waiters is EBUSY, and a waiting user thread frees its worker. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static weft_mutex m = WEFT_MUTEX_INIT;
static weft_cond c = WEFT_COND_INIT;
static int ready_count; /* under m: waiters that are about to wait */
static int go;          /* under m: predicate */
static int woken;       /* under m */

static void errors(void)
{
    struct timespec ts = st_deadline_ms(10);
    CHECK_EQ(weft_cond_init(NULL), EINVAL);
    CHECK_EQ(weft_cond_destroy(NULL), EINVAL);
    CHECK_EQ(weft_cond_signal(NULL), EINVAL);
    CHECK_EQ(weft_cond_broadcast(NULL), EINVAL);
    CHECK_EQ(weft_cond_wait(NULL, &m), EINVAL);
    CHECK_EQ(weft_cond_wait(&c, NULL), EINVAL);
    CHECK_EQ(weft_cond_timedwait(NULL, &m, &ts), EINVAL);
    CHECK_EQ(weft_cond_timedwait(&c, NULL, &ts), EINVAL);
    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_cond_timedwait(&c, &m, NULL), EINVAL);
    struct timespec bad = ts;
    bad.tv_nsec = 1000000000L;
    CHECK_EQ(weft_cond_timedwait(&c, &m, &bad), EINVAL);
    bad.tv_nsec = -1;
    CHECK_EQ(weft_cond_timedwait(&c, &m, &bad), EINVAL);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    /* The mutex must be held by the caller. */
    CHECK_EQ(weft_cond_wait(&c, &m), EPERM);
    CHECK_EQ(weft_cond_timedwait(&c, &m, &ts), EPERM);
    /* Signal and broadcast without waiters do nothing. */
    CHECK_EQ(weft_cond_signal(&c), 0);
    CHECK_EQ(weft_cond_broadcast(&c), 0);
    weft_cond d;
    memset(&d, 0x5a, sizeof d);
    CHECK_EQ(weft_cond_init(&d), 0);
    CHECK_EQ(weft_cond_destroy(&d), 0);
}

/* A waiter (user thread or plain thread): announces itself, waits for go,
 * counts its wake-up, waits for go to drop back. */
static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_mutex_lock(&m), 0);
    ready_count++;
    while (!go)
        CHECK_EQ(weft_cond_wait(&c, &m), 0);
    go--;
    woken++;
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    return NULL;
}

static void wait_ready(int n)
{
    for (;;) {
        CHECK_EQ(weft_mutex_lock(&m), 0);
        int r = ready_count;
        CHECK_EQ(weft_mutex_unlock(&m), 0);
        if (r == n)
            break;
        weft_yield();
    }
    /* Everybody announced; give them time to be queued on c (plain threads
     * need a moment to reach the futex). */
    st_yield_ms(20);
}

static int read_woken(void)
{
    CHECK_EQ(weft_mutex_lock(&m), 0);
    int w = woken;
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    return w;
}

#define SB_USERS 4
#define SB_PLAIN 2

static void signal_broadcast(void)
{
    weft_thread *u[SB_USERS];
    pthread_t p[SB_PLAIN];
    ready_count = go = woken = 0;
    for (int i = 0; i < SB_USERS; i++)
        u[i] = st_spawn(waiter, NULL);
    for (int i = 0; i < SB_PLAIN; i++)
        p[i] = st_pthread(waiter, NULL);
    wait_ready(SB_USERS + SB_PLAIN);
    CHECK_EQ(weft_cond_destroy(&c), EBUSY);

    /* One signal: exactly one waiter leaves. */
    CHECK_EQ(weft_mutex_lock(&m), 0);
    go = 1;
    CHECK_EQ(weft_cond_signal(&c), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    while (read_woken() != 1)
        weft_yield();
    st_yield_ms(20);
    CHECK_EQ(read_woken(), 1);

    /* Broadcast: all the others leave. */
    CHECK_EQ(weft_mutex_lock(&m), 0);
    go = SB_USERS + SB_PLAIN - 1;
    CHECK_EQ(weft_cond_broadcast(&c), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    for (int i = 0; i < SB_USERS; i++)
        st_join(u[i]);
    while (read_woken() != SB_USERS + SB_PLAIN)
        weft_yield();
    for (int i = 0; i < SB_PLAIN; i++)
        CHECK_EQ(pthread_join(p[i], NULL), 0);
    CHECK_EQ(weft_cond_destroy(&c), 0);
}

/* ---- timed waits ------------------------------------------------------------- */

static void *timed_out(void *arg)
{
    long ms = (long)(intptr_t)arg;
    weft_mutex lm = WEFT_MUTEX_INIT;
    weft_cond lc = WEFT_COND_INIT;
    CHECK_EQ(weft_mutex_lock(&lm), 0);
    struct timespec ts = st_deadline_ms(ms);
    double deadline = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    CHECK_EQ(weft_cond_timedwait(&lc, &lm, &ts), ETIMEDOUT);
    double now = st_realtime();
    CHECK(now >= deadline - 1e-4); /* never early (0.1 ms of clock slack) */
    CHECK(now < deadline + (TEST_SANITIZED ? 2.0 : 0.5));
    /* The mutex is held again after the timeout. */
    CHECK_EQ(weft_mutex_trylock(&lm), EBUSY);
    CHECK_EQ(weft_mutex_unlock(&lm), 0);
    /* A deadline already past times out at once. */
    CHECK_EQ(weft_mutex_lock(&lm), 0);
    ts = st_deadline_ms(-5);
    CHECK_EQ(weft_cond_timedwait(&lc, &lm, &ts), ETIMEDOUT);
    CHECK_EQ(weft_mutex_unlock(&lm), 0);
    CHECK_EQ(weft_cond_destroy(&lc), 0);
    CHECK_EQ(weft_mutex_destroy(&lm), 0);
    return NULL;
}

/* A signal well before the deadline wins; the waiter returns 0. */
static weft_mutex sm = WEFT_MUTEX_INIT;
static weft_cond sc = WEFT_COND_INIT;
static int sflag;

static void *signalled_first(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_mutex_lock(&sm), 0);
    struct timespec ts = st_deadline_ms(5000);
    int r = 0;
    while (!sflag && r == 0)
        r = weft_cond_timedwait(&sc, &sm, &ts);
    CHECK_EQ(r, 0);
    CHECK(sflag);
    sflag = 0;
    CHECK_EQ(weft_mutex_unlock(&sm), 0);
    return NULL;
}

static void signal_before_deadline(int plain)
{
    sflag = 0;
    pthread_t p;
    weft_thread *u = NULL;
    double t0 = check_now();
    if (plain)
        p = st_pthread(signalled_first, NULL);
    else
        u = st_spawn(signalled_first, NULL);
    st_yield_ms(20);
    CHECK_EQ(weft_mutex_lock(&sm), 0);
    sflag = 1;
    CHECK_EQ(weft_cond_signal(&sc), 0);
    CHECK_EQ(weft_mutex_unlock(&sm), 0);
    if (plain)
        CHECK_EQ(pthread_join(p, NULL), 0);
    else
        st_join(u);
    CHECK(check_now() - t0 < 4.0);
}

static void timed(void)
{
    /* From user threads (timer service), several at once. */
    weft_thread *u[4];
    for (int i = 0; i < 4; i++)
        u[i] = st_spawn(timed_out, (void *)(intptr_t)(30 + 20 * i));
    for (int i = 0; i < 4; i++)
        st_join(u[i]);
    /* From a plain thread (futex deadline). */
    pthread_t p = st_pthread(timed_out, (void *)(intptr_t)40);
    CHECK_EQ(pthread_join(p, NULL), 0);
    signal_before_deadline(0);
    signal_before_deadline(1);
}

/* ---- a waiting user thread frees its worker (one worker) -------------------- */

static atomic_int bystander_ran;

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void frees_worker(void)
{
    ready_count = go = woken = 0;
    weft_thread *w = st_spawn(waiter, NULL);
    wait_ready(1);
    weft_thread *b = st_spawn(bystander, NULL);
    st_join(b);
    CHECK(atomic_load(&bystander_ran));
    CHECK_EQ(weft_mutex_lock(&m), 0);
    go = 1;
    CHECK_EQ(weft_cond_signal(&c), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    st_join(w);
    CHECK_EQ(read_woken(), 1);
}

int main(void)
{
    st_watchdog(60);
    st_init(1);
    errors();
    signal_broadcast();
    timed();
    frees_worker();
    st_finalize();

    st_init(test_affinity_cpus() > 1 ? 0 : 2);
    signal_broadcast();
    timed();
    st_finalize();

    /* The timer service restarts after a finalize. */
    st_init(2);
    timed();
    st_finalize();
    printf("sync_cond: ok\n");
    return 0;
}
