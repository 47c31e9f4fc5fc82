/* The monitor asks for a priority preemption only when a thread of a
 * higher class waits (issue 24, item 5). Under a flood the injection queue
 * always holds NORMAL threads (the quantum's losers); the monitor took any
 * of them for a higher class and sent a priority request at every look,
 * which the handler dropped. Here three NORMAL spinners share 2 workers
 * (1 ms quantum) with the priority pool in use, and no thread of a higher
 * class exists: over 40 of the monitor's looks, no priority request may be
 * made (weft__monitor_asks counts them). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "policy/monitor.h"
#include "prio_probe.h"
#include "testutil.h"
#include "weft.h"

static void *nothing(void *arg)
{
    return arg;
}

static atomic_uint asks_seen;

static void *counter(void *arg)
{
    (void)arg;
    struct timespec ms = { 0, 1000000 };
    uint64_t give_up = prio_now_ns() + 60 * 1000000000ull;
    for (int i = 0; i < 20; i++)
        nanosleep(&ms, NULL); /* the flood settles */
    uint32_t asks0 = atomic_load(&weft__monitor_asks);
    uint64_t looks0 = atomic_load(&weft__monitor_looks);
    while (atomic_load(&weft__monitor_looks) < looks0 + 40) {
        CHECK(prio_now_ns() < give_up);
        nanosleep(&ms, NULL);
    }
    atomic_store(&asks_seen, atomic_load(&weft__monitor_asks) - asks0);
    atomic_store(&prio_stop, 1);
    return NULL;
}

int main(void)
{
    alarm(120);
    test_clear_env();
    prio_init(1000);
    /* A HIGH thread that ends at once: the priority pool is in use. */
    weft_attr ha = WEFT_ATTR_INIT;
    ha.priority = WEFT_PRIO_HIGH;
    weft_thread *h, *s[3];
    CHECK_EQ(weft_spawn(&h, nothing, NULL, &ha), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_spawn(&s[i], prio_spin, NULL, NULL), 0);

    /* The initial thread parks in weft_join: the spinners take turns on
     * both workers while a plain pthread counts. */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, counter, NULL), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_join(s[i], NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    uint32_t asks = atomic_load(&asks_seen);
    if (asks)
        fprintf(stderr, "%u priority requests with no thread of a higher class\n", asks);
    CHECK_EQ(asks, 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
