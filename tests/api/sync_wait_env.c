/* Tests the WEFT_WAIT wait policy: spin, futex and auto (and unset) all run
 * the same mixed workload correctly, with nothing on stderr; a malformed
 * value prints exactly one line naming the variable and falls back to auto.
 * The workload has plain threads wait (the policy's own path: spin, UMWAIT
 * where the CPU has it, futex) and user threads wait, on one worker and
 * on several, so under "futex" every wait sleeps at once and under "spin"
 * none sleeps in the kernel. */
#define _GNU_SOURCE
#include "sync_test.h"
#include "testutil.h"

static weft_mutex m = WEFT_MUTEX_INIT;
static weft_cond c = WEFT_COND_INIT;
static weft_barrier b;
static weft_sem s;
static int turn; /* under m: whose turn in the ping-pong */
static atomic_int plain_done;

#define ROUNDS 2000

/* Ping-pong through the condvar between a user thread and a plain thread,
 * then barrier episodes and semaphore hand-offs. */
static void *player(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(weft_mutex_lock(&m), 0);
        while (turn != me)
            CHECK_EQ(weft_cond_wait(&c, &m), 0);
        turn = 1 - me;
        CHECK_EQ(weft_cond_signal(&c), 0);
        CHECK_EQ(weft_mutex_unlock(&m), 0);
    }
    for (int i = 0; i < ROUNDS; i++)
        CHECK(weft_barrier_wait(&b) <= 0);
    for (int i = 0; i < ROUNDS; i++) {
        if (me == 0)
            CHECK_EQ(weft_sem_post(&s), 0);
        else
            CHECK_EQ(weft_sem_wait(&s), 0);
    }
    /* A timed wait that expires, through the policy's deadline path. */
    CHECK_EQ(weft_mutex_lock(&m), 0);
    struct timespec ts = st_deadline_ms(15);
    CHECK_EQ(weft_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    if (me == 1)
        atomic_store(&plain_done, 1);
    return NULL;
}

static int workload(int workers)
{
    st_init(workers);
    turn = 0;
    atomic_store(&plain_done, 0);
    CHECK_EQ(weft_barrier_init(&b, 2), 0);
    CHECK_EQ(weft_sem_init(&s, 0), 0);
    pthread_t p = st_pthread(player, (void *)1);
    weft_thread *u = st_spawn(player, (void *)0);
    st_join(u);
    st_pthread_join(p, &plain_done);
    CHECK_EQ(weft_sem_trywait(&s), EAGAIN);
    CHECK_EQ(weft_barrier_destroy(&b), 0);
    CHECK_EQ(weft_sem_destroy(&s), 0);
    st_finalize();
    return 0;
}

static void expect(const char *value, int notice)
{
    char env[64] = "WEFT_WAIT";
    if (value)
        snprintf(env, sizeof env, "WEFT_WAIT=%s", value);
    const char *vars[] = { env, NULL };
    test_child r;
    test_run_self(&r, "child", NULL, vars, NULL);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 ||
        (notice ? test_count_lines(r.err) != 1 || !strstr(r.err, "WEFT_WAIT") : r.err_len != 0)) {
        test_child_dump(value ? value : "(unset)", &r);
        CHECK(0);
    }
    CHECK(strstr(r.out, "child: ok") != NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        alarm(TEST_SANITIZED ? 240 : 60);
        workload(1);
        workload(2);
        printf("child: ok\n");
        return 0;
    }
    st_watchdog(120);
    expect(NULL, 0);
    expect("auto", 0);
    expect("spin", 0);
    expect("futex", 0);
    expect("sleep", 1);
    expect("", 0); /* empty counts as unset */
    printf("sync_wait_env: ok\n");
    return 0;
}
