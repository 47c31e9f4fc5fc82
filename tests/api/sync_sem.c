/* Tests weft_sem against the SPEC: EINVAL on NULL, trywait EAGAIN at 0,
 * the initial value is honoured, post wakes a waiting user thread or plain
 * thread (one unit per post, no unit lost or doubled), EOVERFLOW at the
 * maximum value, destroy with waiters is EBUSY, and a waiting user thread
 * frees its worker. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static void errors(void)
{
    weft_sem s;
    CHECK_EQ(weft_sem_init(NULL, 0), EINVAL);
    CHECK_EQ(weft_sem_destroy(NULL), EINVAL);
    CHECK_EQ(weft_sem_wait(NULL), EINVAL);
    CHECK_EQ(weft_sem_trywait(NULL), EINVAL);
    CHECK_EQ(weft_sem_post(NULL), EINVAL);

    memset(&s, 0xee, sizeof s);
    CHECK_EQ(weft_sem_init(&s, 3), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_sem_trywait(&s), 0);
    CHECK_EQ(weft_sem_trywait(&s), EAGAIN);
    CHECK_EQ(weft_sem_post(&s), 0);
    CHECK_EQ(weft_sem_wait(&s), 0);
    CHECK_EQ(weft_sem_trywait(&s), EAGAIN);
    CHECK_EQ(weft_sem_destroy(&s), 0);

    /* Zero storage is a semaphore of value 0. */
    weft_sem z;
    memset(&z, 0, sizeof z);
    CHECK_EQ(weft_sem_trywait(&z), EAGAIN);
    CHECK_EQ(weft_sem_post(&z), 0);
    CHECK_EQ(weft_sem_trywait(&z), 0);

    /* The largest value, then one more post overflows. */
    CHECK_EQ(weft_sem_init(&s, 0xffffffffu), 0);
    CHECK_EQ(weft_sem_post(&s), EOVERFLOW);
    CHECK_EQ(weft_sem_trywait(&s), 0);
    CHECK_EQ(weft_sem_post(&s), 0);
    CHECK_EQ(weft_sem_destroy(&s), 0);
}

/* ---- waiting and posting across thread kinds ---------------------------------- */

static weft_sem s1 = { { 0 } };
static atomic_int got;
static atomic_int bystander_ran;

static void *taker(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++) {
        CHECK_EQ(weft_sem_wait(&s1), 0);
        atomic_fetch_add(&got, 1);
    }
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void *poster(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        CHECK_EQ(weft_sem_post(&s1), 0);
    return NULL;
}

static void wake_kinds(void)
{
    atomic_store(&got, 0);
    /* A user thread waits; the worker stays free; destroy is EBUSY. */
    weft_thread *u = st_spawn(taker, (void *)1);
    st_yield_ms(10);
    CHECK_EQ(weft_sem_destroy(&s1), EBUSY);
    st_join(st_spawn(bystander, NULL));
    CHECK(atomic_load(&bystander_ran));
    CHECK_EQ(atomic_load(&got), 0);
    CHECK_EQ(weft_sem_post(&s1), 0);
    st_join(u);
    CHECK_EQ(atomic_load(&got), 1);

    /* A plain thread waits; a user thread posts. */
    pthread_t p = st_pthread(taker, (void *)1);
    st_yield_ms(10);
    CHECK_EQ(weft_sem_destroy(&s1), EBUSY);
    CHECK_EQ(weft_sem_post(&s1), 0);
    CHECK_EQ(pthread_join(p, NULL), 0);
    CHECK_EQ(atomic_load(&got), 2);

    /* A plain thread posts to waiting user threads. */
    weft_thread *us[3];
    for (int i = 0; i < 3; i++)
        us[i] = st_spawn(taker, (void *)100);
    p = st_pthread(poster, (void *)300);
    for (int i = 0; i < 3; i++)
        st_join(us[i]);
    CHECK_EQ(pthread_join(p, NULL), 0);
    CHECK_EQ(atomic_load(&got), 302);
    CHECK_EQ(weft_sem_trywait(&s1), EAGAIN);
    CHECK_EQ(weft_sem_destroy(&s1), 0);
}

/* ---- a semaphore as a counting gate: never more than V inside ---------------- */

#define GATE_V 3
static weft_sem gate;
static atomic_int inside, max_inside, plain_done;

static void *gated(void *arg)
{
    for (int i = 0; i < 3000; i++) {
        st_sem_take(&gate, i % 5 == 0);
        int n = atomic_fetch_add(&inside, 1) + 1;
        CHECK(n <= GATE_V);
        int mx = atomic_load(&max_inside);
        while (n > mx && !atomic_compare_exchange_weak(&max_inside, &mx, n))
            ;
        if (weft_self() && i % 8 == 0)
            weft_yield();
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(weft_sem_post(&gate), 0);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void counting(void)
{
    CHECK_EQ(weft_sem_init(&gate, GATE_V), 0);
    atomic_store(&plain_done, 0);
    weft_thread *u[6];
    pthread_t p[2];
    st_pthreads(p, 2, gated, 0, 0);
    st_spawns(u, 6, gated, 0, 0);
    st_join_mixed(u, 6, p, 2, &plain_done);
    for (int i = 0; i < GATE_V; i++)
        CHECK_EQ(weft_sem_trywait(&gate), 0);
    CHECK_EQ(weft_sem_trywait(&gate), EAGAIN);
    CHECK_EQ(weft_sem_destroy(&gate), 0);
}

int main(void)
{
    st_watchdog(60);
    st_init(1);
    errors();
    wake_kinds();
    counting();
    st_finalize();

    st_init(test_affinity_cpus() > 1 ? 0 : 2);
    wake_kinds();
    counting();
    st_finalize();
    printf("sync_sem: ok\n");
    return 0;
}
