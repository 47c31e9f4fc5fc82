/* Tests the seed's scheduling order under mltp_init(1), exactly: created
 * threads wait at the tail in creation order (from the initial thread, from
 * user threads and from a plain kernel thread), mltp_yield goes to the tail,
 * mltp_yield_to_first to the head, the initial thread takes its turns in the
 * same queue, and a joiner resumes when the joined thread ends. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <mltp.h>

#include "check.h"
#include "trace.h"

/* Marks its letter three times, yielding to the tail after each. */
static void looper(void *arg)
{
    char c = (char)(intptr_t)arg;
    for (int i = 0; i < 3; i++) {
        mark(c);
        mltp_yield();
    }
}

/* Marks F, yields to the head, marks f. */
static void fronter(void *arg)
{
    (void)arg;
    mark('F');
    mltp_yield_to_first();
    mark('f');
}

static void once(void *arg)
{
    mark((char)(intptr_t)arg);
}

/* Creates two threads (they queue behind everything ready), then yields. */
static void parent(void *arg)
{
    (void)arg;
    mark('P');
    CHECK(mltp_create(once, (void *)'q') != NULL);
    CHECK(mltp_create(once, (void *)'r') != NULL);
    mark('p');
    mltp_yield();
    mark('P');
}

static void *outsider(void *arg)
{
    (void)arg;
    CHECK(mltp_create(once, (void *)'k') != NULL);
    return NULL;
}

int main(void)
{
    CHECK_EQ(mltp_init(1), 0);
    CHECK_EQ(weft_num_workers(), 1);

    /* creation order, tail yields, the initial thread in the queue */
    mltp_thread_t *a = mltp_create(looper, (void *)'A');
    mltp_thread_t *b = mltp_create(looper, (void *)'B');
    mltp_thread_t *c = mltp_create(looper, (void *)'C');
    CHECK(a && b && c);
    CHECK_EQ(tn, 0); /* created threads do not run at once */
    mark('m');
    mltp_yield(); /* A B C run once each, then the initial thread */
    mark('m');
    mltp_yield();
    mark('m');
    CHECK_EQ(mltp_join(a), 0);
    CHECK_EQ(mltp_join(b), 0);
    CHECK_EQ(mltp_join(c), 0);
    expect("mABCmABCmABC");

    /* yield to the head: F lets X run, then runs again before Y */
    mltp_thread_t *f = mltp_create(fronter, NULL);
    mltp_thread_t *x = mltp_create(looper, (void *)'X');
    mltp_thread_t *y = mltp_create(looper, (void *)'Y');
    CHECK(f && x && y);
    CHECK_EQ(mltp_join(f), 0); /* F ends: the joiner runs at once */
    mark('m');
    CHECK_EQ(mltp_join(x), 0);
    CHECK_EQ(mltp_join(y), 0);
    expect("FXfmYXYXY");

    /* the initial thread yields to the head */
    a = mltp_create(looper, (void *)'A');
    b = mltp_create(looper, (void *)'B');
    mark('m');
    mltp_yield_to_first(); /* A runs, then the initial thread again */
    mark('m');
    mltp_yield(); /* B, A, then the initial thread */
    mark('m');
    CHECK_EQ(mltp_join(a), 0);
    CHECK_EQ(mltp_join(b), 0);
    expect("mAmBAmBAB");

    /* a user thread's creations queue behind what is already ready */
    mltp_thread_t *p = mltp_create(parent, NULL);
    x = mltp_create(once, (void *)'x');
    CHECK(p && x);
    mltp_yield(); /* P (creating q, r behind the initial thread), x, main */
    mark('m');
    mltp_yield(); /* q, r, P again, main */
    mark('m');
    CHECK_EQ(mltp_join(p), 0);
    CHECK_EQ(mltp_join(x), 0);
    expect("Ppxm"
           "qrPm");

    /* a plain kernel thread's creation queues too */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, outsider, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    while (tn == 0)
        mltp_yield();
    expect("k");

    /* finalize waits for threads nobody joins */
    for (int i = 0; i < 5; i++)
        CHECK(mltp_create(looper, (void *)(intptr_t)('0' + i)) != NULL);
    CHECK_EQ(mltp_finalize(), 0);
    expect("012340123401234");
    printf("mltp_order: ok\n");
    return 0;
}
