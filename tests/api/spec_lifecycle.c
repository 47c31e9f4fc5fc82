/* Tests lifecycle rules of the SPEC not covered elsewhere: the "not running"
 * answers seen from a plain kernel thread (before init and after finalize),
 * out-of-range configurations leaving the runtime stopped, weft_init and
 * weft_finalize from a bound or a detached thread (EBUSY, EPERM), and
 * weft_finalize waiting for threads nobody joins: joinable ones never joined,
 * ones parked in weft_join, ones spawned by a plain thread, bound ones; and
 * weft_finalize called while a plain kernel thread is blocked in weft_join
 * (that join still returns the result, and nothing is freed under it) or
 * keeps calling weft_spawn (each spawn is EAGAIN or its thread has run when
 * weft_finalize returns). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *ret_arg(void *arg)
{
    return arg;
}

/* ---- not running, seen from a plain kernel thread ------------------------ */

static void *plain_not_running(void *arg)
{
    (void)arg;
    weft_thread *t = NULL;
    weft_attr det = WEFT_ATTR_INIT, bound = WEFT_ATTR_INIT;
    det.detached = 1;
    bound.bound = 1;
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_worker_id(), -1);
    CHECK_EQ(weft_num_workers(), 0);
    weft_yield(); /* sched_yield(): returns */
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, NULL), EAGAIN);
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, &det), EAGAIN);
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, &bound), EAGAIN);
    CHECK_EQ(weft_finalize(), EINVAL);
    return (void *)0x0c;
}

static void check_not_running_everywhere(void)
{
    weft_thread *t = NULL;
    weft_attr bound = WEFT_ATTR_INIT;
    bound.bound = 1;
    CHECK_EQ(weft_num_workers(), 0);
    CHECK(weft_self() == NULL);
    CHECK_EQ(weft_worker_id(), -1);
    weft_yield();
    CHECK_EQ(weft_spawn(&t, ret_arg, NULL, &bound), EAGAIN);
    pthread_t pt;
    void *res = NULL;
    CHECK_EQ(pthread_create(&pt, NULL, plain_not_running, NULL), 0);
    CHECK_EQ(pthread_join(pt, &res), 0);
    CHECK(res == (void *)0x0c);
}

/* ---- configurations out of range ----------------------------------------- */

/* Either a positive errno and the runtime still stopped, or (for a field the
 * library may adjust) a runtime that works. Never a crash. */
static void try_config(int workers, size_t stack_size, int must_fail)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    cfg.stack_size = stack_size;
    int rc = weft_init(&cfg);
    if (rc != 0 || must_fail) {
        CHECK(rc == EINVAL || rc == EAGAIN || rc == ENOMEM);
        check_not_running_everywhere();
        return;
    }
    weft_thread *t;
    void *res = NULL;
    rc = weft_spawn(&t, ret_arg, (void *)0x5, NULL);
    CHECK(rc == 0 || rc == EAGAIN || rc == ENOMEM || rc == EINVAL);
    if (rc == 0) {
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK(res == (void *)0x5);
    }
    CHECK_EQ(weft_finalize(), 0);
}

/* ---- init / finalize from threads that did not call weft_init ----------- */

typedef struct tried {
    atomic_int init_rc, finalize_rc, done;
} tried;

static void *try_init_finalize(void *arg)
{
    tried *r = arg;
    atomic_store(&r->init_rc, weft_init(NULL));
    atomic_store(&r->finalize_rc, weft_finalize());
    atomic_store(&r->done, 1);
    return arg;
}

/* ---- threads weft_finalize must wait for --------------------------------- */

enum { UNJOINED = 64, SPINS = 200, CHAINS = 8, PLAIN_SPAWNED = 16, BOUND = 3 };

static atomic_int unjoined_done, chain_leaf_done, chain_done, plain_spawned_done, bound_done;

static void *yield_then_count(void *arg)
{
    for (int i = 0; i < SPINS; i++)
        weft_yield();
    atomic_fetch_add((atomic_int *)arg, 1);
    return arg;
}

/* Detached; parks in weft_join on a joinable child that takes a while. */
static void *chain_head(void *arg)
{
    (void)arg;
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, yield_then_count, &chain_leaf_done, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == &chain_leaf_done);
    atomic_fetch_add(&chain_done, 1);
    return NULL;
}

/* A plain kernel thread spawns joinable threads and never joins them. */
static void *plain_spawns_unjoined(void *arg)
{
    (void)arg;
    for (int i = 0; i < PLAIN_SPAWNED; i++) {
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, yield_then_count, &plain_spawned_done, NULL), 0);
    }
    return NULL;
}

/* Bound: blocks its own kernel thread for a moment, then counts. */
static void *bound_nap(void *arg)
{
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    atomic_fetch_add((atomic_int *)arg, 1);
    return arg;
}

static void *plain_num_workers(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)weft_num_workers();
}

static void run_finalize_waits(int workers, int policy)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    cfg.spawn_policy = policy;
    atomic_store(&unjoined_done, 0);
    atomic_store(&chain_leaf_done, 0);
    atomic_store(&chain_done, 0);
    atomic_store(&plain_spawned_done, 0);
    atomic_store(&bound_done, 0);
    CHECK_EQ(weft_init(&cfg), 0);

    pthread_t pt;
    void *res = NULL;
    CHECK_EQ(pthread_create(&pt, NULL, plain_num_workers, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK_EQ((intptr_t)res, workers);

    /* A bound and a detached thread may neither start the runtime again
     * (EBUSY) nor finalize it (EPERM). */
    static tried by_bound, by_detached;
    weft_attr bound = WEFT_ATTR_INIT, det = WEFT_ATTR_INIT;
    bound.bound = 1;
    det.detached = 1;
    atomic_store(&by_bound.done, 0);
    atomic_store(&by_detached.done, 0);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, try_init_finalize, &by_bound, &bound), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == &by_bound);
    CHECK_EQ(atomic_load(&by_bound.init_rc), EBUSY);
    CHECK_EQ(atomic_load(&by_bound.finalize_rc), EPERM);
    CHECK_EQ(weft_spawn(NULL, try_init_finalize, &by_detached, &det), 0);
    while (!atomic_load(&by_detached.done))
        weft_yield();
    CHECK_EQ(atomic_load(&by_detached.init_rc), EBUSY);
    CHECK_EQ(atomic_load(&by_detached.finalize_rc), EPERM);
    CHECK_EQ(weft_num_workers(), workers);

    /* Joinable threads never joined (nor detached). */
    for (int i = 0; i < UNJOINED; i++)
        CHECK_EQ(weft_spawn(&t, yield_then_count, &unjoined_done, NULL), 0);
    /* Detached threads parked in weft_join. */
    for (int i = 0; i < CHAINS; i++)
        CHECK_EQ(weft_spawn(NULL, chain_head, NULL, &det), 0);
    /* Joinable threads a plain kernel thread spawned and left. */
    CHECK_EQ(pthread_create(&pt, NULL, plain_spawns_unjoined, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
    /* Bound threads, joinable never joined and detached. */
    for (int i = 0; i < BOUND; i++) {
        CHECK_EQ(weft_spawn(&t, bound_nap, &bound_done, &bound), 0);
        weft_attr bd = bound;
        bd.detached = 1;
        CHECK_EQ(weft_spawn(NULL, bound_nap, &bound_done, &bd), 0);
    }

    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(atomic_load(&unjoined_done), UNJOINED);
    CHECK_EQ(atomic_load(&chain_leaf_done), CHAINS);
    CHECK_EQ(atomic_load(&chain_done), CHAINS);
    CHECK_EQ(atomic_load(&plain_spawned_done), PLAIN_SPAWNED);
    CHECK_EQ(atomic_load(&bound_done), 2 * BOUND);
    check_not_running_everywhere();
}

/* ---- finalize while a plain kernel thread is blocked in weft_join -------- */

static atomic_int fj_gate;

static void *fj_gated(void *arg)
{
    while (!atomic_load(&fj_gate))
        if (weft_self())
            weft_yield();
    return arg;
}

typedef struct fj_try {
    weft_thread *target;
    atomic_int rc; /* -1 until weft_join returned */
    void *result;
} fj_try;

static void *fj_join(void *arg)
{
    fj_try *j = arg;
    void *res = NULL;
    int rc = weft_join(j->target, &res);
    j->result = res;
    atomic_store(&j->rc, rc);
    return NULL;
}

/* Two plain threads join one gated thread; once one is back with EINVAL
 * the other is surely blocked in weft_join. Then the gate opens and the
 * runtime is finalized at once. */
static void finalize_under_plain_joiner(int workers, int bound)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.bound = bound;
    weft_thread *t;
    atomic_store(&fj_gate, 0);
    CHECK_EQ(weft_spawn(&t, fj_gated, (void *)0xf1, &a), 0);
    fj_try j[2];
    pthread_t pt[2];
    for (int i = 0; i < 2; i++) {
        j[i].target = t;
        j[i].result = NULL;
        atomic_store(&j[i].rc, -1);
        CHECK_EQ(pthread_create(&pt[i], NULL, fj_join, &j[i]), 0);
    }
    while (atomic_load(&j[0].rc) == -1 && atomic_load(&j[1].rc) == -1)
        weft_yield();
    int loser = atomic_load(&j[0].rc) != -1 ? 0 : 1;
    CHECK_EQ(atomic_load(&j[loser].rc), EINVAL);
    atomic_store(&fj_gate, 1);
    CHECK_EQ(weft_finalize(), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(pt[i], NULL), 0);
    CHECK_EQ(atomic_load(&j[1 - loser].rc), 0);
    CHECK(j[1 - loser].result == (void *)0xf1);
}

/* ---- finalize while a plain kernel thread keeps spawning ---------------- */

static atomic_long fs_spawned, fs_ran;
static atomic_int fs_bad_rc;

static void *fs_count(void *arg)
{
    (void)arg;
    atomic_fetch_add(&fs_ran, 1);
    return NULL;
}

/* Spawns detached threads (bound ones now and then) until EAGAIN. */
static void *fs_spawner(void *arg)
{
    (void)arg;
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    for (long i = 0;; i++) {
        a.bound = i % 16 == 15;
        int rc = weft_spawn(NULL, fs_count, NULL, &a);
        if (rc == EAGAIN)
            return NULL;
        if (rc != 0) {
            atomic_store(&fs_bad_rc, rc);
            return NULL;
        }
        atomic_fetch_add(&fs_spawned, 1);
    }
}

static void finalize_under_plain_spawner(int workers)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    atomic_store(&fs_spawned, 0);
    atomic_store(&fs_ran, 0);
    CHECK_EQ(weft_init(&cfg), 0);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, fs_spawner, NULL), 0);
    while (atomic_load(&fs_spawned) < 20)
        weft_yield();
    CHECK_EQ(weft_finalize(), 0);
    long ran = atomic_load(&fs_ran);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(atomic_load(&fs_bad_rc), 0);
    CHECK_EQ(ran, atomic_load(&fs_spawned));
}

int main(void)
{
    test_clear_env();

    /* Before weft_init, from the main thread and from a plain thread. */
    check_not_running_everywhere();

    /* Worker counts no machine can give: an error, the runtime stopped. */
    try_config(INT_MAX, 0, 1);
    try_config(1 << 20, 0, 1);
    /* Stack sizes no thread can use, or can hardly get: an error, or a
     * runtime that still works. */
    try_config(1, 1, 0);
    try_config(1, SIZE_MAX, 0);
    try_config(1, SIZE_MAX / 2, 0);

    run_finalize_waits(1, WEFT_WORK_FIRST);
    run_finalize_waits(2, WEFT_HELP_FIRST);
    run_finalize_waits(3, WEFT_WORK_FIRST);

    for (int i = 0; i < (TEST_SANITIZED ? 50 : 200); i++) {
        finalize_under_plain_joiner(1 + i % 2, 0);
        finalize_under_plain_joiner(1 + i % 2, 1);
    }

    for (int i = 0; i < (TEST_SANITIZED ? 40 : 150); i++)
        finalize_under_plain_spawner(1 + i % 2);

    /* Still usable after all that. */
    CHECK_EQ(weft_init(NULL), 0);
    CHECK_EQ(weft_num_workers(), test_affinity_cpus());
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
