/* cancel_wait: a thread cancelled while blocked in pthread_cond_wait
 * leaves it with the mutex held and runs its cleanup handler (which
 * unlocks it); one blocked in sem_wait is cancelled too. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include "pcheck.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static _Atomic int cleaned, waiting;

static void unlock_it(void *arg)
{
    CHECK(pthread_mutex_trylock(arg) != 0); /* held: by us */
    cleaned++;
    pthread_mutex_unlock(arg);
}

static void *cond_waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock_it, &m);
    waiting = 1;
    for (;;)
        pthread_cond_wait(&c, &m);
    pthread_cleanup_pop(1);
    return NULL;
}

static void *sem_waiter(void *arg)
{
    (void)arg;
    waiting = 2;
    for (;;)
        sem_wait(&sem);
    return NULL;
}

/* Runs fn in a thread, cancels it once it says it waits (stage) and
 * returns what joining it gives. */
static void *cancel_waiting(void *(*fn)(void *), int stage)
{
    pthread_t t;
    void *r;
    CHECK(pthread_create(&t, NULL, fn, NULL) == 0);
    while (waiting != stage)
        sched_yield();
    usleep(10000);
    CHECK(pthread_cancel(t) == 0);
    CHECK(pthread_join(t, &r) == 0);
    return r;
}

int main(void)
{
    CHECK(sem_init(&sem, 0, 0) == 0);
    CHECK(cancel_waiting(cond_waiter, 1) == PTHREAD_CANCELED && cleaned == 1);
    CHECK(pthread_mutex_lock(&m) == 0); /* the handler unlocked it */
    CHECK(pthread_mutex_unlock(&m) == 0);
    CHECK(cancel_waiting(sem_waiter, 2) == PTHREAD_CANCELED);
    printf("ok\n");
    return 0;
}
