/* A priority request whose worker does not answer it is re-aimed at
 * another worker by the monitor's watch (issue 24, item 5). Under a flood
 * the worker asked first was, in the slow samples, a kernel thread off the
 * CPU for about 1 ms (its run delay in /proc/self/task/TID/schedstat); the
 * thread readied waited until the monitor's next look (1 ms, and up to
 * 10 ms once it had backed off) asked the other worker. Now the request
 * rings the monitor, which looks again 0.1 ms later.
 *
 * Here worker 0's kernel thread blocks the preemption signal (as one that
 * the host does not run, it never answers), while worker 1 runs a NORMAL
 * spinner. A plain pthread posts the semaphore a HIGH thread waits on: the
 * request goes to worker 0 (the first of the lowest class), the monitor
 * must be rung (weft__monitor_poke: nothing else rings it here), and the
 * HIGH thread must run on worker 1, whose spinner is preempted. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "policy/monitor.h"
#include "prio_probe.h"
#include "sched/sched.h"
#include "testutil.h"
#include "weft.h"

static atomic_int go, high_on;
static weft_sem sem;

static void *high(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&sem), 0);
    atomic_store(&high_on, weft__tls_worker->id + 1);
    return NULL;
}

static void *poster(void *arg)
{
    (void)arg;
    while (!atomic_load(&go))
        sched_yield();
    CHECK_EQ(weft_sem_post(&sem), 0);
    return NULL;
}

int main(void)
{
    alarm(120);
    test_clear_env();
    prio_init(1000);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    weft_attr ha = WEFT_ATTR_INIT;
    ha.priority = WEFT_PRIO_HIGH;
    weft_thread *h, *s;
    CHECK_EQ(weft_spawn(&h, high, NULL, &ha), 0); /* runs at once, waits */
    CHECK_EQ(weft_spawn(&s, prio_spin, NULL, NULL), 0);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, poster, NULL), 0);

    /* The initial thread is worker 0's (pinned there): once the spinner
     * runs while it does, the spinner holds worker 1. */
    uint64_t give_up = prio_now_ns() + 20 * 1000000000ull;
    while (__atomic_load_n(&weft__rt.workers[1]->current, __ATOMIC_RELAXED) != s) {
        CHECK(prio_now_ns() < give_up);
        weft_yield();
    }
    /* A ring is needed only when the monitor is not watching already (a
     * priority request in the last 2 ms: none is made here). */
    while (atomic_load(&weft__monitor_watching))
        CHECK(prio_now_ns() < give_up);

    sigset_t old;
    prio_block_signal(&old);
    uint32_t poke0 = atomic_load(&weft__monitor_poke);
    atomic_store(&go, 1);
    volatile uint64_t x = 0;
    while (!atomic_load(&high_on)) { /* worker 0 answers no request meanwhile */
        x++;
        CHECK(prio_now_ns() < give_up);
    }
    uint32_t poke1 = atomic_load(&weft__monitor_poke);
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);

    if (poke1 == poke0)
        fprintf(stderr, "the priority request did not ring the monitor\n");
    CHECK(poke1 != poke0);
    CHECK_EQ(atomic_load(&high_on), 2); /* worker 1 took it */

    atomic_store(&prio_stop, 1);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    CHECK_EQ(weft_join(s, NULL), 0);
    CHECK_EQ(weft_sem_destroy(&sem), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
