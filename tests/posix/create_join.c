/* create_join: threads made with pthread_create run, return a result to
 * pthread_join, see their own __thread variables and errno, and detached
 * threads end on their own. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcheck.h"

static __thread int tl = 42;
static __thread char tl_buf[64];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int detached_done;

static void *child(void *arg)
{
    intptr_t i = (intptr_t)arg;
    CHECK(tl == 42); /* the initial image, not the parent's value */
    tl = (int)i;
    snprintf(tl_buf, sizeof tl_buf, "thread %d", (int)i);
    errno = (int)i + 1000;
    sched_yield();
    CHECK(tl == (int)i);
    CHECK(errno == (int)i + 1000);
    char want[64];
    snprintf(want, sizeof want, "thread %d", (int)i);
    CHECK(strcmp(tl_buf, want) == 0);
    CHECK(pthread_equal(pthread_self(), pthread_self()));
    return (void *)(i * 2);
}

static void *detached(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    detached_done++;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    tl = 7;
    enum { N = 100 };
    pthread_t t[N];
    for (intptr_t i = 0; i < N; i++)
        CHECK(pthread_create(&t[i], NULL, child, (void *)i) == 0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            CHECK(!pthread_equal(t[i], t[j]));
    for (intptr_t i = 0; i < N; i++) {
        void *r;
        CHECK(pthread_join(t[i], &r) == 0);
        CHECK((intptr_t)r == i * 2);
    }
    CHECK(tl == 7);
    pthread_attr_t a;
    CHECK(pthread_attr_init(&a) == 0);
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0);
    for (int i = 0; i < 10; i++) {
        pthread_t d;
        CHECK(pthread_create(&d, &a, detached, NULL) == 0);
    }
    pthread_attr_destroy(&a);
    for (int spins = 0;; spins++) {
        pthread_mutex_lock(&m);
        int n = detached_done;
        pthread_mutex_unlock(&m);
        if (n == 10)
            break;
        CHECK(spins < 10000);
        usleep(1000);
    }
    /* a detached thread's own pthread_detach, and a late detach */
    pthread_t x;
    CHECK(pthread_create(&x, NULL, detached, NULL) == 0);
    CHECK(pthread_detach(x) == 0);
    printf("ok\n");
    return 0;
}
