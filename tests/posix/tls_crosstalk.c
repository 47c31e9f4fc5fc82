/* tls_crosstalk: 64 threads x 2,000 yields, each checking after every
 * yield that its __thread variables, errno and pthread_self are its own:
 * zero cross-talk between threads that share workers. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "pcheck.h"

enum { NT = 64, YIELDS = 2000 };
static __thread uintptr_t mine;
static __thread char pad[256];
static _Atomic long bad;

static void *run(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    pthread_t self = pthread_self();
    mine = id;
    pad[id % sizeof pad] = (char)id;
    for (int i = 0; i < YIELDS; i++) {
        errno = (int)(id * 7 + (uintptr_t)i);
        sched_yield();
        if (mine != id || errno != (int)(id * 7 + (uintptr_t)i) ||
            pad[id % sizeof pad] != (char)id || !pthread_equal(self, pthread_self()))
            bad++;
        mine = id;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (uintptr_t i = 0; i < NT; i++)
        CHECK(pthread_create(&t[i], NULL, run, (void *)(i + 1)) == 0);
    for (int i = 0; i < NT; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(bad == 0);
    printf("ok\n");
    return 0;
}
