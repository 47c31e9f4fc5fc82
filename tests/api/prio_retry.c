/* Preemption of threads that live in the C library: spinners that do
 * little but read the clock (libc and the vDSO, where the handler must not
 * switch) on one worker with a 1 ms quantum. The handler refuses most
 * signals there and asks for a quick retry with a one-shot kernel timer
 * of the worker's. Checked:
 *  - every spinner gets its turns (they can only by preemption; an alarm
 *    turns a hang into a failure), and weft_stats counts the preemptions;
 *  - while the runtime runs, the retry timer exists (/proc/self/timers
 *    lists a timer that sends the preemption signal to one thread);
 *  - weft_finalize deletes it: after each of three runs no timer is left,
 *    so init/finalize cycles leak no kernel timers. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define PT_ROUNDS 20 /* each spinner's rounds that the others must see */
#include "preempt_test.h"

#define QUANTUM_US 1000
#define RUNS       3

/* Almost all of its time in clock_gettime: it is caught in its own code
 * only between two calls. */
static void *spin_clock(void *arg)
{
    int me = (int)(intptr_t)arg;
    struct timespec ts;
    for (int r = 1; r <= PT_ROUNDS; r++) {
        for (int k = 0; k < 20000; k++)
            clock_gettime(CLOCK_MONOTONIC, &ts);
        atomic_store_explicit(&pt_progress[me], r, memory_order_relaxed);
        /* a round counts once every other spinner had one: only
         * preemption lets them run on the one worker */
        while (!pt_all_reached(r))
            clock_gettime(CLOCK_MONOTONIC, &ts);
    }
    return NULL;
}

/* Timers of this process that send SIGURG (weft's preemption signal, see
 * docs/priorities.md) to one thread. */
static int preempt_timers(void)
{
    FILE *f = fopen("/proc/self/timers", "r");
    if (!f)
        return -1;
    char line[256];
    int n = 0, sigurg = 0;
    while (fgets(line, sizeof line, f)) {
        int sig;
        if (sscanf(line, "signal: %d/", &sig) == 1)
            sigurg = sig == SIGURG;
        else if (strncmp(line, "notify: ", 8) == 0 && strstr(line, "/tid.") && sigurg)
            n++;
    }
    fclose(f);
    return n;
}

int main(void)
{
    if (!test_preemption_possible() || preempt_timers() < 0)
        return 77;
    alarm(60);
    int seen = 0;
    for (int run = 0; run < RUNS; run++) {
        test_init_quantum(1, QUANTUM_US);
        pt_spinners(spin_clock);
        weft_stats st;
        CHECK_EQ(weft_stats_get(&st), 0);
        CHECK(st.preempt_quantum > 0);
        seen += preempt_timers();
        CHECK_EQ(weft_finalize(), 0);
        CHECK_EQ(preempt_timers(), 0);
    }
    /* the retry path ran: with most of their time in libc, some signal of
     * three runs' found a spinner there */
    CHECK(seen > 0);
    return 0;
}
