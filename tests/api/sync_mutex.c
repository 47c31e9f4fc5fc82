/* Tests weft_mutex against the SPEC: static and dynamic initialisation,
 * EINVAL on NULL, EBUSY from trylock and from destroy while locked or
 * waited on, EDEADLK on relock by the owner, EPERM on unlock by another
 * thread or of a free mutex, both owner kinds (user thread, plain kernel
 * thread), waiting user threads free their worker, plain threads use it
 * before weft_init, and mutual exclusion with user threads and pthreads. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static weft_mutex gm = WEFT_MUTEX_INIT; /* static initialiser: zero storage */

/* ---- plain threads before weft_init --------------------------------------- */

static long pre_counter;

static void *pre_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        CHECK_EQ(weft_mutex_lock(&gm), 0);
        pre_counter++;
        CHECK_EQ(weft_mutex_unlock(&gm), 0);
    }
    return NULL;
}

static void before_init(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        t[i] = st_pthread(pre_worker, NULL);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    CHECK_EQ(pre_counter, 60000);
    CHECK_EQ(weft_mutex_destroy(&gm), 0);
}

/* ---- errors ---------------------------------------------------------------- */

static void *unlock_other(void *arg)
{
    weft_mutex *m = arg;
    return (void *)(intptr_t)weft_mutex_unlock(m);
}

static void *trylock_other(void *arg)
{
    return (void *)(intptr_t)weft_mutex_trylock((weft_mutex *)arg);
}

static void errors(void)
{
    weft_mutex m;
    CHECK_EQ(weft_mutex_init(NULL), EINVAL);
    CHECK_EQ(weft_mutex_destroy(NULL), EINVAL);
    CHECK_EQ(weft_mutex_lock(NULL), EINVAL);
    CHECK_EQ(weft_mutex_trylock(NULL), EINVAL);
    CHECK_EQ(weft_mutex_unlock(NULL), EINVAL);

    memset(&m, 0xa5, sizeof m);
    CHECK_EQ(weft_mutex_init(&m), 0);
    CHECK_EQ(weft_mutex_unlock(&m), EPERM); /* not locked */
    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_mutex_lock(&m), EDEADLK);  /* relock by the owner */
    CHECK_EQ(weft_mutex_trylock(&m), EBUSY); /* even by the owner */
    CHECK_EQ(weft_mutex_destroy(&m), EBUSY); /* locked */

    /* Another user thread and a plain thread are not the owner. */
    CHECK_EQ((intptr_t)st_join(st_spawn(unlock_other, &m)), EPERM);
    CHECK_EQ((intptr_t)st_join(st_spawn(trylock_other, &m)), EBUSY);
    pthread_t p = st_pthread(unlock_other, &m);
    void *r;
    CHECK_EQ(pthread_join(p, &r), 0);
    CHECK_EQ((intptr_t)r, EPERM);
    p = st_pthread(trylock_other, &m);
    CHECK_EQ(pthread_join(p, &r), 0);
    CHECK_EQ((intptr_t)r, EBUSY);

    CHECK_EQ(weft_mutex_unlock(&m), 0);
    CHECK_EQ(weft_mutex_unlock(&m), EPERM);
    CHECK_EQ(weft_mutex_trylock(&m), 0);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    CHECK_EQ(weft_mutex_destroy(&m), 0);
}

/* A plain thread owns the mutex: the user thread is not the owner, and
 * the plain thread's relock is EDEADLK too. */
static atomic_int kt_state;

static void *kthread_owner(void *arg)
{
    weft_mutex *m = arg;
    CHECK_EQ(weft_mutex_lock(m), 0);
    CHECK_EQ(weft_mutex_lock(m), EDEADLK);
    atomic_store(&kt_state, 1);
    while (atomic_load(&kt_state) != 2)
        st_sleep_ms(1);
    CHECK_EQ(weft_mutex_unlock(m), 0);
    CHECK_EQ(weft_mutex_unlock(m), EPERM);
    atomic_store(&kt_state, 3);
    return NULL;
}

static void kernel_owner(void)
{
    weft_mutex m = WEFT_MUTEX_INIT;
    pthread_t p = st_pthread(kthread_owner, &m);
    while (atomic_load(&kt_state) != 1)
        weft_yield();
    CHECK_EQ(weft_mutex_unlock(&m), EPERM);
    CHECK_EQ(weft_mutex_trylock(&m), EBUSY);
    CHECK_EQ(weft_mutex_destroy(&m), EBUSY);
    atomic_store(&kt_state, 2);
    CHECK_EQ(weft_mutex_lock(&m), 0); /* parks until the plain thread unlocks */
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    atomic_int done = 0;
    while (atomic_load(&kt_state) != 3)
        weft_yield();
    atomic_store(&done, 1);
    st_pthread_join(p, &done);
    CHECK_EQ(weft_mutex_destroy(&m), 0);
}

/* ---- a waiting user thread frees its worker (run with one worker) ------------ */

static weft_mutex fm = WEFT_MUTEX_INIT;
static atomic_int waiter_in, bystander_ran, waiter_got;

static void *waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiter_in, 1);
    CHECK_EQ(weft_mutex_lock(&fm), 0);
    atomic_store(&waiter_got, 1);
    CHECK_EQ(weft_mutex_unlock(&fm), 0);
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void frees_worker(void)
{
    CHECK_EQ(weft_mutex_lock(&fm), 0);
    weft_thread *w = st_spawn(waiter, NULL);
    while (!atomic_load(&waiter_in))
        weft_yield();
    weft_yield(); /* the waiter is now parked on fm */
    weft_thread *b = st_spawn(bystander, NULL);
    while (!atomic_load(&bystander_ran))
        weft_yield();
    CHECK_EQ(atomic_load(&waiter_got), 0);
    CHECK_EQ(weft_mutex_destroy(&fm), EBUSY);
    CHECK_EQ(weft_mutex_unlock(&fm), 0);
    st_join(w);
    st_join(b);
    CHECK_EQ(atomic_load(&waiter_got), 1);
    CHECK_EQ(weft_mutex_destroy(&fm), 0);
}

/* ---- mutual exclusion, user threads and plain threads together ------------- */

#define ME_USERS 8
#define ME_PLAIN 2
#define ME_ITERS 20000

static weft_mutex cm = WEFT_MUTEX_INIT;
static long counter;
static atomic_int inside;
static atomic_int plain_done;

static void *incr(void *arg)
{
    for (int i = 0; i < ME_ITERS; i++) {
        st_mutex_take(&cm, i % 7 == 0);
        CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
        counter++;
        if (i % 64 == 0 && weft_self())
            weft_yield(); /* switch while holding it: others must park */
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(weft_mutex_unlock(&cm), 0);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void exclusion(void)
{
    counter = 0;
    atomic_store(&plain_done, 0);
    weft_thread *u[ME_USERS];
    pthread_t p[ME_PLAIN];
    st_pthreads(p, ME_PLAIN, incr, 0, 0);
    st_spawns(u, ME_USERS, incr, 0, 0);
    st_join_mixed(u, ME_USERS, p, ME_PLAIN, &plain_done);
    CHECK_EQ(counter, (long)(ME_USERS + ME_PLAIN) * ME_ITERS);
    CHECK_EQ(weft_mutex_destroy(&cm), 0);
}

int main(void)
{
    st_watchdog(60);
    before_init();

    st_init(1);
    errors();
    kernel_owner();
    frees_worker();
    exclusion();
    st_finalize();

    st_init(test_affinity_cpus() > 1 ? 0 : 2);
    errors();
    exclusion();
    st_finalize();

    st_init(4);
    exclusion();
    st_finalize();
    printf("sync_mutex: ok\n");
    return 0;
}
