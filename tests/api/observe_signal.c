/* Tests WEFT_DUMP_SIGNAL: in a child process, the signal makes the library
 * write the dump to stderr (a parked thread with its wait word), the
 * program goes on and exits 0; a malformed value is one notice. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static weft_sem sem;

static void *parked(void *a)
{
    CHECK_EQ(weft_sem_wait(&sem), 0);
    return a;
}

static int child(const char *sig)
{
    alarm(20); /* a hang is a failure */
    CHECK_EQ(weft_init(NULL), 0);
    CHECK_EQ(weft_sem_init(&sem, 0), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.name = "sig-parked";
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, parked, NULL, &a), 0);
    while (1) {
        weft_thread_info info;
        CHECK_EQ(weft_thread_info_get(t, &info), 0);
        if (info.state == WEFT_STATE_PARKED)
            break;
        weft_yield();
    }
    printf("id %llu\n", (unsigned long long)weft_thread_id(t));
    fflush(stdout);
    CHECK_EQ(kill(getpid(), atoi(sig)), 0);
    weft_sleep_ns(50 * 1000000ull); /* the program goes on meanwhile */
    CHECK_EQ(weft_sem_post(&sem), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0); /* waits for the dump asked for */
    printf("finished\n");
    return 0;
}

static void expect_dump(const char *value, int signo)
{
    char num[16];
    snprintf(num, sizeof num, "%d", signo);
    char env[64];
    snprintf(env, sizeof env, "WEFT_DUMP_SIGNAL=%s", value);
    const char *const e[] = { env, "WEFT_WORKERS=2", NULL };
    test_child r;
    test_run_self(&r, "child", num, e, NULL);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || !strstr(r.out, "finished"))
        fprintf(stderr, "child (%s): status %d\nout:\n%s\nerr:\n%s\n", value, r.status, r.out,
                r.err);
    CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    CHECK(strstr(r.out, "finished") != NULL);
    unsigned long long id = 0;
    CHECK(sscanf(r.out, "id %llu", &id) == 1);
    char key[64];
    snprintf(key, sizeof key, "thread %llu \"sig-parked\": parked on sem", id);
    if (!strstr(r.err, key))
        fprintf(stderr, "no \"%s\" in:\n%s\n", key, r.err);
    CHECK(strstr(r.err, key) != NULL);
    CHECK(strstr(r.err, "weft dump end") != NULL);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child(argv[2]);
    expect_dump("USR1", SIGUSR1);
    expect_dump("QUIT", SIGQUIT);
    expect_dump("SIGUSR2", SIGUSR2);
    expect_dump("usr1", SIGUSR1);
    char num[16];
    snprintf(num, sizeof num, "%d", SIGRTMIN + 1);
    expect_dump(num, SIGRTMIN + 1);

    /* malformed: one notice naming the variable, and no dump service */
    const char *const e[] = { "WEFT_DUMP_SIGNAL=BOGUS", NULL };
    test_child r;
    test_run_self(&r, "child", "0", e, NULL);
    CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    CHECK(strstr(r.err, "WEFT_DUMP_SIGNAL") != NULL);
    CHECK(strstr(r.err, "weft dump") == NULL);
    return 0;
}
