/* Tests mltp barriers: on one virtual processor the exact order of an
 * episode (the last arriver goes on, the others resume in arrival order),
 * episodes following one another on the same barrier, the initial thread
 * taking part, count 1; on two virtual processors many episodes among user
 * threads, a bound thread and a plain kernel thread, none of which may leave
 * an episode early; init rejects bad arguments. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <mltp.h>

#include "check.h"
#include "trace.h"

static mltp_barrier_t bar;

/* Three episodes: marks its letter before each. */
static void three_episodes(void *arg)
{
    for (int e = 0; e < 3; e++) {
        mark((char)(intptr_t)arg);
        mltp_barrier(&bar);
    }
}

static void before_after(void *arg)
{
    char c = (char)(intptr_t)arg;
    mark(c);
    mltp_barrier(&bar);
    mark((char)(c - 'a' + 'A'));
}

/* ---- many episodes, mixed kinds of threads --------------------------------- */

enum { NU = 5, EPISODES = 2000 };
enum { NPART = NU + 2 }; /* user threads, one bound thread, one pthread */
static atomic_int slot[NPART];

/* After episode e, every participant has written e (it arrived) and none
 * has written more than e + 1 (it cannot pass the next episode without us). */
static void episodes(int me)
{
    for (int e = 1; e <= EPISODES; e++) {
        atomic_store(&slot[me], e);
        if (e % 7 == me)
            mltp_yield();
        mltp_barrier(&bar);
        for (int j = 0; j < NPART; j++) {
            int v = atomic_load(&slot[j]);
            if (v != e && v != e + 1) {
                fprintf(stderr, "episode %d: participant %d at %d\n", e, j, v);
                CHECK(!"left an episode early");
            }
        }
    }
}

/* for a bound thread and a plain pthread alike */
static void *episodes_kthread(void *arg)
{
    episodes((int)(intptr_t)arg);
    return NULL;
}

static void episodes_user(void *arg)
{
    (void)episodes_kthread(arg);
}

static void join_it(void *t)
{
    CHECK_EQ(mltp_join(t), 0);
}

int main(void)
{
    CHECK_EQ(mltp_barrier_init(NULL, 2), EINVAL);
    CHECK_EQ(mltp_barrier_init(&bar, 0), EINVAL);
    CHECK_EQ(mltp_barrier_init(&bar, -3), EINVAL);
    mltp_barrier(NULL);

    CHECK_EQ(mltp_init(1), 0);

    /* The last arriver of each episode goes on, so it is the first to
     * arrive at the next; the others resume in their arrival order. */
    CHECK_EQ(mltp_barrier_init(&bar, 3), 0);
    mltp_thread_t *a = mltp_create(three_episodes, (void *)'A');
    mltp_thread_t *b = mltp_create(three_episodes, (void *)'B');
    mltp_thread_t *c = mltp_create(three_episodes, (void *)'C');
    CHECK(a && b && c);
    CHECK_EQ(mltp_join(a), 0);
    CHECK_EQ(mltp_join(b), 0);
    CHECK_EQ(mltp_join(c), 0);
    expect("ABC"
           "CAB"
           "BCA");

    /* The initial thread takes part, woken by a user thread; a woken thread
     * queues behind the ready ones. */
    CHECK_EQ(mltp_barrier_init(&bar, 2), 0);
    a = mltp_create(before_after, (void *)'a');
    b = mltp_create(before_after, (void *)'b');
    CHECK(a && b);
    mark('m');
    mltp_barrier(&bar); /* waits; a is last and readies it behind b */
    mark('M');
    mltp_barrier(&bar); /* b waits already: the initial thread is last */
    mark('N');
    mltp_yield();
    mark('n');
    CHECK_EQ(mltp_join(a), 0);
    CHECK_EQ(mltp_join(b), 0);
    expect("maAbMNBn");

    /* count 1: never waits */
    CHECK_EQ(mltp_barrier_init(&bar, 1), 0);
    for (int i = 0; i < 3; i++)
        mltp_barrier(&bar);
    CHECK_EQ(mltp_finalize(), 0);

    /* many episodes on two virtual processors */
    CHECK_EQ(mltp_init(2), 0);
    CHECK_EQ(mltp_barrier_init(&bar, NPART), 0);
    mltp_thread_t *t[NU];
    for (int i = 0; i < NU; i++)
        CHECK((t[i] = mltp_create(episodes_user, (void *)(intptr_t)i)) != NULL);
    mltp_thread_t *bt = mltp_create_bound(episodes_kthread, (void *)(intptr_t)NU, 0, NULL);
    CHECK(bt != NULL);
    mltp_thread_t *jb = mltp_create(join_it, bt); /* see mltp_wake_initial */
    CHECK(jb != NULL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, episodes_kthread, (void *)(intptr_t)(NU + 1)), 0);
    for (int i = 0; i < NU; i++)
        CHECK_EQ(mltp_join(t[i]), 0);
    CHECK_EQ(mltp_join(jb), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    for (int j = 0; j < NPART; j++)
        CHECK_EQ(atomic_load(&slot[j]), EPISODES);
    CHECK_EQ(mltp_finalize(), 0);
    printf("mltp_barrier: ok\n");
    return 0;
}
