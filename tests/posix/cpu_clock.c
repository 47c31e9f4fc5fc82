/* cpu_clock: pthread_getcpuclockid gives a clock that clock_gettime reads
 * as the thread's own CPU time: a thread that spins ~200 ms shows about
 * that much, although it shares its kernel thread with others. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static double now(clockid_t c)
{
    struct timespec ts;
    CHECK(clock_gettime(c, &ts) == 0);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Atomic int stop;
static void *spin(void *arg)
{
    (void)arg;
    double t0 = now(CLOCK_THREAD_CPUTIME_ID);
    while (now(CLOCK_THREAD_CPUTIME_ID) - t0 < 0.2)
        ;
    while (!stop)
        usleep(1000);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, spin, NULL) == 0);
    clockid_t c;
    CHECK(pthread_getcpuclockid(t, &c) == 0);
    double t0 = now(CLOCK_MONOTONIC);
    while (now(c) < 0.15)
        CHECK(now(CLOCK_MONOTONIC) - t0 < 60); /* a loaded machine is slow, not this slow */
    struct timespec res;
    CHECK(clock_getres(c, &res) == 0);
    stop = 1;
    CHECK(pthread_join(t, NULL) == 0);
    printf("ok\n");
    return 0;
}
