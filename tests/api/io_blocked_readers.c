/* io_blocked_readers.c: 10,000 user threads blocked in weft_read on pipes
 * (1,200 under TSan) are all released by writer threads that start only
 * once every reader waits, in both I/O modes (io_uring and WEFT_IO=blocking).
 *
 * Four readers share each pipe, so the same descriptor has several waiters.
 * With one kernel thread per blocked call and a bound on them, the readers
 * past the bound would wait for a kernel thread, and so would the writers
 * (and weft_sleep_ns): the program would stop for good. Nor may a waiting
 * reader hold a kernel thread of its own (far fewer hand-offs than
 * readers). Each mode runs in a child process bounded by alarm(), so a hang
 * is a failure. The descriptors needed (the pipes', and one per waiting
 * reader, with room to spare) must fit RLIMIT_NOFILE, raised if need be;
 * the test is skipped where it cannot be.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>

#include "testutil.h"

#define NREADERS      (TEST_TSAN ? 1200 : 10000)
#define PER_PIPE      4 /* readers sharing one pipe */
#define NPIPES        (NREADERS / PER_PIPE)
#define NWRITERS      8
#define FD_SLACK      256 /* descriptors beyond the pipes' and the waits': stdio, rings, pollers */
#define CHILD_ALARM_S (TEST_SANITIZED ? 120 : 40)

static int pipes[NPIPES][2];
static atomic_int waiting; /* readers about to read */
static atomic_int done;    /* readers that read their byte */
static atomic_long sum;    /* bytes read, added up */

static void *reader(void *arg)
{
    int p = (int)(intptr_t)arg / PER_PIPE;
    unsigned char c = 0;
    atomic_fetch_add(&waiting, 1);
    CHECK_EQ(weft_read(pipes[p][0], &c, 1), 1);
    atomic_fetch_add(&sum, c);
    atomic_fetch_add(&done, 1);
    return NULL;
}

/* Writer k feeds the pipes k, k + NWRITERS, ...: one byte per reader. */
static void *writer(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (int p = k; p < NPIPES; p += NWRITERS)
        for (int r = 0; r < PER_PIPE; r++) {
            unsigned char c = (unsigned char)(p % 100 + 1);
            CHECK_EQ(weft_write(pipes[p][1], &c, 1), 1);
        }
    return NULL;
}

static int child(void)
{
    alarm(CHILD_ALARM_S);
    test_init(2, TEST_POLICY_ENV);
    long expect = 0;
    for (int p = 0; p < NPIPES; p++) {
        CHECK_EQ(pipe(pipes[p]), 0);
        expect += PER_PIPE * (p % 100 + 1);
    }
    static weft_thread *r[NREADERS];
    for (int i = 0; i < NREADERS; i++)
        CHECK_EQ(weft_spawn(&r[i], reader, (void *)(intptr_t)i, NULL), 0);
    while (atomic_load(&waiting) < NREADERS)
        weft_yield();
    /* let the last ones reach the kernel; needs no free kernel thread */
    CHECK_EQ(weft_sleep_ns(20 * 1000000ull), 0);
    CHECK_EQ(atomic_load(&done), 0);
    weft_thread *w[NWRITERS];
    for (int k = 0; k < NWRITERS; k++)
        CHECK_EQ(weft_spawn(&w[k], writer, (void *)(intptr_t)k, NULL), 0);
    for (int k = 0; k < NWRITERS; k++)
        CHECK_EQ(weft_join(w[k], NULL), 0);
    for (int i = 0; i < NREADERS; i++)
        CHECK_EQ(weft_join(r[i], NULL), 0);
    CHECK_EQ(atomic_load(&done), NREADERS);
    CHECK_EQ(atomic_load(&sum), expect);
    /* a waiting reader holds no kernel thread of its own */
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.io_handoffs < NREADERS / 2);
    CHECK_EQ(weft_finalize(), 0);
    for (int p = 0; p < NPIPES; p++) {
        close(pipes[p][0]);
        close(pipes[p][1]);
    }
    printf("ok\n");
    return 0;
}

/* Raises RLIMIT_NOFILE to what the readers need (inherited by the
 * children); 0 if it cannot be. */
static int enough_fds(void)
{
    /* the library keeps a sixteenth of the space for the program */
    rlim_t need = (2 * NPIPES + NREADERS) * 17 / 16 + FD_SLACK;
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        rl.rlim_cur = need;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
            rl.rlim_max = need; /* allowed with CAP_SYS_RESOURCE only */
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    if (!enough_fds())
        SKIP("RLIMIT_NOFILE cannot be raised to what the readers need");
    static const char *const modes[][2] = { { "WEFT_IO=uring", NULL },
                                            { "WEFT_IO=blocking", NULL } };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        static test_child r;
        test_run_self(&r, "child", NULL, modes[m], NULL);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || strcmp(r.out, "ok\n") != 0) {
            test_child_dump(modes[m][0], &r);
            CHECK(!"child failed");
        }
    }
    printf("ok\n");
    return 0;
}
