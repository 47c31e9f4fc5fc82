/* Tests the overflow path of weft_blocking: with the bound on spare kernel
 * threads lowered to 2, 16 user threads on one worker block at once in
 * read(2) calls that only the initial thread can satisfy. Two calls are
 * handed off; the rest park and wait for a machine (the worker keeps
 * running, or the initial thread could never feed them); every call
 * completes with its own byte, and the counters show both paths. */
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "sched/machine.h"
#include "weft.h"

#define N 16
static int pipes[N][2];

static void read_one(void *arg)
{
    int i = (int)(intptr_t)arg;
    char c = 0;
    CHECK_EQ(read(pipes[i][0], &c, 1), 1);
    CHECK_EQ(c, 'a' + i);
}

static void *blocker(void *arg)
{
    CHECK_EQ(weft_blocking(read_one, arg), 0);
    return arg;
}

int main(void)
{
    weft__machines_set_max(2);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_thread *t[N];
    for (int i = 0; i < N; i++) {
        CHECK_EQ(pipe(pipes[i]), 0);
        CHECK_EQ(weft_spawn(&t[i], blocker, (void *)(intptr_t)i, NULL), 0);
    }
    for (int i = 0; i < N; i++) {
        char c = (char)('a' + i);
        CHECK_EQ(weft_write(pipes[i][1], &c, 1), 1);
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(weft_join(t[i], NULL), 0);
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.io_handoffs >= 1);
    CHECK(st.io_offloaded >= 1);
    CHECK_EQ(weft_finalize(), 0);
    weft__machines_set_max(0);
    for (int i = 0; i < N; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
    return 0;
}
