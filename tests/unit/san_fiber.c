/* TSan builds: the fiber-switch annotations keep each user thread's shadow
 * call stack balanced. A helper that announces the switch from inside an
 * instrumented frame pushes that frame on the fiber it leaves and pops it
 * from the fiber it resumes: a new thread's first resume then pops frames
 * it never pushed, its entry frame falls off the bottom of every stack TSan
 * reports for it, and TSan writes below the thread's shadow stack.
 *
 * Checked through a deliberate race, in a child process: a plain pthread
 * writes a global, then (with no synchronisation in between) a new user
 * thread writes it three calls deep; the report of the user thread's
 * access must show the frame that called the thread's function under its
 * three frames. Skipped outside TSan builds.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "weft.h"

#define SETTLE_US 50000 /* the pthread's write comes first (no synchronisation) */

int racy_shared;

static __attribute__((noinline)) void racy_leaf(void)
{
    racy_shared++;
}

static __attribute__((noinline)) void racy_mid(void)
{
    racy_leaf();
}

static void *racy_user(void *arg)
{
    racy_mid();
    return arg;
}

static void *racy_plain(void *arg)
{
    racy_shared++;
    return arg;
}

static int child(void)
{
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, racy_plain, NULL), 0);
    usleep(SETTLE_US);
    test_init(1, TEST_POLICY_ENV);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, racy_user, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    if (!TEST_TSAN)
        SKIP("a TSan build only");
    static const char *const env[] = { "TSAN_OPTIONS=halt_on_error=1", NULL };
    static test_child r;
    test_run_self(&r, "child", NULL, env, NULL);
    const char *report = strstr(r.err, "WARNING: ThreadSanitizer: data race");
    const char *user = report ? strstr(report, " racy_user ") : NULL;
    const char *next = user ? strchr(user, '\n') : NULL;
    if (!next || strncmp(next + 1, "    #3 ", 7) != 0) {
        test_child_dump("race report", &r);
        CHECK(!"the user thread's entry frame is missing from its stack");
    }
    printf("ok\n");
    return 0;
}
