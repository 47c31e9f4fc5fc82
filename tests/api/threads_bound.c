/* Tests bound user threads (weft_attr.bound): they run on a kernel thread of
 * their own, so they may block in the kernel without stalling the workers;
 * they are user threads (weft_self, ids, names) that spawn, join, yield, are
 * joined and detached like any other, and weft_finalize waits for them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *times5(void *arg)
{
    return (void *)((intptr_t)arg * 5);
}

/* Blocks in read() on a pipe: only its own kernel thread waits. */
static void *blocking_reader(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char c = 0;
    CHECK(weft_self() != NULL);
    CHECK_EQ(read(fd, &c, 1), 1);
    return (void *)(intptr_t)c;
}

/* A bound thread using the thread API. */
static void *bound_worker(void *arg)
{
    (void)arg;
    weft_thread *self = weft_self();
    CHECK(self != NULL);
    CHECK(weft_thread_id(self) != 0);
    CHECK(weft_thread_name(self) != NULL && strcmp(weft_thread_name(self), "bound-one") == 0);
    long sum = 0;
    for (intptr_t i = 0; i < 50; i++) {
        weft_thread *t;
        void *res;
        CHECK_EQ(weft_spawn(&t, times5, (void *)i, NULL), 0);
        weft_yield();
        CHECK_EQ(weft_join(t, &res), 0);
        sum += (intptr_t)res;
    }
    CHECK_EQ(weft_join(self, NULL), EDEADLK);
    return (void *)(intptr_t)sum;
}

static atomic_int detached_done;

static void *bound_sleeper(void *arg)
{
    (void)arg;
    usleep(20000);
    atomic_fetch_add(&detached_done, 1);
    return NULL;
}

static void run(int policy)
{
    test_init(1, policy);

    weft_attr b = WEFT_ATTR_INIT;
    b.bound = 1;
    weft_thread *t;
    void *res = NULL;

    /* Result passing. */
    CHECK_EQ(weft_spawn(&t, times5, (void *)(intptr_t)9, &b), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, 45);

    /* Joining a bound thread that has long finished (and detaching one). */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(weft_spawn(&t, times5, (void *)(intptr_t)i, &b), 0);
        double until = check_now() + 0.02;
        while (check_now() < until)
            weft_yield();
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((intptr_t)res, 5 * i);
    }
    CHECK_EQ(weft_spawn(&t, times5, NULL, &b), 0);
    usleep(20000);
    CHECK_EQ(weft_detach(t), 0);

    /* A bound thread blocked in read() does not stall the only worker. */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK_EQ(weft_spawn(&t, blocking_reader, (void *)(intptr_t)p[0], &b), 0);
    for (intptr_t i = 0; i < 100; i++) {
        weft_thread *u;
        CHECK_EQ(weft_spawn(&u, times5, (void *)i, NULL), 0);
        CHECK_EQ(weft_join(u, &res), 0);
        CHECK_EQ((intptr_t)res, 5 * i);
    }
    CHECK_EQ(write(p[1], "x", 1), 1);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, 'x');
    close(p[0]);
    close(p[1]);

    /* The thread API from a bound thread. */
    b.name = "bound-one";
    CHECK_EQ(weft_spawn(&t, bound_worker, NULL, &b), 0);
    CHECK(strcmp(weft_thread_name(t), "bound-one") == 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, 5 * 49 * 50 / 2);
    b.name = NULL;

    /* A bound thread with a big stack. (glibc carves static TLS from the top
     * of a pthread stack, and TSan's per-thread state lives there: give it
     * room.) */
    b.stack_size = TEST_TSAN ? 4 << 20 : 1 << 20;
    CHECK_EQ(weft_spawn(&t, test_deep, (void *)(uintptr_t)(600u << 10), &b), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    b.stack_size = 0;

    /* Detached bound threads, later and at spawn; finalize waits for them. */
    atomic_store(&detached_done, 0);
    CHECK_EQ(weft_spawn(&t, bound_sleeper, NULL, &b), 0);
    CHECK_EQ(weft_detach(t), 0);
    b.detached = 1;
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_spawn(NULL, bound_sleeper, NULL, &b), 0);
    CHECK_EQ(weft_finalize(), 0);
    CHECK_EQ(atomic_load(&detached_done), 4);
}

int main(void)
{
    test_clear_env();
    run(WEFT_WORK_FIRST);
    run(WEFT_HELP_FIRST);
    return 0;
}
