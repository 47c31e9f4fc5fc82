/* sleep_many: 200 threads asleep at once (nanosleep, clock_nanosleep
 * relative and absolute, usleep, sleep) each sleep at least as asked;
 * under the drop-in they hold no kernel thread each (/proc/self/task at
 * most 2 x CPUs + 16; natively one each, not checked). */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static void *run(void *arg)
{
    int i = (int)(intptr_t)arg;
    double t0 = pt_now_s(CLOCK_MONOTONIC);
    struct timespec d = { 0, 400 * 1000 * 1000 }, rem;
    switch (i % 5) {
    case 0: CHECK(nanosleep(&d, &rem) == 0); break;
    case 1: CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL) == 0); break;
    case 2: {
        struct timespec abs = pt_deadline_ns(CLOCK_REALTIME, d.tv_nsec);
        CHECK(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, NULL) == 0);
        break;
    }
    case 3: CHECK(usleep(400 * 1000) == 0); break;
    default: CHECK(sleep(1) == 0); break;
    }
    CHECK(pt_now_s(CLOCK_MONOTONIC) - t0 >= 0.39);
    return NULL;
}

int main(void)
{
    int n = pt_dropin() ? 200 : 50;
    pthread_t t[200];
    struct timespec bad = { 0, 1000000000 };
    CHECK(nanosleep(&bad, NULL) == -1);
    for (int i = 0; i < n; i++)
        CHECK(pthread_create(&t[i], NULL, run, (void *)(intptr_t)i) == 0);
    usleep(200 * 1000);
    pt_check_few_tasks(pt_tasks(), "sleepers");
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    return 0;
}
