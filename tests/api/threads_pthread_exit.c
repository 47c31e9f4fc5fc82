/* Tests that pthread_exit() called in a user thread, which would end the
 * worker's kernel thread under every user thread it runs, ends the process
 * with a one-line "weft: " message naming the call (SIGABRT) instead of
 * hanging it: for a thread started at once (work-first) or queued
 * (help-first), from a nested frame, on 1 and 2 workers, in a bound
 * thread, inside a weft_blocking callback, and in the initial thread. Each case runs in a child
 * process whose alarm() turns a hang into SIGALRM. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define CHILD_ALARM_S 10

static __attribute__((noinline)) void inner_exit(void)
{
    pthread_exit((void *)0x5);
}

static __attribute__((noinline)) int nested_exit(volatile int depth)
{
    inner_exit();
    return depth;
}

static void *call_pthread_exit(void *arg)
{
    (void)arg;
    weft_yield();
    return (void *)(intptr_t)nested_exit(3);
}

static void exit_in_call(void *arg)
{
    (void)arg;
    pthread_exit(NULL);
}

static void *blocking_exit(void *arg)
{
    weft_blocking(exit_in_call, arg);
    return NULL;
}

static int child(const char *mode)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    alarm(CHILD_ALARM_S);
    weft_fn fn = call_pthread_exit;
    weft_attr attr = WEFT_ATTR_INIT;
    int workers = 1, policy = WEFT_WORK_FIRST;
    if (strcmp(mode, "help-first") == 0)
        policy = WEFT_HELP_FIRST;
    else if (strcmp(mode, "two-workers") == 0)
        workers = 2;
    else if (strcmp(mode, "bound") == 0)
        attr.bound = 1;
    else if (strcmp(mode, "blocking") == 0)
        fn = blocking_exit;
    else if (strcmp(mode, "initial") == 0)
        workers = 2;
    else if (strcmp(mode, "work-first") != 0)
        return 2;
    test_init(workers, policy);
    if (strcmp(mode, "initial") == 0)
        pthread_exit(NULL); /* the initial thread, on weft_init's kernel thread */
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, fn, NULL, &attr), 0);
    weft_join(t, NULL);
    weft_finalize();
    return 0; /* the call was not caught */
}

static void expect_abort(const char *mode)
{
    test_child *r = test_run_mode(mode);
    /* TSan's pthread_exit refuses to run on a fiber (a user thread's stack)
     * and ends the process itself (exit 66) before weft sees the unwind. */
    int tsan_stop = TEST_TSAN && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 66 &&
                    strstr(r->err, "ThreadSanitizer") && strstr(r->err, "pthread_exit");
    CHECK_CHILD(tsan_stop || (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT &&
                              strncmp(r->err, "weft: ", 6) == 0 && strstr(r->err, "pthread_exit") &&
                              test_count_lines(r->err) == 1),
                mode, r, "pthread_exit in a user thread must abort with one weft: line");
    free(r);
}

int main(int argc, char **argv)
{
    test_main_or_child(argc, argv, child);
    static const char *const modes[] = { "work-first", "help-first", "two-workers",
                                         "bound",      "blocking",   "initial" };
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        expect_abort(modes[i]);
    return 0;
}
