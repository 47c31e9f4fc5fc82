/* Tests that a stack overflow of the initial thread ends the process (in a
 * child process) with the one-line report naming "main", not a bare
 * SIGSEGV, when the program changed RLIMIT_STACK after weft_init: lowered
 * to 1 MiB, the stack ends far above where it ended at weft_init; raised
 * from 1 MiB to 8 MiB, it ends far below. The report gives the stack size
 * the C library gives then (pthread_getattr_np). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define MIB   ((rlim_t)1 << 20)
#define ALARM 30

static void set_stack_limit(rlim_t bytes)
{
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_STACK, &rl), 0);
    rl.rlim_cur = bytes;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < bytes)
        exit(77); /* cannot be raised that far here */
    CHECK_EQ(setrlimit(RLIMIT_STACK, &rl), 0);
}

static int child(const char *mode, char **argv)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    rlim_t after;
    if (strcmp(mode, "lowered") == 0) {
        set_stack_limit(8 * MIB);
        after = MIB;
    } else if (strcmp(mode, "raised") == 0) {
        /* the stack's limit at exec is 1 MiB: start again with it */
        struct rlimit rl;
        CHECK_EQ(getrlimit(RLIMIT_STACK, &rl), 0);
        if (rl.rlim_cur != MIB) {
            set_stack_limit(MIB);
            execv("/proc/self/exe", argv);
            return 2;
        }
        after = 8 * MIB;
    } else {
        return 2;
    }
    test_init(2, WEFT_WORK_FIRST);
    set_stack_limit(after);
    printf("id=%llu size=%zu\n", (unsigned long long)weft_thread_id(weft_self()),
           test_own_stack_size());
    fflush(stdout);
    printf("%ld\n", test_runaway(0));
    weft_finalize();
    return 0; /* not reached: the overflow ends the process */
}

static void check_overflow(const char *mode)
{
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    test_run_self(r, mode, NULL, NULL, NULL);
    if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 77) {
        printf("%s: RLIMIT_STACK cannot be raised here, not checked\n", mode);
        free(r);
        return;
    }
    test_expect_overflow_report(r, mode, "\"main\"");
    printf("%s: %s", mode, r->err);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc >= 2)
        return child(argv[1], argv);
    if (TEST_SANITIZED)
        SKIP("sanitizers take SIGSEGV on a kernel thread's stack for their own report");
    test_clear_env();
    alarm(ALARM);
    check_overflow("lowered");
    check_overflow("raised");
    printf("threads_overflow_rlimit: ok\n");
    return 0;
}
