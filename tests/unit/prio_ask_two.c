/* A thread readied while every worker runs a lower class asks two workers
 * of that class at once (issue 24, item 5). Under a flood the one worker
 * asked was, in the slow samples, a kernel thread off the CPU while the
 * other ran, and the monitor that re-aims such a request was as often kept
 * off its CPU for as long.
 *
 * Both workers' kernel threads block the preemption signal (as threads the
 * host does not run, they answer nothing): each runs a NORMAL spinner that
 * blocks it once it holds a worker of its own. A plain pthread posts the
 * semaphore a HIGH thread waits on. When the post returns, both workers
 * must hold a priority request for the thread they run. Before, only
 * worker 0 was asked (the monitor re-aimed it at worker 1 two looks later).
 * Then the spinners unblock the signal and end, and the HIGH thread runs.
 * The quantum is 1 s, so that no quantum's request stands in the way. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "policy/preempt.h"
#include "prio_probe.h"
#include "sched/sched.h"
#include "testutil.h"
#include "weft.h"

static atomic_int high_ran, asked0, asked1;
static atomic_int claimed[2]; /* 1: a spinner holds worker i, signal blocked */
static weft_sem sem;

/* Takes a worker no other spinner holds (yielding until a thief moves it
 * there), blocks the signal on its kernel thread and spins: with no
 * scheduling point, it keeps that kernel thread until prio_stop. */
static void *spin_blocked(void *arg)
{
    (void)arg;
    int zero = 0;
    while (!atomic_compare_exchange_strong(&claimed[weft__tls_worker->id], &zero, 2)) {
        zero = 0;
        weft_yield();
    }
    sigset_t old;
    prio_block_signal(&old);
    atomic_store(&claimed[weft__tls_worker->id], 1);
    prio_spin(NULL);
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    return NULL;
}

static void *high(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&sem), 0);
    atomic_store(&high_ran, 1);
    return NULL;
}

/* 1 when w holds a priority request for the thread it runs now. */
static int prio_asked(struct weft__worker *w)
{
    uint64_t req = atomic_load(&w->preempt_req);
    return (req & 3) == WEFT__PREEMPT_PRIO &&
           (req >> 2) == __atomic_load_n(&w->tick, __ATOMIC_RELAXED);
}

static void *poster(void *arg)
{
    (void)arg;
    uint64_t give_up = prio_now_ns() + 20 * 1000000000ull;
    while (atomic_load(&claimed[0]) != 1 || atomic_load(&claimed[1]) != 1) {
        CHECK(prio_now_ns() < give_up);
        sched_yield();
    }
    CHECK_EQ(weft_sem_post(&sem), 0);
    /* The requests are made within the post (weft__inject); the monitor's
     * re-aim would take two looks, 0.1 ms apart. */
    atomic_store(&asked0, prio_asked(weft__rt.workers[0]));
    atomic_store(&asked1, prio_asked(weft__rt.workers[1]));
    atomic_store(&prio_stop, 1);
    return NULL;
}

int main(void)
{
    alarm(120);
    test_clear_env();
    setenv("WEFT_SPAWN_POLICY", "help-first", 1); /* the initial thread spawns both */
    prio_init(1000000);                           /* no quantum's request meanwhile */
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    weft_attr ha = WEFT_ATTR_INIT;
    ha.priority = WEFT_PRIO_HIGH;
    weft_thread *h, *s[2];
    CHECK_EQ(weft_spawn(&h, high, NULL, &ha), 0); /* runs at once, waits */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, poster, NULL), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_spawn(&s[i], spin_blocked, NULL, NULL), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_join(s[i], NULL), 0); /* parks: worker 0 is free for one */
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    if (!atomic_load(&asked0) || !atomic_load(&asked1))
        fprintf(stderr, "asked: worker 0 %d, worker 1 %d\n", atomic_load(&asked0),
                atomic_load(&asked1));
    CHECK(atomic_load(&asked0) && atomic_load(&asked1));
    CHECK(atomic_load(&high_ran));
    CHECK_EQ(weft_sem_destroy(&sem), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
