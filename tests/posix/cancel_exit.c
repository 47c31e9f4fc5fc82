/* cancel_exit: pthread_exit runs the cleanup handlers innermost first and
 * then the key destructors; deferred cancellation acts at
 * pthread_testcancel and is held off while disabled. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "pcheck.h"

static int order[8], norder;
static pthread_key_t key;

static void cleanup(void *arg)
{
    order[norder++] = (int)(intptr_t)arg;
}
static void key_dtor(void *v)
{
    order[norder++] = (int)(intptr_t)v;
}

static void *exiter(void *arg)
{
    (void)arg;
    pthread_setspecific(key, (void *)9);
    pthread_cleanup_push(cleanup, (void *)1);
    pthread_cleanup_push(cleanup, (void *)2);
    pthread_cleanup_pop(1); /* runs 2 now */
    pthread_cleanup_push(cleanup, (void *)3);
    pthread_exit((void *)77);
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

static _Atomic int started;
static void *cancellee(void *arg)
{
    (void)arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    started = 1;
    while (started != 2)
        sched_yield();
    pthread_testcancel(); /* disabled: nothing */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    for (;;) {
        pthread_testcancel();
        sched_yield();
    }
    return NULL;
}

int main(void)
{
    CHECK(pthread_key_create(&key, key_dtor) == 0);
    pthread_t t;
    void *r;
    CHECK(pthread_create(&t, NULL, exiter, NULL) == 0);
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == (void *)77);
    CHECK(norder == 4);
    CHECK(order[0] == 2 && order[1] == 3 && order[2] == 1 && order[3] == 9);

    CHECK(pthread_create(&t, NULL, cancellee, NULL) == 0);
    while (!started)
        sched_yield();
    CHECK(pthread_cancel(t) == 0);
    started = 2;
    CHECK(pthread_join(t, &r) == 0);
    CHECK(r == PTHREAD_CANCELED);
    printf("ok\n");
    return 0;
}
