/* Tests the soft cap on spare kernel threads behind weft_blocking: with the
 * cap lowered to 2, 16 user threads on one worker block at once in read(2)
 * calls that only the initial thread can satisfy. Every call still gets a
 * kernel thread of its own (none waits for another to come back, none runs
 * in place: the worker keeps running, or the initial thread could never
 * feed them); every call completes with its own byte, and once they have
 * returned the spare machines past the cap end. */
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "policy/machine.h"
#include "weft.h"

#define N       16
#define SOFT    2
#define ALARM_S 60
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
    alarm(ALARM_S);
    weft__machines_set_max(SOFT);
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
    CHECK(st.io_handoffs >= N);
    CHECK_EQ(st.io_offloaded, 0);
    /* the machines past the cap end as their calls return */
    while (weft__machines_spares() > SOFT)
        weft_yield();
    CHECK_EQ(weft_finalize(), 0);
    weft__machines_set_max(0);
    for (int i = 0; i < N; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
    return 0;
}
