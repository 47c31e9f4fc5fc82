/* rlimit_as.c: with RLIMIT_AS a little above what the process already
 * maps, weft_init and weft_spawn return errors when memory runs out, and
 * never crash or hang; what did start works: user threads spawned until
 * the first error all run and are joined, weft_blocking and the weft_*
 * calls finish (in place if no kernel thread can be had), and
 * weft_finalize returns 0. Each limit runs in a child process bounded by
 * alarm(), in both I/O modes. Skipped under sanitizers, whose shadow
 * memory needs far more address space than any such limit allows.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define CHILD_ALARM_S 30
#define MAX_THREADS   20000
#define NAP_NS        100000L

/* Address space allowed beyond what the child maps when it starts: a
 * sweep, since which step runs out first depends on the layout. */
#define HEADROOM_STEP_KIB 256
#define HEADROOM_MAX_KIB  16384
#define HEADROOM_BIG_KIB  65536

static weft_sem go;
static int pipes[2];

static void *parked(void *arg)
{
    CHECK_EQ(weft_sem_wait(&go), 0);
    return arg;
}

static void nap(void *arg)
{
    struct timespec ts = { 0, NAP_NS };
    nanosleep(&ts, NULL);
    *(int *)arg = 1;
}

static void *calls(void *arg)
{
    int napped = 0;
    CHECK_EQ(weft_blocking(nap, &napped), 0);
    CHECK_EQ(napped, 1);
    char c = 0;
    CHECK_EQ(weft_write(pipes[1], "m", 1), 1);
    CHECK_EQ(weft_read(pipes[0], &c, 1), 1);
    CHECK_EQ(c, 'm');
    CHECK_EQ(weft_sleep_ns(NAP_NS), 0);
    return arg;
}

static long mapped_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0;
    CHECK(f != NULL);
    CHECK(fscanf(f, "%ld", &pages) == 1);
    fclose(f);
    return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

static int errno_value(int rc)
{
    return rc == ENOMEM || rc == EAGAIN;
}

static int child(long headroom)
{
    alarm(CHILD_ALARM_S);
    static weft_thread *t[MAX_THREADS];
    CHECK_EQ(pipe(pipes), 0);
    struct rlimit rl = { (rlim_t)(mapped_kib() + headroom) * 1024, RLIM_INFINITY };
    CHECK_EQ(setrlimit(RLIMIT_AS, &rl), 0);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2;
    int rc = weft_init(&cfg);
    if (rc != 0) {
        CHECK(errno_value(rc));
        cfg.workers = 1;
        rc = weft_init(&cfg);
        if (rc != 0) {
            CHECK(errno_value(rc));
            printf("ok init failed\n");
            return 0;
        }
    }
    CHECK_EQ(weft_sem_init(&go, 0), 0);
    int n = 0;
    while (n < MAX_THREADS && (rc = weft_spawn(&t[n], parked, (void *)(intptr_t)n, NULL)) == 0)
        n++;
    CHECK(n == MAX_THREADS || errno_value(rc));
    for (int i = 0; i < n; i++)
        CHECK_EQ(weft_sem_post(&go), 0);
    for (int i = 0; i < n; i++) {
        void *r;
        CHECK_EQ(weft_join(t[i], &r), 0);
        CHECK_EQ((intptr_t)r, i);
    }
    weft_thread *c;
    rc = weft_spawn(&c, calls, NULL, NULL);
    if (rc == 0)
        CHECK_EQ(weft_join(c, NULL), 0);
    else
        CHECK(errno_value(rc));
    calls(NULL);
    CHECK_EQ(weft_sem_destroy(&go), 0);
    CHECK_EQ(weft_finalize(), 0);
    printf("ok %d threads\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(atol(argv[2]));
    if (TEST_SANITIZED)
        SKIP("sanitizers need more address space than the limits tested");
    static const char *const modes[][2] = { { "WEFT_IO=uring", NULL },
                                            { "WEFT_IO=blocking", NULL } };
    long headroom[HEADROOM_MAX_KIB / HEADROOM_STEP_KIB + 2];
    size_t nh = 0;
    for (long h = 0; h <= HEADROOM_MAX_KIB; h += HEADROOM_STEP_KIB)
        headroom[nh++] = h;
    headroom[nh++] = HEADROOM_BIG_KIB;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (size_t h = 0; h < nh; h++) {
            char arg[32];
            snprintf(arg, sizeof arg, "%ld", headroom[h]);
            static test_child r;
            test_run_self(&r, "child", arg, modes[m], NULL);
            if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 ||
                strncmp(r.out, "ok", 2) != 0) {
                fprintf(stderr, "headroom %s KiB:\n", arg);
                test_child_dump(modes[m][0], &r);
                CHECK(!"child failed");
            }
        }
    printf("ok\n");
    return 0;
}
