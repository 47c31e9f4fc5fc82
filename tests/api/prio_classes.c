/* Priority classes, without preemption (quantum off):
 *  - weft_set_priority / weft_priority: range checks (EINVAL), NULL is the
 *    caller, EPERM and NORMAL outside user threads; weft_priority returns
 *    the set value; attr.priority out of range makes weft_spawn fail with
 *    EINVAL; priorities are not inherited by children;
 *  - class order on one worker: queued threads run highest class first,
 *    whatever order they were readied in, and a yield goes behind the
 *    ready threads of its own class only;
 *  - the spawn rules: a higher child runs at once (under help-first too),
 *    a lower child is queued (under work-first too), NULL attr from a HIGH
 *    parent is a lower child;
 *  - stealing on two workers takes the highest class first. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { NQ = 12 };

#define UNSET (-9)
static atomic_int log_len;
static atomic_int log_cls[64];

static void *record(void *arg)
{
    int pos = atomic_fetch_add(&log_len, 1);
    atomic_store(&log_cls[pos], (int)(intptr_t)arg);
    return NULL;
}

static void *outside(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_HIGH), EPERM);
    CHECK_EQ(weft_priority(NULL), WEFT_PRIO_NORMAL);
    return NULL;
}

static void *child_prio(void *arg)
{
    *(int *)arg = weft_priority(NULL);
    return NULL;
}

static atomic_int ran;

static void *mark(void *arg)
{
    (void)arg;
    atomic_store(&ran, 1);
    return NULL;
}

static void api_checks(void)
{
    CHECK_EQ(weft_priority(NULL), WEFT_PRIO_NORMAL);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_URGENT + 1), EINVAL);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_BACKGROUND - 1), EINVAL);
    weft_attr a = WEFT_ATTR_INIT;
    weft_thread *t;
    a.priority = 7;
    CHECK_EQ(weft_spawn(&t, record, NULL, &a), EINVAL);
    a.priority = -2;
    CHECK_EQ(weft_spawn(&t, record, NULL, &a), EINVAL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, outside, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);

    /* not inherited: a HIGH parent's NULL-attr child is NORMAL */
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_HIGH), 0);
    CHECK_EQ(weft_priority(NULL), WEFT_PRIO_HIGH);
    int seen = -9;
    CHECK_EQ(weft_spawn(&t, child_prio, &seen, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(seen, WEFT_PRIO_NORMAL);
    CHECK_EQ(weft_priority(t = test_spawn_prio(WEFT_PRIO_BACKGROUND, record, (void *)0)),
             WEFT_PRIO_BACKGROUND);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
    atomic_store(&log_len, 0);
}

/* One worker: readied out of order, run highest first. */
static void class_order(void)
{
    static const int order[NQ] = { -1, 0, 1, 2, 0, -1, 1, 2, -1, 0, 2, 1 };
    weft_thread *t[NQ];
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_URGENT), 0);
    for (int i = 0; i < NQ; i++) {
        /* URGENT children of an URGENT parent would run at once: spawn
         * those as HIGH and raise them while queued (a queued thread moves
         * to its new class) */
        int p = order[i] == WEFT_PRIO_URGENT ? WEFT_PRIO_HIGH : order[i];
        t[i] = test_spawn_prio(p, record, (void *)(intptr_t)order[i]);
        if (order[i] == WEFT_PRIO_URGENT)
            CHECK_EQ(weft_set_priority(t[i], WEFT_PRIO_URGENT), 0);
    }
    CHECK_EQ(atomic_load(&log_len), 0); /* all lower or raised later: queued */
    /* lowering ourselves below them lets them all run, by class */
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_BACKGROUND), 0);
    weft_yield();
    for (int i = 0; i < NQ; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&log_len), NQ);
    for (int i = 1; i < NQ; i++)
        CHECK(log_cls[i] <= log_cls[i - 1]);
    CHECK_EQ(log_cls[0], WEFT_PRIO_URGENT);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
}

/* One worker: the spawn rules. */
static void spawn_rules(void)
{
    weft_thread *t;
    atomic_store(&ran, 0);
    t = test_spawn_prio(WEFT_PRIO_HIGH, mark, NULL);
    CHECK_EQ(atomic_load(&ran), 1); /* higher: at once */
    CHECK_EQ(weft_join(t, NULL), 0);
    atomic_store(&ran, 0);
    t = test_spawn_prio(WEFT_PRIO_BACKGROUND, mark, NULL);
    CHECK_EQ(atomic_load(&ran), 0); /* lower: queued under work-first */
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(atomic_load(&ran), 1);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_HIGH), 0);
    atomic_store(&ran, 0);
    CHECK_EQ(weft_spawn(&t, mark, NULL, NULL), 0);
    CHECK_EQ(atomic_load(&ran), 0); /* NULL attr from HIGH: lower, queued */
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
}

/* A yield goes behind the ready threads of its own class only. */
static atomic_int yield_log[8], yield_len;

static void *yielder(void *arg)
{
    int me = (int)(intptr_t)arg;
    yield_log[atomic_fetch_add(&yield_len, 1)] = me;
    weft_yield(); /* a BACKGROUND thread is ready too: it must not run now */
    yield_log[atomic_fetch_add(&yield_len, 1)] = me;
    return NULL;
}

static void yield_within_class(void)
{
    weft_thread *bg, *a, *b;
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_URGENT), 0);
    bg = test_spawn_prio(WEFT_PRIO_BACKGROUND, yielder, (void *)0);
    a = test_spawn_prio(WEFT_PRIO_HIGH, yielder, (void *)1);
    b = test_spawn_prio(WEFT_PRIO_HIGH, yielder, (void *)2);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_BACKGROUND), 0);
    CHECK_EQ(weft_join(a, NULL), 0);
    CHECK_EQ(weft_join(b, NULL), 0);
    CHECK_EQ(weft_join(bg, NULL), 0);
    CHECK_EQ(atomic_load(&yield_len), 6);
    /* both HIGH threads finished before the BACKGROUND one first ran */
    CHECK(yield_log[0] != 0 && yield_log[1] != 0 && yield_log[2] != 0 && yield_log[3] != 0);
    CHECK(yield_log[0] != yield_log[1]); /* the yield let the other HIGH one run */
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
}

/* Two workers: worker 1 is busy while worker 0 queues BACKGROUND threads
 * and then one HIGH thread; once free, worker 1 steals the HIGH one first. */
static atomic_int release_blocker, blocker_running;

static void *blocker(void *arg)
{
    (void)arg;
    atomic_store(&blocker_running, 1);
    while (!atomic_load(&release_blocker))
        ;
    return NULL;
}

static void steal_highest(void)
{
    atomic_store(&log_len, 0);
    atomic_store(&log_cls[0], UNSET);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_URGENT), 0);
    weft_thread *blk;
    CHECK_EQ(weft_spawn(&blk, blocker, NULL, NULL), 0); /* help-first: worker 1 takes it */
    while (!atomic_load(&blocker_running))
        ;
    weft_thread *t[5];
    for (int i = 0; i < 4; i++)
        t[i] =
            test_spawn_prio(WEFT_PRIO_BACKGROUND, record, (void *)(intptr_t)WEFT_PRIO_BACKGROUND);
    t[4] = test_spawn_prio(WEFT_PRIO_HIGH, record, (void *)(intptr_t)WEFT_PRIO_HIGH);
    atomic_store(&release_blocker, 1);
    while (atomic_load(&log_cls[0]) == UNSET)
        ; /* the initial thread keeps worker 0: worker 1 runs them */
    CHECK_EQ(log_cls[0], WEFT_PRIO_HIGH);
    CHECK_EQ(weft_set_priority(NULL, WEFT_PRIO_NORMAL), 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(weft_join(blk, NULL), 0);
}

int main(void)
{
    test_clear_env();
    alarm(60);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    cfg.quantum_us = -1;
    CHECK_EQ(weft_init(&cfg), 0);
    api_checks();
    class_order();
    spawn_rules();
    yield_within_class();
    CHECK_EQ(weft_finalize(), 0);

    cfg.spawn_policy = WEFT_HELP_FIRST;
    CHECK_EQ(weft_init(&cfg), 0);
    atomic_store(&ran, 0);
    weft_thread *t = test_spawn_prio(WEFT_PRIO_HIGH, mark, NULL);
    CHECK_EQ(atomic_load(&ran), 1); /* higher: at once under help-first too */
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);

    cfg.spawn_policy = WEFT_WORK_FIRST;
    cfg.workers = 2;
    CHECK_EQ(weft_init(&cfg), 0);
    steal_highest();
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
