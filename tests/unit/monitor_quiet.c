/* The monitor sleeps while nothing waits for it (issue 24, item 11): on 2
 * workers, the initial thread sits in a raw nanosleep (holding worker 0
 * blocked in the kernel) and worker 1 sleeps, with no thread ready. The
 * monitor's looks over 1 s are counted (weft__monitor_looks): its 16 ms
 * back-off took about 60, the quiet sleep a few (the bound, 20, is loose).
 * Then threads made ready wake it: three spinners that call nothing on
 * those 2 workers all progress, which needs quantum preemptions. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "policy/monitor.h"
#include "testutil.h"
#include "weft.h"

#define NSPIN  3
#define ROUNDS 20

static atomic_int progress[NSPIN];

static void raw_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ; /* EINTR from a preemption signal (signal(7)): sleep the rest */
}

static int all_reached(int n)
{
    for (int i = 0; i < NSPIN; i++)
        if (atomic_load_explicit(&progress[i], memory_order_relaxed) < n)
            return 0;
    return 1;
}

static void *spin_nothing(void *arg)
{
    int me = (int)(intptr_t)arg;
    volatile uint64_t x = 0;
    for (int r = 1; r <= ROUNDS; r++) {
        for (int k = 0; k < 20000; k++)
            x++;
        atomic_store_explicit(&progress[me], r, memory_order_relaxed);
    }
    while (!all_reached(ROUNDS))
        x++; /* only another thread's progress ends this loop */
    return NULL;
}

static int preemption_possible(void)
{
#if defined(__SANITIZE_THREAD__)
    return 0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return 0;
#endif
#endif
    return 1;
}

int main(void)
{
    alarm(120);
    test_clear_env();
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2;
    cfg.quantum_us = 1000;
    CHECK_EQ(weft_init(&cfg), 0);

    raw_sleep_ms(200); /* worker 1 reaches its sleep, the monitor its back-off */
    uint64_t l0 = atomic_load(&weft__monitor_looks);
    raw_sleep_ms(1000);
    uint64_t looks = atomic_load(&weft__monitor_looks) - l0;
    if (looks > 20) {
        fprintf(stderr, "monitor looked %llu times in 1 s of quiet\n", (unsigned long long)looks);
        CHECK(looks <= 20);
    }

    if (preemption_possible()) {
        weft_thread *t[NSPIN];
        for (int i = 0; i < NSPIN; i++)
            CHECK_EQ(weft_spawn(&t[i], spin_nothing, (void *)(intptr_t)i, NULL), 0);
        for (int i = 0; i < NSPIN; i++)
            CHECK_EQ(weft_join(t[i], NULL), 0);
    }
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
