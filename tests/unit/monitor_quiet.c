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

#define PT_ROUNDS 20
#include "preempt_test.h"

static void raw_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ; /* EINTR from a preemption signal (signal(7)): sleep the rest */
}

int main(void)
{
    alarm(120);
    test_clear_env();
    test_init_quantum(2, 1000);

    raw_sleep_ms(200); /* worker 1 reaches its sleep, the monitor its back-off */
    uint64_t l0 = atomic_load(&weft__monitor_looks);
    raw_sleep_ms(1000);
    uint64_t looks = atomic_load(&weft__monitor_looks) - l0;
    if (looks > 20) {
        fprintf(stderr, "monitor looked %llu times in 1 s of quiet\n", (unsigned long long)looks);
        CHECK(looks <= 20);
    }

    if (test_preemption_possible())
        pt_spinners(pt_spin_nothing);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
