/* Tests that weft_attr.stack_size is respected: threads with large requested
 * stacks can use most of them, odd sizes and the 16 KiB minimum work, and
 * many threads with big stacks can be alive at once (stacks are reserved, not
 * committed). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* Touches about `bytes` of stack in nested 4 KiB frames; returns a checksum
 * that depends on every frame. */
static long __attribute__((noinline)) use_stack(size_t bytes, long salt)
{
    volatile char buf[4000];
    memset((char *)buf, (int)(salt & 0x7f), sizeof buf);
    buf[0] = (char)(bytes >> 12);
    if (bytes <= sizeof buf)
        return buf[0] + buf[sizeof buf - 1];
    long below = use_stack(bytes - sizeof buf, salt + 1);
    return below + buf[0] + buf[sizeof buf - 1];
}

static long expect_use(size_t bytes, long salt)
{
    long sum = 0;
    for (;;) {
        sum += (char)(bytes >> 12) + (salt & 0x7f);
        if (bytes <= 4000)
            return sum;
        bytes -= 4000;
        salt++;
    }
}

static void *deep(void *arg)
{
    size_t bytes = (size_t)(uintptr_t)arg;
    return (void *)(intptr_t)use_stack(bytes, 3);
}

static atomic_int gate, parked;

static void *deep_then_wait(void *arg)
{
    size_t bytes = (size_t)(uintptr_t)arg;
    long v = use_stack(bytes, 3);
    atomic_fetch_add(&parked, 1);
    while (!atomic_load(&gate))
        weft_yield();
    return (void *)(intptr_t)v;
}

static void run_one(size_t stack, size_t use)
{
    weft_attr a = WEFT_ATTR_INIT;
    a.stack_size = stack;
    weft_thread *t;
    void *res = NULL;
    int rc = weft_spawn(&t, deep, (void *)(uintptr_t)use, &a);
    if (rc != 0)
        fprintf(stderr, "spawn with stack_size %zu: %d\n", stack, rc);
    CHECK_EQ(rc, 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((long)(intptr_t)res, expect_use(use, 3));
}

int main(void)
{
    test_clear_env();
    for (int policy = 0; policy < 2; policy++) {
        test_init(2, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);

        run_one(1 << 20, 200 << 10); /* the case from the contract */
        run_one(1 << 20, 900 << 10);
        run_one(4 << 20, 3 << 20);
        run_one(16 << 20, 12 << 20);
        run_one(100000, 60000);     /* not a multiple of the page size */
        run_one(16 << 10, 4 << 10); /* the minimum */
        run_one(0, 40 << 10);       /* 0: the default, at least 64 KiB */

        /* 64 threads with 8 MiB stacks, each having used 1 MiB, alive at
         * once: 512 MiB reserved, 64 MiB touched. */
        enum { N = 64 };
        weft_thread *ts[N];
        weft_attr a = WEFT_ATTR_INIT;
        a.stack_size = 8 << 20;
        atomic_store(&gate, 0);
        atomic_store(&parked, 0);
        for (int i = 0; i < N; i++)
            CHECK_EQ(weft_spawn(&ts[i], deep_then_wait, (void *)(uintptr_t)(1 << 20), &a), 0);
        while (atomic_load(&parked) != N)
            weft_yield();
        atomic_store(&gate, 1);
        for (int i = 0; i < N; i++) {
            void *res;
            CHECK_EQ(weft_join(ts[i], &res), 0);
            CHECK_EQ((long)(intptr_t)res, expect_use(1 << 20, 3));
        }
        CHECK_EQ(weft_finalize(), 0);
    }
    return 0;
}
