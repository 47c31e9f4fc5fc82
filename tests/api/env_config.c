/* Tests the environment variables WEFT_WORKERS, WEFT_STACK_SIZE (with K/M
 * suffixes) and WEFT_SPAWN_POLICY, through weft_config_default and
 * weft_init(NULL), by re-running this binary with a given environment: valid
 * values are applied silently, a malformed value prints one line on stderr
 * naming the variable and the default is kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "env_test.h"
#include "testutil.h"

/* ---- child side -------------------------------------------------------- */

static void *ret_policy_probe(void *arg)
{
    *(int *)arg = 1;
    return NULL;
}

/* weft_init(NULL) only (one read of the environment), then prints the
 * number of workers and the observable spawn policy: with one worker, a
 * work-first spawn has run the child when weft_spawn returns, a help-first
 * spawn has not. With arg "deep" it also runs a thread using 700 KiB of
 * stack (needs WEFT_STACK_SIZE large enough). */
static int child_init(const char *arg)
{
    CHECK_EQ(weft_init(NULL), 0);
    int n = weft_num_workers();
    int ran = -1;
    if (n == 1) {
        int flag = 0;
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, ret_policy_probe, &flag, NULL), 0);
        ran = *(volatile int *)&flag;
        CHECK_EQ(weft_join(t, NULL), 0);
        CHECK_EQ(flag, 1);
    }
    if (arg && strcmp(arg, "deep") == 0) {
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, test_deep, (void *)(uintptr_t)(700u << 10), NULL), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    }
    CHECK_EQ(weft_finalize(), 0);
    printf("num_workers=%d child_ran_first=%d\n", n, ran);
    return 0;
}

/* weft_init with an explicit configuration (not from weft_config_default)
 * uses it as given: one worker, work-first. */
static int child_explicit(void)
{
    weft_config cfg = { 1, 0, WEFT_WORK_FIRST, 0 };
    CHECK_EQ(weft_init(&cfg), 0);
    int n = weft_num_workers();
    int flag = 0;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, ret_policy_probe, &flag, NULL), 0);
    int ran = *(volatile int *)&flag;
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    printf("num_workers=%d child_ran_first=%d\n", n, ran);
    return 0;
}

/* ---- parent side ------------------------------------------------------- */

static void run_init(const char *const *env, const char *arg, const cpu_set_t *cpus, test_child *r,
                     int *workers, int *ran_first)
{
    test_run_self(r, "init", arg, env, cpus);
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0 ||
        sscanf(r->out, "num_workers=%d child_ran_first=%d", workers, ran_first) != 2) {
        test_child_dump("init", r);
        CHECK(!"child failed");
    }
}

static void expect_silent(const test_child *r)
{
    if (r->err_len != 0) {
        test_child_dump("expected no stderr", r);
        CHECK(r->err_len == 0);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "config") == 0)
        return env_test_child_config();
    if (argc >= 2 && strcmp(argv[1], "init") == 0)
        return child_init(argc >= 3 ? argv[2] : NULL);
    if (argc >= 2 && strcmp(argv[1], "explicit") == 0)
        return child_explicit();

    test_clear_env();
    int ncpu = test_affinity_cpus();
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);

    /* Defaults: no variable set. */
    const char *const none[] = { NULL };
    cfg_out def = run_config(none, r);
    expect_silent(r);
    CHECK(def.workers == 0 || def.workers == ncpu);
    CHECK(def.stack == 0 || def.stack >= 64 * 1024);
    CHECK_EQ(def.policy, WEFT_WORK_FIRST);

    /* Valid values. */
    {
        const char *const e[] = { "WEFT_WORKERS=3", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.workers, 3);
        CHECK_EQ(c.stack, def.stack);
        CHECK_EQ(c.policy, def.policy);
    }
    {
        const char *const e[] = { "WEFT_WORKERS=0", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK(c.workers == 0 || c.workers == ncpu);
    }
    {
        const char *const e[] = { "WEFT_STACK_SIZE=200000", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.stack, 200000);
        CHECK_EQ(c.workers, def.workers);
    }
    {
        /* 0: the library default, silently (as stack_size 0 in weft_config) */
        const char *const e[] = { "WEFT_STACK_SIZE=0", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.stack, def.stack);
    }
    {
        const char *const e[] = { "WEFT_STACK_SIZE=256K", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.stack, 256 * 1024);
    }
    {
        const char *const e[] = { "WEFT_STACK_SIZE=2M", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.stack, 2 * 1024 * 1024);
    }
    {
        const char *const e[] = { "WEFT_SPAWN_POLICY=help-first", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.policy, WEFT_HELP_FIRST);
        CHECK_EQ(c.workers, def.workers);
        CHECK_EQ(c.stack, def.stack);
    }
    {
        const char *const e[] = { "WEFT_SPAWN_POLICY=work-first", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.policy, WEFT_WORK_FIRST);
    }
    {
        const char *const e[] = { "WEFT_WORKERS=2", "WEFT_STACK_SIZE=1M",
                                  "WEFT_SPAWN_POLICY=help-first", NULL };
        cfg_out c = run_config(e, r);
        expect_silent(r);
        CHECK_EQ(c.workers, 2);
        CHECK_EQ(c.stack, 1 << 20);
        CHECK_EQ(c.policy, WEFT_HELP_FIRST);
    }

    /* Malformed values: one line naming the variable, field at default,
     * the other variables still applied. */
    static const char *const bad_workers[] = { "abc", "-3", "3x", "", "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad_workers / sizeof *bad_workers; i++) {
        cfg_out c =
            run_config_var("WEFT_WORKERS", bad_workers[i], "WEFT_SPAWN_POLICY=help-first", r);
        if (bad_workers[i][0] == '\0' && r->err_len == 0) {
            /* An empty variable may be treated as unset. */
            CHECK_EQ(c.workers, def.workers);
            continue;
        }
        expect_one_line(r, "WEFT_WORKERS");
        CHECK_EQ(c.workers, def.workers);
        CHECK_EQ(c.stack, def.stack);
        CHECK_EQ(c.policy, WEFT_HELP_FIRST);
    }
    static const char *const bad_stack[] = { "12Q", "K", "-5", "1.5M", "huge", "" };
    for (size_t i = 0; i < sizeof bad_stack / sizeof *bad_stack; i++) {
        cfg_out c = run_config_var("WEFT_STACK_SIZE", bad_stack[i], "WEFT_WORKERS=2", r);
        if (bad_stack[i][0] == '\0' && r->err_len == 0) {
            CHECK_EQ(c.stack, def.stack);
            continue;
        }
        expect_one_line(r, "WEFT_STACK_SIZE");
        CHECK_EQ(c.stack, def.stack);
        CHECK_EQ(c.workers, 2);
        CHECK_EQ(c.policy, def.policy);
    }
    static const char *const bad_policy[] = { "sideways", "help", "1", "work-firstx" };
    for (size_t i = 0; i < sizeof bad_policy / sizeof *bad_policy; i++) {
        cfg_out c = run_config_var("WEFT_SPAWN_POLICY", bad_policy[i], "WEFT_STACK_SIZE=128K", r);
        expect_one_line(r, "WEFT_SPAWN_POLICY");
        CHECK_EQ(c.policy, def.policy);
        CHECK_EQ(c.stack, 128 * 1024);
        CHECK_EQ(c.workers, def.workers);
    }

    /* weft_init(NULL) applies the environment. */
    int workers, ran;
    run_init(none, NULL, NULL, r, &workers, &ran);
    expect_silent(r);
    CHECK_EQ(workers, ncpu);
    {
        const char *const e[] = { "WEFT_WORKERS=3", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_silent(r);
        CHECK_EQ(workers, 3);
    }
    {
        const char *const e[] = { "WEFT_WORKERS=1", "WEFT_SPAWN_POLICY=work-first", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_silent(r);
        CHECK_EQ(workers, 1);
        CHECK_EQ(ran, 1);
    }
    {
        const char *const e[] = { "WEFT_WORKERS=1", "WEFT_SPAWN_POLICY=help-first", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_silent(r);
        CHECK_EQ(workers, 1);
        CHECK_EQ(ran, 0);
    }
    {
        /* Malformed policy at init: default (work-first) is used. */
        const char *const e[] = { "WEFT_WORKERS=1", "WEFT_SPAWN_POLICY=sideways", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_one_line(r, "WEFT_SPAWN_POLICY");
        CHECK_EQ(workers, 1);
        CHECK_EQ(ran, 1);
    }
    {
        const char *const e[] = { "WEFT_WORKERS=abc", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_one_line(r, "WEFT_WORKERS");
        CHECK_EQ(workers, ncpu);
    }
    {
        const char *const e[] = { "WEFT_WORKERS=-3", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_one_line(r, "WEFT_WORKERS");
        CHECK_EQ(workers, ncpu);
    }
    {
        /* WEFT_STACK_SIZE=1M is the default stack of every thread. */
        const char *const e[] = { "WEFT_STACK_SIZE=1M", "WEFT_WORKERS=2", NULL };
        run_init(e, "deep", NULL, r, &workers, &ran);
        expect_silent(r);
        CHECK_EQ(workers, 2);
    }
    {
        const char *const e[] = { "WEFT_STACK_SIZE=12Q", "WEFT_WORKERS=2", NULL };
        run_init(e, NULL, NULL, r, &workers, &ran);
        expect_one_line(r, "WEFT_STACK_SIZE");
        CHECK_EQ(workers, 2);
    }
    if (ncpu >= 2) {
        /* No variable, one CPU in the affinity mask: one worker. */
        cpu_set_t all, one;
        CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
        CPU_ZERO(&one);
        for (int c = CPU_SETSIZE - 1; c >= 0; c--)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &one);
                break;
            }
        run_init(none, NULL, &one, r, &workers, &ran);
        expect_silent(r);
        CHECK_EQ(workers, 1);
    }

    /* An explicit configuration is used as given, whatever the environment. */
    {
        const char *const e[] = { "WEFT_WORKERS=2", "WEFT_SPAWN_POLICY=help-first", NULL };
        test_run_self(r, "explicit", NULL, e, NULL);
        if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0 ||
            sscanf(r->out, "num_workers=%d child_ran_first=%d", &workers, &ran) != 2) {
            test_child_dump("explicit", r);
            CHECK(!"child failed");
        }
        CHECK_EQ(workers, 1);
        CHECK_EQ(ran, 1);
    }
    free(r);
    return 0;
}
