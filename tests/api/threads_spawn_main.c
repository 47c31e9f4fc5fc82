/* Tests that a loop of spawns in the initial thread runs in parallel under
 * either spawn policy: the initial thread never leaves worker 0, so its
 * children must be queued where idle workers take them while it goes on
 * spawning. Each child spins until some child has run on worker 1; if
 * worker 1 never gets one, the child process hangs and its alarm fails it. */
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

int main(int argc, char **argv)
{
    if (argc > 1) {
        spawn_loop(strcmp(argv[1], "help-first") == 0 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
        return 1;
    }
    test_clear_env();
    static const char *const policies[] = { "work-first", "help-first" };
    for (int i = 0; i < 2; i++) {
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
