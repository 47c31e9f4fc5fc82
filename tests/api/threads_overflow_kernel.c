/* Tests that a stack overflow on a kernel thread's own stack, in a bound
 * thread or in the initial thread, ends the process (in a child process)
 * with the same one line as on a user thread's stack: "overflow", the
 * thread's id and name and its stack size, then SIGABRT, not a bare
 * SIGSEGV. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { BOUND_STACK = 65536, BOUND_S = 30 };

static void say_who(size_t size)
{
    printf("id=%llu size=%zu\n", (unsigned long long)weft_thread_id(weft_self()), size);
    fflush(stdout);
}

static void *bound_overflow(void *arg)
{
    say_who(BOUND_STACK);
    return (void *)test_runaway(0);
}

static int child(const char *mode)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    test_init(2, WEFT_WORK_FIRST);
    if (strcmp(mode, "bound") == 0) {
        weft_attr a = WEFT_ATTR_INIT;
        a.bound = 1;
        a.stack_size = BOUND_STACK;
        a.name = "bound-diver";
        weft_thread *t;
        CHECK_EQ(weft_spawn(&t, bound_overflow, NULL, &a), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    } else if (strcmp(mode, "initial") == 0) {
        say_who(test_own_stack_size());
        printf("%ld\n", test_runaway(0));
    } else {
        return 2;
    }
    weft_finalize();
    return 0; /* not reached: the overflow ends the process */
}

static void check_overflow(const char *mode, const char *name)
{
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    test_run_self(r, mode, NULL, NULL, NULL);
    test_expect_overflow_report(r, mode, name);
    printf("%s: %s", mode, r->err);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc >= 2)
        return child(argv[1]);
    if (TEST_SANITIZED)
        SKIP("sanitizers take SIGSEGV on a kernel thread's stack for their own report");
    test_clear_env();
    alarm(BOUND_S);
    check_overflow("bound", "\"bound-diver\"");
    check_overflow("initial", "\"main\"");
    printf("threads_overflow_kernel: ok\n");
    return 0;
}
