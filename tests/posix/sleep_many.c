/* sleep_many: 200 threads asleep at once (nanosleep, clock_nanosleep
 * relative and absolute, usleep, sleep) each sleep at least as asked;
 * under the drop-in they hold no kernel thread each (/proc/self/task at
 * most 2 x CPUs + 16; natively one each, not checked). */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
    int i = (int)(intptr_t)arg;
    double t0 = now_s(CLOCK_MONOTONIC);
    struct timespec d = { 0, 400 * 1000 * 1000 }, rem;
    switch (i % 5) {
    case 0: CHECK(nanosleep(&d, &rem) == 0); break;
    case 1: CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL) == 0); break;
    case 2: {
        struct timespec abs;
        clock_gettime(CLOCK_REALTIME, &abs);
        abs.tv_nsec += d.tv_nsec;
        if (abs.tv_nsec >= 1000000000) {
            abs.tv_sec++;
            abs.tv_nsec -= 1000000000;
        }
        CHECK(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, NULL) == 0);
        break;
    }
    case 3: CHECK(usleep(400 * 1000) == 0); break;
    default: CHECK(sleep(1) == 0); break;
    }
    CHECK(now_s(CLOCK_MONOTONIC) - t0 >= 0.39);
    return NULL;
}

int main(void)
{
    int n = getenv("WEFT_POSIX_TEST_DROPIN") ? 200 : 50;
    pthread_t t[200];
    struct timespec bad = { 0, 1000000000 };
    CHECK(nanosleep(&bad, NULL) == -1);
    for (int i = 0; i < n; i++)
        CHECK(pthread_create(&t[i], NULL, run, (void *)(intptr_t)i) == 0);
    usleep(200 * 1000);
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        k += e->d_name[0] != '.';
    closedir(d);
    if (getenv("WEFT_POSIX_TEST_DROPIN")) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (k > 2 * cpus + 16)
            fprintf(stderr, "%d kernel threads for %d sleepers\n", k, n);
        CHECK(k <= 2 * cpus + 16);
    }
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    return 0;
}
