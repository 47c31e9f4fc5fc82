/* Tests that all-zero storage is an initialised object of every sync type:
 * global objects with the static initialisers (and zeroed heap memory) work
 * from plain threads before weft_init, from user threads while the runtime
 * runs, and from plain threads again after weft_finalize. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static weft_mutex gm = WEFT_MUTEX_INIT;
static weft_cond gc = WEFT_COND_INIT;
static weft_rwlock gl = WEFT_RWLOCK_INIT;
static weft_spin gs = WEFT_SPIN_INIT;
static weft_sem gsem; /* zero: value 0 */

struct objs {
    weft_mutex m;
    weft_cond c;
    weft_rwlock l;
    weft_spin s;
    weft_sem sem;
};

static int flag; /* under gm */

static void *partner(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&gsem), 0);
    CHECK_EQ(weft_mutex_lock(&gm), 0);
    flag = 1;
    CHECK_EQ(weft_cond_signal(&gc), 0);
    CHECK_EQ(weft_mutex_unlock(&gm), 0);
    CHECK_EQ(weft_rwlock_wrlock(&gl), 0);
    CHECK_EQ(weft_spin_lock(&gs), 0);
    CHECK_EQ(weft_spin_unlock(&gs), 0);
    CHECK_EQ(weft_rwlock_unlock(&gl), 0);
    return NULL;
}

/* One round on the globals between the calling thread and a partner of the
 * given kind (0: pthread, 1: user thread). */
static void round_trip(int user)
{
    pthread_t p;
    weft_thread *u = NULL;
    flag = 0;
    if (user)
        u = st_spawn(partner, NULL);
    else
        p = st_pthread(partner, NULL);
    CHECK_EQ(weft_sem_post(&gsem), 0);
    CHECK_EQ(weft_mutex_lock(&gm), 0);
    while (!flag)
        CHECK_EQ(weft_cond_wait(&gc, &gm), 0);
    CHECK_EQ(weft_mutex_unlock(&gm), 0);
    if (user)
        st_join(u);
    else
        CHECK_EQ(pthread_join(p, NULL), 0);
    CHECK_EQ(weft_rwlock_rdlock(&gl), 0);
    CHECK_EQ(weft_rwlock_unlock(&gl), 0);
}

static void zeroed(void)
{
    struct objs *o = calloc(1, sizeof *o);
    CHECK(o != NULL);
    CHECK_EQ(weft_mutex_lock(&o->m), 0);
    struct timespec ts = st_deadline_ms(5);
    CHECK_EQ(weft_cond_timedwait(&o->c, &o->m, &ts), ETIMEDOUT);
    CHECK_EQ(weft_mutex_unlock(&o->m), 0);
    CHECK_EQ(weft_rwlock_rdlock(&o->l), 0);
    CHECK_EQ(weft_rwlock_unlock(&o->l), 0);
    CHECK_EQ(weft_spin_trylock(&o->s), 0);
    CHECK_EQ(weft_spin_unlock(&o->s), 0);
    CHECK_EQ(weft_sem_trywait(&o->sem), EAGAIN);
    CHECK_EQ(weft_mutex_destroy(&o->m), 0);
    CHECK_EQ(weft_cond_destroy(&o->c), 0);
    CHECK_EQ(weft_rwlock_destroy(&o->l), 0);
    CHECK_EQ(weft_sem_destroy(&o->sem), 0);
    free(o);
}

int main(void)
{
    st_watchdog(60);
    CHECK_EQ(weft_num_workers(), 0);
    round_trip(0);
    zeroed();

    st_init(2);
    round_trip(1);
    round_trip(0);
    zeroed();
    st_finalize();

    round_trip(0);
    zeroed();
    printf("sync_static: ok\n");
    return 0;
}
