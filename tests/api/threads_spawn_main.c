/* Tests that a loop of spawns in the initial thread runs in parallel under
 * either spawn policy: the initial thread never leaves worker 0, so its
 * children must be queued where idle workers take them while it goes on
 * spawning. Each child spins until some child has run on worker 1; if
 * worker 1 never gets one, the child process hangs and its alarm fails it.
 * And that under work-first a loop in main that spawns and joins one child
 * at a time runs each child at once, as from any other thread (queueing
 * them cost three times as much), without keeping a spawn loop that
 * follows from worker 1. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { NCHILD = 64, WORKERS = 2, BOUND_S = 15 };

static atomic_int on_worker[WORKERS];
static atomic_int other_ran; /* 1 once a child has run on worker 1 */

static void *child(void *arg)
{
    (void)arg;
    int id = weft_worker_id();
    CHECK(id >= 0 && id < WORKERS);
    atomic_fetch_add(&on_worker[id], 1);
    if (id != 0)
        atomic_store(&other_ran, 1);
    /* Hold this worker until worker 1 has run a child: without a yield, so
     * that only another worker can take the initial thread's children. */
    while (!atomic_load(&other_ran))
        sched_yield();
    return NULL;
}

static void spawn_loop(int policy)
{
    alarm(BOUND_S);
    test_init(WORKERS, policy);
    weft_thread *t[NCHILD];
    for (int i = 0; i < NCHILD; i++)
        CHECK_EQ(weft_spawn(&t[i], child, NULL, NULL), 0);
    for (int i = 0; i < NCHILD; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.steals > 0);
    CHECK_EQ(weft_finalize(), 0);
    CHECK(atomic_load(&on_worker[0]) + atomic_load(&on_worker[1]) == NCHILD);
    CHECK(atomic_load(&on_worker[1]) > 0);
    printf("worker0=%d worker1=%d steals=%llu\n", atomic_load(&on_worker[0]),
           atomic_load(&on_worker[1]), (unsigned long long)st.steals);
    exit(0);
}

enum { PAIRS = 200, SETTLE = 16, LEAF_NS = 200000 };

static atomic_int last_ran = -1;

static void *mark(void *arg)
{
    atomic_store(&last_ran, (int)(intptr_t)arg);
    return NULL;
}

/* Busy for LEAF_NS: long enough for an idle worker to steal the next one. */
static void *leaf(void *arg)
{
    (void)arg;
    atomic_fetch_add(&on_worker[weft_worker_id()], 1);
    double end = check_now() + LEAF_NS * 1e-9;
    while (check_now() < end)
        ;
    return NULL;
}

static void spawn_join(void)
{
    alarm(BOUND_S);
    test_init(WORKERS, WEFT_WORK_FIRST);
    int queued = 0;
    for (int i = 0; i < PAIRS; i++) {
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, mark, (void *)(intptr_t)i, NULL), 0);
        if (i >= SETTLE && atomic_load(&last_ran) != i)
            queued++; /* returned before its child ran */
        CHECK_EQ(weft_join(t, NULL), 0);
    }
    CHECK_EQ(queued, 0);
    weft_thread *t[NCHILD];
    for (int i = 0; i < NCHILD; i++)
        CHECK_EQ(weft_spawn(&t[i], leaf, NULL, NULL), 0);
    for (int i = 0; i < NCHILD; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    CHECK(atomic_load(&on_worker[1]) > 0);
    printf("worker0=%d worker1=%d\n", atomic_load(&on_worker[0]), atomic_load(&on_worker[1]));
    exit(0);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "spawn-join") == 0)
            spawn_join();
        spawn_loop(strcmp(argv[1], "help-first") == 0 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
        return 1;
    }
    test_clear_env();
    static const char *const policies[] = { "work-first", "help-first", "spawn-join" };
    for (int i = 0; i < 3; i++) {
        test_child r;
        test_run_self(&r, policies[i], NULL, NULL, NULL);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
            test_child_dump(policies[i], &r);
            CHECK(0);
        }
        printf("%s: %s", policies[i], r.out);
    }
    return 0;
}
