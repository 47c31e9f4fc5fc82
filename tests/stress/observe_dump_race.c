/* Stress: weft_dump and weft_thread_info_get racing spawns, exits, parks
 * and wake-ups on every worker, from a plain kernel thread and from a user
 * thread. Slots are recycled under the walk: nothing may crash, and the
 * sanitizers must stay quiet. Bounded in time. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static atomic_int stop;
static weft_mutex mu = WEFT_MUTEX_INIT;
static weft_sem sem;
static int devnull;
static _Atomic(weft_thread *) recent;

static void *leaf(void *arg)
{
    long k = (long)arg;
    if (k % 3 == 0) {
        weft_mutex_lock(&mu);
        weft_yield();
        weft_mutex_unlock(&mu);
    } else if (k % 3 == 1) {
        weft_sem_post(&sem);
        weft_sem_wait(&sem);
    }
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    long k = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_thread *t[8];
        for (int i = 0; i < 8; i++) {
            weft_attr a = WEFT_ATTR_INIT;
            a.name = "leaf";
            CHECK_EQ(weft_spawn(&t[i], leaf, (void *)k++, &a), 0);
            atomic_store(&recent, t[i]);
        }
        for (int i = 0; i < 8; i++)
            CHECK_EQ(weft_join(t[i], NULL), 0);
        weft_attr d = WEFT_ATTR_INIT;
        d.detached = 1;
        CHECK_EQ(weft_spawn(NULL, leaf, (void *)k++, &d), 0);
    }
    return NULL;
}

/* Stale handles are fine here: info_get must answer ESRCH or a snapshot. */
static void poke_info(void)
{
    weft_thread_info info;
    weft_thread *t = atomic_load(&recent);
    if (t) {
        int rc = weft_thread_info_get(t, &info);
        CHECK(rc == 0 || rc == ESRCH);
    }
}

static void *user_dumper(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        CHECK_EQ(weft_dump(devnull), 0);
        poke_info();
        weft_yield();
    }
    return NULL;
}

static void *kernel_dumper(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        CHECK_EQ(weft_dump(devnull), 0);
        poke_info();
    }
    return NULL;
}

int main(void)
{
    test_clear_env();
    alarm(60);
    devnull = open("/dev/null", O_WRONLY);
    CHECK(devnull >= 0);
    test_init(2, WEFT_WORK_FIRST);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    weft_thread *c[3], *u;
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_spawn(&c[i], churn, NULL, NULL), 0);
    weft_attr big = WEFT_ATTR_INIT;
    big.stack_size = (size_t)1 << 20; /* sanitizers' frames are large; the unwinder's too */
    CHECK_EQ(weft_spawn(&u, user_dumper, NULL, TEST_SANITIZED ? &big : NULL), 0);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, kernel_dumper, NULL), 0);
    double until = check_now() + (TEST_SANITIZED ? 3.0 : 1.5);
    while (check_now() < until)
        weft_sleep_ns(10 * 1000000ull);
    atomic_store(&stop, 1);
    CHECK_EQ(test_pthread_join(k, NULL), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_join(c[i], NULL), 0);
    CHECK_EQ(weft_join(u, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    close(devnull);
    return 0;
}
