/* cancel_cleanup_wait.c: a cancelled thread's cleanup handler waits on a
 * condition variable, and a second pthread_cancel reaches it there (glibc
 * ignores it: the thread is acting on cancellation already). The wait
 * must still end when it is signalled, the thread be joined as
 * cancelled, and the condition variable be destroyed. Under the drop-in
 * the broken-off wait counted itself out twice, the cleanup's next wait
 * counted itself back to zero waiters, the broadcast saw none, and the
 * thread (and its joiner) waited for ever. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "pcheck.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c;
static int go;
static atomic_int in_cleanup;

static void cleanup(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    atomic_store(&in_cleanup, 1);
    while (!go)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
}

static void *victim(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    for (;;) {
        pthread_testcancel();
        usleep(1000);
    }
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    /* ThreadSanitizer: a thread cancelled inside an intercepted call (its
     * usleep) keeps that interceptor's ignores, and the cleanup's locked
     * reads look unsynchronised to it */
    return 77;
#endif
    for (int round = 0; round < 20; round++) {
        CHECK(pthread_cond_init(&c, NULL) == 0);
        go = 0;
        atomic_store(&in_cleanup, 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, victim, NULL) == 0);
        CHECK(pthread_cancel(t) == 0);
        while (!atomic_load(&in_cleanup))
            usleep(100);
        usleep(2000); /* let it park in the cleanup's wait */
        CHECK(pthread_cancel(t) == 0);
        usleep(2000);
        pthread_mutex_lock(&m);
        go = 1;
        pthread_cond_broadcast(&c);
        pthread_mutex_unlock(&m);
        void *res;
        CHECK(pthread_join(t, &res) == 0);
        CHECK(res == PTHREAD_CANCELED);
        CHECK(pthread_cond_destroy(&c) == 0);
    }
    puts("ok");
    return 0;
}
