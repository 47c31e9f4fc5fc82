/* lock_before_start: the initial thread takes locks before it makes its
 * first thread (the drop-in starts the runtime then, and the initial
 * thread becomes a user thread) and waits, relocks and unlocks them after:
 * node and libuv do this. */
#define _GNU_SOURCE 1
#include <pthread.h>

#include "pcheck.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int started;

static void *child(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&held); /* waits for the initial thread's unlock */
    pthread_mutex_unlock(&held);
    pt_set_signal(&m, &c, &started);
    return NULL;
}

int main(void)
{
    CHECK(pthread_mutex_lock(&m) == 0);
    CHECK(pthread_mutex_lock(&rec) == 0);
    CHECK(pthread_mutex_lock(&held) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, child, NULL) == 0);
    CHECK(pthread_mutex_unlock(&held) == 0);
    CHECK(pthread_mutex_lock(&rec) == 0); /* recursive: still ours */
    CHECK(pthread_mutex_unlock(&rec) == 0);
    CHECK(pthread_mutex_unlock(&rec) == 0);
    while (!started)
        CHECK(pthread_cond_wait(&c, &m) == 0);
    CHECK(pthread_mutex_unlock(&m) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    printf("ok\n");
    return 0;
}
