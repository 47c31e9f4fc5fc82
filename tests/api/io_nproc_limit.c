/* io_nproc_limit.c: with RLIMIT_NPROC so low that no kernel thread can be
 * created, weft_init with two workers fails with an error, and with one
 * worker weft_blocking and the weft_* calls still finish, in both I/O modes:
 * the calls run in place on the worker (stalling it), after one line on
 * stderr that says so.
 *
 * Each mode runs in a child process bounded by alarm(), so a hang is a
 * failure. The limit counts the processes of the real user; root is exempt,
 * so a child started as root moves to the "nobody" user first. Where the
 * limit cannot be made to bite, the test is skipped.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define NOBODY        65534
#define CHILD_ALARM_S 30
#define NOTICE        "no kernel thread for a blocking call"
#define NAP_NS        1000000L

static void *probe(void *arg)
{
    return arg;
}

/* Lowers RLIMIT_NPROC to 1; 0 if thread creation still works after. */
static int limit_threads(void)
{
    struct rlimit rl = { 1, 1 };
    if (setrlimit(RLIMIT_NPROC, &rl) != 0)
        return 0;
    if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
        return 0;
    pthread_t pt;
    if (pthread_create(&pt, NULL, probe, NULL) == 0) {
        pthread_join(pt, NULL);
        return 0;
    }
    return 1;
}

static int pipes[2];

static void nap(void *arg)
{
    struct timespec ts = { 0, NAP_NS };
    nanosleep(&ts, NULL);
    *(int *)arg = 1;
}

static void read_one(void *arg)
{
    CHECK_EQ(read(pipes[0], arg, 1), 1);
}

/* Every call here would wait for ever for a kernel thread, or finishes. */
static void *calls(void *arg)
{
    int napped = 0;
    CHECK_EQ(weft_blocking(nap, &napped), 0);
    CHECK_EQ(napped, 1);
    char c = 0;
    CHECK_EQ(write(pipes[1], "b", 1), 1);
    CHECK_EQ(weft_blocking(read_one, &c), 0);
    CHECK_EQ(c, 'b');
    CHECK_EQ(weft_write(pipes[1], "w", 1), 1);
    CHECK_EQ(weft_read(pipes[0], &c, 1), 1);
    CHECK_EQ(c, 'w');
    CHECK_EQ(weft_sleep_ns(NAP_NS), 0);
    CHECK_EQ(weft_poll(pipes[1], POLLOUT, 1000), POLLOUT);
    return arg;
}

static int child(void)
{
    if (!limit_threads())
        return 77;
    alarm(CHILD_ALARM_S);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2; /* worker 1 needs a kernel thread */
    CHECK(weft_init(&cfg) != 0);
    cfg.workers = 1;
    CHECK_EQ(weft_init(&cfg), 0);
    CHECK_EQ(pipe(pipes), 0);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, calls, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    calls(NULL); /* the initial thread, on the main kernel thread */
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.io_offloaded >= 2);
    CHECK_EQ(weft_finalize(), 0);
    printf("ok\n");
    return 0;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    /* LeakSanitizer needs a thread of its own at exit */
    static const char *const modes[][3] = {
        { "WEFT_IO=uring", TEST_ASAN ? "ASAN_OPTIONS=detect_leaks=0" : NULL, NULL },
        { "WEFT_IO=blocking", TEST_ASAN ? "ASAN_OPTIONS=detect_leaks=0" : NULL, NULL },
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        static test_child r;
        test_run_self(&r, "child", NULL, modes[m], NULL);
        if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 77)
            SKIP("RLIMIT_NPROC does not stop thread creation here");
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || strcmp(r.out, "ok\n") != 0 ||
            count(r.err, NOTICE) != 1) {
            test_child_dump(modes[m][0], &r);
            CHECK(!"child failed");
        }
    }
    printf("ok\n");
    return 0;
}
