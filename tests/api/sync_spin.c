/* Tests weft_spin: EINVAL on NULL, static and dynamic initialisation,
 * trylock EBUSY while held, unlock of a free lock EPERM, and mutual
 * exclusion between user threads on several workers and plain threads
 * (a spin lock never parks, so holders never switch while holding it). */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static weft_spin gs = WEFT_SPIN_INIT;
static long counter;
static atomic_int plain_done;

static void *incr(void *arg)
{
    for (int i = 0; i < 50000; i++) {
        if (i % 3 == 0) {
            while (weft_spin_trylock(&gs) == EBUSY)
                ;
        } else {
            CHECK_EQ(weft_spin_lock(&gs), 0);
        }
        counter++;
        CHECK_EQ(weft_spin_unlock(&gs), 0);
        if (weft_self() && i % 100 == 0)
            weft_yield();
    }
    if (arg)
        atomic_fetch_add(&plain_done, 1);
    return NULL;
}

int main(void)
{
    st_watchdog(60);
    CHECK_EQ(weft_spin_init(NULL), EINVAL);
    CHECK_EQ(weft_spin_lock(NULL), EINVAL);
    CHECK_EQ(weft_spin_trylock(NULL), EINVAL);
    CHECK_EQ(weft_spin_unlock(NULL), EINVAL);

    weft_spin s;
    memset(&s, 0x3c, sizeof s);
    CHECK_EQ(weft_spin_init(&s), 0);
    CHECK_EQ(weft_spin_unlock(&s), EPERM);
    CHECK_EQ(weft_spin_lock(&s), 0);
    CHECK_EQ(weft_spin_trylock(&s), EBUSY);
    CHECK_EQ(weft_spin_unlock(&s), 0);
    CHECK_EQ(weft_spin_trylock(&s), 0);
    CHECK_EQ(weft_spin_unlock(&s), 0);
    CHECK_EQ(weft_spin_unlock(&s), EPERM);
    /* Many rounds: the ticket counters wrap cleanly through their halves. */
    for (int i = 0; i < 100000; i++) {
        CHECK_EQ(weft_spin_lock(&s), 0);
        CHECK_EQ(weft_spin_unlock(&s), 0);
    }

    int workers = test_affinity_cpus() > 1 ? 0 : 2;
    st_init(workers);
    int n = weft_num_workers();
    weft_thread *u[8];
    pthread_t p;
    p = st_pthread(incr, (void *)1);
    /* At most one spinning user thread per worker beyond the holder: a
     * spinning user thread does not give its worker up. */
    int nu = n < 8 ? n : 8;
    for (int i = 0; i < nu; i++)
        u[i] = st_spawn(incr, NULL);
    for (int i = 0; i < nu; i++)
        st_join(u[i]);
    while (!atomic_load(&plain_done))
        weft_yield();
    CHECK_EQ(pthread_join(p, NULL), 0);
    CHECK_EQ(counter, (long)(nu + 1) * 50000);
    st_finalize();
    printf("sync_spin: ok\n");
    return 0;
}
