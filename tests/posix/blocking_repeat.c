/* blocking_repeat: a thread waits in poll 300 times (each wait hands its
 * worker to another kernel thread and takes it back, or has it taken
 * back) while another thread keeps yielding, and the initial thread does
 * the same: the worker moves between kernel threads all the time, and
 * every thread keeps its own thread-locals. */
#define _GNU_SOURCE 1
#include <poll.h>
#include <pthread.h>
#include <stdint.h>

#include "pcheck.h"

static _Atomic int stop;
static __thread intptr_t mine;

static void *spin(void *arg)
{
    mine = (intptr_t)arg;
    while (!stop) {
        sched_yield();
        CHECK(mine == (intptr_t)arg);
    }
    return NULL;
}

static void *poller(void *arg)
{
    mine = (intptr_t)arg;
    for (int i = 0; i < 300; i++) {
        poll(NULL, 0, 1);
        CHECK(mine == (intptr_t)arg);
    }
    return NULL;
}

int main(void)
{
    mine = 1;
    pthread_t s, p;
    CHECK(pthread_create(&s, NULL, spin, (void *)2) == 0);
    CHECK(pthread_create(&p, NULL, poller, (void *)3) == 0);
    for (int i = 0; i < 100; i++) {
        poll(NULL, 0, 1);
        CHECK(mine == 1);
    }
    CHECK(pthread_join(p, NULL) == 0);
    stop = 1;
    CHECK(pthread_join(s, NULL) == 0);
    printf("ok\n");
    return 0;
}
