/* Tests that weft_exit called from a plain kernel thread (there is no user
 * thread to end), with the runtime running or not, prints an error and aborts
 * the process (checked in a child process). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *plain_exit(void *arg)
{
    weft_exit(arg);
}

static int child(const char *mode)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    if (strcmp(mode, "pthread") == 0) {
        CHECK_EQ(weft_init(NULL), 0);
        pthread_t pt;
        CHECK_EQ(pthread_create(&pt, NULL, plain_exit, NULL), 0);
        CHECK_EQ(test_pthread_join(pt, NULL), 0);
        weft_finalize();
        return 0;
    }
    if (strcmp(mode, "stopped") == 0)
        weft_exit(NULL);
    return 2;
}

static void expect_abort(const char *mode)
{
    test_child *r = test_run_mode(mode);
    CHECK_CHILD(WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT && r->err_len != 0, mode,
                r, "weft_exit outside a user thread must print an error and abort");
    free(r);
}

int main(int argc, char **argv)
{
    test_main_or_child(argc, argv, child);
    expect_abort("pthread");
    expect_abort("stopped");
    return 0;
}
