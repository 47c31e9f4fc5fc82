/* Tests that the initial thread (the one that called weft_init), which can
 * only end in weft_finalize, cannot be joined or detached: weft_join of it
 * from a user thread, a bound thread or a plain kernel thread returns EINVAL
 * at once instead of blocking for ever, and weft_finalize then returns. A
 * hang fails through alarm(). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define TEST_ALARM_S 30

static weft_thread *initial;

static void *join_initial(void *arg)
{
    (void)arg;
    void *res = (void *)0x1;
    CHECK_EQ(weft_join(initial, &res), EINVAL);
    CHECK(res == (void *)0x1);
    CHECK_EQ(weft_detach(initial), EINVAL);
    return NULL;
}

static void run(int workers, int policy)
{
    test_init(workers, policy);
    initial = weft_self();
    CHECK(initial != NULL);
    CHECK_EQ(weft_join(initial, NULL), EDEADLK);

    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, join_initial, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);

    weft_attr bound = WEFT_ATTR_INIT;
    bound.bound = 1;
    CHECK_EQ(weft_spawn(&t, join_initial, NULL, &bound), 0);
    CHECK_EQ(weft_join(t, NULL), 0);

    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, join_initial, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);

    CHECK_EQ(weft_detach(initial), EINVAL);
    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    alarm(TEST_ALARM_S);
    run(1, WEFT_WORK_FIRST);
    run(2, WEFT_HELP_FIRST);
    return 0;
}
