/* Tests weft_rwlock against the SPEC and the writer-preferring policy:
 * EINVAL on NULL, EDEADLK when the writer relocks (for reading or
 * writing), EPERM on an unlock by a thread that is not the writer or of a
 * free lock, EBUSY from destroy while held or waited on, readers share,
 * writers exclude readers and writers, a queued writer holds back new
 * readers (no writer starvation) and is served before them, and plain
 * threads take part on the same lock. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static weft_rwlock l = WEFT_RWLOCK_INIT;

static void *unlock_other(void *arg)
{
    return (void *)(intptr_t)weft_rwlock_unlock((weft_rwlock *)arg);
}

static void errors(void)
{
    CHECK_EQ(weft_rwlock_init(NULL), EINVAL);
    CHECK_EQ(weft_rwlock_destroy(NULL), EINVAL);
    CHECK_EQ(weft_rwlock_rdlock(NULL), EINVAL);
    CHECK_EQ(weft_rwlock_wrlock(NULL), EINVAL);
    CHECK_EQ(weft_rwlock_unlock(NULL), EINVAL);

    weft_rwlock x;
    memset(&x, 0x77, sizeof x);
    CHECK_EQ(weft_rwlock_init(&x), 0);
    CHECK_EQ(weft_rwlock_unlock(&x), EPERM); /* not held */

    CHECK_EQ(weft_rwlock_wrlock(&x), 0);
    CHECK_EQ(weft_rwlock_wrlock(&x), EDEADLK);
    CHECK_EQ(weft_rwlock_rdlock(&x), EDEADLK);
    CHECK_EQ(weft_rwlock_destroy(&x), EBUSY);
    CHECK_EQ((intptr_t)st_join(st_spawn(unlock_other, &x)), EPERM);
    pthread_t p = st_pthread(unlock_other, &x);
    void *r;
    CHECK_EQ(pthread_join(p, &r), 0);
    CHECK_EQ((intptr_t)r, EPERM);
    CHECK_EQ(weft_rwlock_unlock(&x), 0);
    CHECK_EQ(weft_rwlock_unlock(&x), EPERM);

    /* Read locks nest when no writer waits. */
    CHECK_EQ(weft_rwlock_rdlock(&x), 0);
    CHECK_EQ(weft_rwlock_rdlock(&x), 0);
    CHECK_EQ(weft_rwlock_destroy(&x), EBUSY);
    CHECK_EQ(weft_rwlock_unlock(&x), 0);
    CHECK_EQ(weft_rwlock_unlock(&x), 0);
    CHECK_EQ(weft_rwlock_unlock(&x), EPERM);
    CHECK_EQ(weft_rwlock_destroy(&x), 0);
}

/* ---- sharing and exclusion ---------------------------------------------------- */

static atomic_int step;
static atomic_int order[8];
static atomic_int norder;

static void record(int who)
{
    atomic_store(&order[atomic_fetch_add(&norder, 1)], who);
}

static void *reader_holds(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_rwlock_rdlock(&l), 0);
    atomic_store(&step, 1);
    while (atomic_load(&step) != 2)
        weft_yield();
    record(1);
    CHECK_EQ(weft_rwlock_unlock(&l), 0);
    return NULL;
}

static void *writer(void *arg)
{
    CHECK_EQ(weft_rwlock_wrlock(&l), 0);
    record((int)(intptr_t)arg);
    if (weft_self())
        weft_yield(); /* hold it across a switch */
    CHECK_EQ(weft_rwlock_unlock(&l), 0);
    return NULL;
}

static void *late_reader(void *arg)
{
    CHECK_EQ(weft_rwlock_rdlock(&l), 0);
    record((int)(intptr_t)arg);
    CHECK_EQ(weft_rwlock_unlock(&l), 0);
    return NULL;
}

/* A reader holds; a writer queues; a later reader must wait behind the
 * writer. plain: the writer and the late reader are plain threads. */
static void preference(int plain)
{
    atomic_store(&step, 0);
    atomic_store(&norder, 0);
    weft_thread *r1 = st_spawn(reader_holds, NULL);
    while (atomic_load(&step) != 1)
        weft_yield();
    /* Readers share: this thread can read too while r1 reads. */
    CHECK_EQ(weft_rwlock_rdlock(&l), 0);
    CHECK_EQ(weft_rwlock_unlock(&l), 0);

    weft_thread *w = NULL, *r2 = NULL;
    pthread_t pw, pr;
    if (plain)
        pw = st_pthread(writer, (void *)2);
    else
        w = st_spawn(writer, (void *)2);
    st_yield_ms(30); /* the writer is queued */
    CHECK_EQ(weft_rwlock_destroy(&l), EBUSY);
    if (plain)
        pr = st_pthread(late_reader, (void *)3);
    else
        r2 = st_spawn(late_reader, (void *)3);
    st_yield_ms(30); /* the late reader is queued behind the writer */
    CHECK_EQ(atomic_load(&norder), 0);
    atomic_store(&step, 2);
    st_join(r1);
    if (plain) {
        CHECK_EQ(pthread_join(pw, NULL), 0);
        CHECK_EQ(pthread_join(pr, NULL), 0);
    } else {
        st_join(w);
        st_join(r2);
    }
    CHECK_EQ(atomic_load(&norder), 3);
    CHECK_EQ(atomic_load(&order[0]), 1);
    CHECK_EQ(atomic_load(&order[1]), 2);
    CHECK_EQ(atomic_load(&order[2]), 3);
    CHECK_EQ(weft_rwlock_destroy(&l), 0);
}

/* Writers exclude each other and readers: a counter pair that readers
 * check for consistency. */
static long a_, b_;
static atomic_int plain_done;

static void *mixed(void *arg)
{
    uint64_t seed = (uint64_t)(intptr_t)arg * 7919u;
    for (int i = 0; i < 5000; i++) {
        if (test_splitmix(&seed) % 4 == 0) {
            CHECK_EQ(weft_rwlock_wrlock(&l), 0);
            a_++;
            if (weft_self() && i % 16 == 0)
                weft_yield();
            b_++;
            CHECK_EQ(weft_rwlock_unlock(&l), 0);
        } else {
            CHECK_EQ(weft_rwlock_rdlock(&l), 0);
            long x = a_;
            if (weft_self() && i % 16 == 0)
                weft_yield();
            CHECK_EQ(x, b_);
            CHECK_EQ(weft_rwlock_unlock(&l), 0);
        }
    }
    if ((intptr_t)arg >= 100)
        atomic_fetch_add(&plain_done, 1);
    return NULL;
}

static void exclusion(void)
{
    weft_thread *u[6];
    pthread_t p[2];
    atomic_store(&plain_done, 0);
    st_pthreads(p, 2, mixed, 100, 1);
    st_spawns(u, 6, mixed, 1, 1);
    st_join_mixed(u, 6, p, 2, &plain_done);
    CHECK_EQ(a_, b_);
    CHECK_EQ(weft_rwlock_destroy(&l), 0);
}

int main(void)
{
    st_watchdog(60);
    st_init(1);
    errors();
    preference(0);
    preference(1);
    exclusion();
    st_finalize();

    st_init(test_affinity_cpus() > 1 ? 0 : 2);
    errors();
    preference(0);
    preference(1);
    exclusion();
    st_finalize();
    printf("sync_rwlock: ok\n");
    return 0;
}
