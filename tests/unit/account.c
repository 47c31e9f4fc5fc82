/* Per-thread CPU accounting (sched/account.h) and the monitor's idling:
 *  - a thread that computes for a while is charged CPU time, no more than
 *    the wall time it had (plus a period), and a parked one is charged
 *    nothing while parked, its state time growing instead;
 *  - a reused slot starts with a fresh record;
 *  - an idle runtime (workers asleep) leaves the monitor asleep too: the
 *    process uses almost no CPU.
 * Bounds are loose (the accounting is statistical, about 1 ms). */
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "sched/account.h"
#include "sched/sched.h"
#include "testutil.h"
#include "weft.h"

#define SPIN_S 0.08 /* a computing thread runs this long */

static volatile uint64_t sink;

static void *spin(void *arg)
{
    (void)arg;
    double end = check_now() + SPIN_S;
    while (check_now() < end)
        sink++;
    return NULL;
}

static weft_sem sem;

static void *parked(void *arg)
{
    (void)arg;
    weft_sem_wait(&sem);
    return NULL;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(void)
{
    test_clear_env();
    test_init(2, WEFT_WORK_FIRST);

    /* a computing thread is charged about its run */
    weft_thread *t;
    double t0 = check_now();
    CHECK_EQ(weft_spawn(&t, spin, NULL, NULL), 0);
    while (weft__thread_cpu_ns(t) < 20 * 1000000ull && check_now() - t0 < 5.0)
        weft_yield();
    uint64_t cpu = weft__thread_cpu_ns(t);
    double wall = check_now() - t0;
    CHECK(cpu >= 20 * 1000000ull);
    CHECK((double)cpu <= (wall + 0.01) * 1e9);

    /* a parked thread: no CPU while parked, its state time grows */
    weft_sem_init(&sem, 0);
    weft_thread *p;
    CHECK_EQ(weft_spawn(&p, parked, NULL, NULL), 0);
    struct timespec nap = { 0, 10 * 1000000 };
    double p0 = check_now();
    while (weft__thread_state_ns(p) < 20 * 1000000ull && check_now() - p0 < 5.0)
        nanosleep(&nap, NULL); /* grows once p has parked */
    CHECK(weft__thread_state_ns(p) >= 20 * 1000000ull);
    uint64_t c1 = weft__thread_cpu_ns(p);
    nanosleep(&nap, NULL);
    nanosleep(&nap, NULL);
    CHECK(weft__thread_cpu_ns(p) <= c1 + 2 * 1000000ull);
    weft_sem_post(&sem);
    CHECK_EQ(weft_join(p, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);

    /* a reused slot starts afresh: the next spawn likely gets t's slot */
    weft_thread *u;
    CHECK_EQ(weft_spawn(&u, parked, NULL, NULL), 0);
    CHECK(weft__thread_cpu_ns(u) < 5 * 1000000ull);
    weft_sem_post(&sem);
    CHECK_EQ(weft_join(u, NULL), 0);

    /* idle: the initial thread sleeps in the kernel on a plain nanosleep,
     * the other worker sleeps: about no CPU for the process */
    struct timespec settle = { 0, 100 * 1000000 };
    nanosleep(&settle, NULL);
    double c0 = cpu_s();
    struct timespec idle = { 0, 300 * 1000000 };
    nanosleep(&idle, NULL);
    double used = cpu_s() - c0;
    CHECK(used < 0.3 * 0.05); /* well below 5 % of a core (the bar is 1 %) */

    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
