/* cancel_join: pthread_join is a cancellation point; a joiner cancelled
 * while it waits for a thread that still runs ends (its cleanup handler
 * runs), and that thread stays joinable: another thread joins it and gets
 * its result (LTP's pthread_join/4-1). */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <unistd.h>

#include "pcheck.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int joining, cleaned;

static void *blocked(void *arg)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

static void joiner_cleanup(void *arg)
{
    (void)arg;
    cleaned++;
}

static void *joiner(void *arg)
{
    pthread_cleanup_push(joiner_cleanup, NULL);
    joining = 1;
    pthread_join(*(pthread_t *)arg, NULL);
    pthread_cleanup_pop(0);
    return NULL; /* not cancelled: the caller's check fails */
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77; /* ThreadSanitizer's pthread_join never ends its ignores when cancelled */
#endif
    alarm(60); /* a joiner that cannot be cancelled hangs: end the test */
    for (int i = 0; i < 20; i++) {
        pthread_t t, j;
        void *r;
        joining = 0;
        CHECK(pthread_mutex_lock(&m) == 0);
        CHECK(pthread_create(&t, NULL, blocked, (void *)(intptr_t)(i + 1)) == 0);
        CHECK(pthread_create(&j, NULL, joiner, &t) == 0);
        while (!joining)
            sched_yield();
        if (i % 2)
            usleep(2000); /* in its wait; else perhaps just before it */
        CHECK(pthread_cancel(j) == 0);
        CHECK(pthread_join(j, &r) == 0);
        CHECK(r == PTHREAD_CANCELED);
        CHECK(cleaned == i + 1);
        CHECK(pthread_mutex_unlock(&m) == 0);
        CHECK(pthread_join(t, &r) == 0); /* still joinable */
        CHECK(r == (void *)(intptr_t)(i + 1));
    }
    printf("ok\n");
    return 0;
}
