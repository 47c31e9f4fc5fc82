/* Tests weft_barrier against the SPEC: EINVAL on NULL, on count 0 and on a
 * zero (never initialised) barrier, count 1 makes every caller the serial
 * thread, exactly one waiter per episode gets WEFT_BARRIER_SERIAL_THREAD and
 * the others 0, nobody leaves an episode before everybody arrived, episodes
 * follow one another on the same object, user threads and plain threads
 * meet on one barrier, destroy with waiters is EBUSY, and a waiting user
 * thread frees its worker. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static void errors(void)
{
    weft_barrier b;
    CHECK_EQ(weft_barrier_init(NULL, 2), EINVAL);
    CHECK_EQ(weft_barrier_init(&b, 0), EINVAL);
    CHECK_EQ(weft_barrier_wait(NULL), EINVAL);
    CHECK_EQ(weft_barrier_destroy(NULL), EINVAL);
    weft_barrier zero;
    memset(&zero, 0, sizeof zero);
    CHECK_EQ(weft_barrier_wait(&zero), EINVAL); /* count 0 */
    CHECK_EQ(weft_barrier_init(&b, 1), 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ(weft_barrier_wait(&b), WEFT_BARRIER_SERIAL_THREAD);
    CHECK_EQ(weft_barrier_destroy(&b), 0);
}

/* ---- episodes -------------------------------------------------------------------- */

#define EP_USERS 5
#define EP_PLAIN 2
#define EP_N     (EP_USERS + EP_PLAIN)
#define EPISODES 300

static weft_barrier eb;
static atomic_int arrived[EPISODES];
static atomic_int serial[EPISODES];
static atomic_int plain_done;

static void *participant(void *arg)
{
    for (int e = 0; e < EPISODES; e++) {
        atomic_fetch_add(&arrived[e], 1);
        int r = weft_barrier_wait(&eb);
        CHECK(r == 0 || r == WEFT_BARRIER_SERIAL_THREAD);
        if (r == WEFT_BARRIER_SERIAL_THREAD)
            atomic_fetch_add(&serial[e], 1);
        /* Everybody arrived before anybody left. */
        CHECK_EQ(atomic_load(&arrived[e]), EP_N);
    }
    st_plain_done(&plain_done);
    return NULL;
}

static void episodes(void)
{
    memset(arrived, 0, sizeof arrived);
    memset(serial, 0, sizeof serial);
    atomic_store(&plain_done, 0);
    CHECK_EQ(weft_barrier_init(&eb, EP_N), 0);
    weft_thread *u[EP_USERS];
    pthread_t p[EP_PLAIN];
    st_pthreads(p, EP_PLAIN, participant, 0, 0);
    st_spawns(u, EP_USERS, participant, 0, 0);
    st_join_mixed(u, EP_USERS, p, EP_PLAIN, &plain_done);
    st_check_all_one(serial, EPISODES);
    CHECK_EQ(weft_barrier_destroy(&eb), 0);
}

/* ---- destroy with waiters; the worker stays free (one worker) ------------------- */

static weft_barrier db;
static atomic_int bystander_ran;

static void *one_waiter(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)weft_barrier_wait(&db);
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void busy(void)
{
    CHECK_EQ(weft_barrier_init(&db, 2), 0);
    weft_thread *w = st_spawn(one_waiter, NULL);
    st_yield_ms(10);
    CHECK_EQ(weft_barrier_destroy(&db), EBUSY);
    st_join(st_spawn(bystander, NULL));
    CHECK(atomic_load(&bystander_ran));
    int mine = weft_barrier_wait(&db);
    int theirs = (int)(intptr_t)st_join(w);
    CHECK_EQ(mine + theirs, WEFT_BARRIER_SERIAL_THREAD);
    CHECK_EQ(weft_barrier_destroy(&db), 0);
}

int main(void)
{
    st_watchdog(60);
    st_init(1);
    errors();
    busy();
    episodes();
    st_finalize();

    st_init(test_affinity_cpus() > 1 ? 0 : 2);
    errors();
    episodes();
    st_finalize();

    st_init(3);
    episodes();
    st_finalize();
    printf("sync_barrier: ok\n");
    return 0;
}
