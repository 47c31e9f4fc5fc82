/* Tests mltp condition variables: on one virtual processor, signal moves
 * the longest waiter to the tail of the run queue and broadcast all of them
 * in waiting order, behind threads already ready; a signal with no waiter
 * is not remembered; on two virtual processors no wake-up is lost in long
 * ping-pongs between user threads, a bound thread and a plain kernel thread
 * (the waiter queued but not yet parked when the signal comes is the window
 * under test). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <mltp.h>

#include "check.h"
#include "trace.h"

static mltp_lock_t lk;
static mltp_cond_t cv;
static int waiting; /* under lk */

/* Marks its lower-case letter, waits once, marks the upper-case one. */
static void waiter(void *arg)
{
    char c = (char)(intptr_t)arg;
    mltp_lock(&lk);
    mark(c);
    waiting++;
    mltp_cond_wait(&cv, &lk);
    waiting--;
    mark((char)(c - 'a' + 'A'));
    mltp_unlock(&lk);
}

static void once(void *arg)
{
    mark((char)(intptr_t)arg);
}

/* ---- ping-pong on two virtual processors ------------------------------------ */

struct pingpong {
    mltp_lock_t l;
    mltp_cond_t c;
    long rounds; /* set before the players start */
    long turn;   /* under l: even = ping's turn, odd = pong's */
};

static void play(struct pingpong *p, int side)
{
    for (long i = 0; i < p->rounds; i++) {
        mltp_lock(&p->l);
        while ((p->turn & 1) != side)
            mltp_cond_wait(&p->c, &p->l);
        p->turn++;
        mltp_cond_signal(&p->c);
        mltp_unlock(&p->l);
    }
}

static struct pingpong pp[3];

static void ping_user(void *arg)
{
    play(&pp[(intptr_t)arg], 0);
}

static void pong_user(void *arg)
{
    play(&pp[(intptr_t)arg], 1);
}

static void *pong_kernel(void *arg)
{
    play(&pp[(intptr_t)arg], 1);
    return NULL;
}

static void join_it(void *t)
{
    CHECK_EQ(mltp_join(t), 0);
}

int main(void)
{
    CHECK_EQ(mltp_cond_init(NULL), EINVAL);
    mltp_cond_signal(NULL);
    mltp_cond_broadcast(NULL);
    static mltp_cond_t zero = MLTP_COND_INIT;
    mltp_cond_signal(&zero); /* nobody waits: nothing happens */
    mltp_cond_broadcast(&zero);

    CHECK_EQ(mltp_init(1), 0);
    for (int kind = MLTP_LOCK_SPIN; kind <= MLTP_LOCK_YIELD_FRONT; kind++) {
        CHECK_EQ(mltp_lock_init(&lk, kind), 0);
        CHECK_EQ(mltp_cond_init(&cv), 0);
        mltp_thread_t *t[4];
        for (int i = 0; i < 4; i++)
            CHECK((t[i] = mltp_create(waiter, (void *)(intptr_t)('a' + i))) != NULL);
        mltp_yield(); /* a b c d queue on cv in this order */
        CHECK_EQ(waiting, 4);
        mark('1');
        mltp_cond_signal(&cv); /* a to the tail */
        mark('2');
        mltp_yield(); /* A */
        mark('3');
        mltp_thread_t *x = mltp_create(once, (void *)'x'); /* ready before the broadcast */
        CHECK(x != NULL);
        mltp_cond_broadcast(&cv); /* b c d behind x */
        mark('4');
        mltp_yield(); /* x B C D */
        mark('5');
        for (int i = 0; i < 4; i++)
            CHECK_EQ(mltp_join(t[i]), 0);
        CHECK_EQ(mltp_join(x), 0);
        expect("abcd"
               "12A3"
               "4xBCD5");
        CHECK_EQ(waiting, 0);
    }

    /* signals one by one wake in waiting order */
    CHECK_EQ(mltp_lock_init(&lk, MLTP_LOCK_YIELD), 0);
    mltp_thread_t *t[5];
    for (int i = 0; i < 5; i++)
        CHECK((t[i] = mltp_create(waiter, (void *)(intptr_t)('a' + i))) != NULL);
    mltp_yield();
    for (int i = 0; i < 5; i++) {
        mltp_cond_signal(&cv);
        mltp_yield();
    }
    for (int i = 0; i < 5; i++)
        CHECK_EQ(mltp_join(t[i]), 0);
    expect("abcde"
           "ABCDE");

    /* a signal with no waiter is lost: the next waiter waits for the next one */
    mltp_cond_signal(&cv);
    mltp_thread_t *w = mltp_create(waiter, (void *)'a');
    CHECK(w != NULL);
    for (int i = 0; i < 10; i++)
        mltp_yield();
    expect("a");
    mltp_cond_signal(&cv);
    CHECK_EQ(mltp_join(w), 0);
    expect("A");
    CHECK_EQ(mltp_finalize(), 0);

    /* ping-pongs on two virtual processors: user/user with each lock kind,
     * user/bound, user/plain kernel thread */
    CHECK_EQ(mltp_init(2), 0);
    int kinds[3] = { MLTP_LOCK_SPIN, MLTP_LOCK_YIELD, MLTP_LOCK_YIELD_FRONT };
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) {
            CHECK_EQ(mltp_lock_init(&pp[i].l, kinds[(k + i) % 3]), 0);
            CHECK_EQ(mltp_cond_init(&pp[i].c), 0);
            pp[i].turn = 0;
            pp[i].rounds = i == 0 ? 20000 : 2000; /* kernel wake-ups are slow */
        }
        mltp_thread_t *u[5];
        CHECK((u[0] = mltp_create(ping_user, (void *)0)) != NULL);
        CHECK((u[1] = mltp_create(pong_user, (void *)0)) != NULL);
        CHECK((u[2] = mltp_create(ping_user, (void *)1)) != NULL);
        mltp_thread_t *bt = mltp_create_bound(pong_kernel, (void *)1, 0, NULL);
        CHECK(bt != NULL);
        CHECK((u[3] = mltp_create(join_it, bt)) != NULL); /* see mltp_wake_initial */
        CHECK((u[4] = mltp_create(ping_user, (void *)2)) != NULL);
        pthread_t pt;
        CHECK_EQ(pthread_create(&pt, NULL, pong_kernel, (void *)2), 0);
        for (int i = 0; i < 5; i++)
            CHECK_EQ(mltp_join(u[i]), 0);
        CHECK_EQ(pthread_join(pt, NULL), 0);
        for (int i = 0; i < 3; i++)
            CHECK_EQ(pp[i].turn, 2 * pp[i].rounds);
    }
    CHECK_EQ(mltp_finalize(), 0);
    printf("mltp_cond: ok\n");
    return 0;
}
