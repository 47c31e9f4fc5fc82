/* io_blocking_poller.c: in WEFT_IO=blocking mode a weft_* call on a pipe
 * or socket that would block waits for readiness instead of holding a
 * kernel thread; what the caller sees must still be the blocking call's
 * result:
 *  - a waiting read stays on the file it started on when the program closes
 *    the descriptor and another file takes its number;
 *  - a waiting read returns 0 once the write end is closed, a waiting write
 *    fails with EPIPE once the read end is;
 *  - a write or stream send of 1 MiB to a blocking pipe or socket writes
 *    it all, while a reader drains it;
 *  - O_NONBLOCK and MSG_DONTWAIT give EAGAIN at once, SO_RCVTIMEO after
 *    its timeout;
 *  - several waiters on one descriptor each get their byte.
 * Runs in a child bounded by alarm(), with one worker (the threads that
 * release a waiter share its worker) and with two.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "testutil.h"

#define CHILD_ALARM_S 60
#define BIG           (1 << 20)
#define NSHARED       16
#define SETTLE_NS     (30 * 1000000ull) /* lets a thread reach its wait, on a loaded machine too */
#define FILL_TRIES    300               /* SETTLE_NS each: 9 s for a writer to fill a pipe */
#define RCVTIMEO_US   50000

struct rd {
    int fd;
    long res;
    int err;
    char c;
};

static void *read_one(void *arg)
{
    struct rd *r = arg;
    r->res = weft_read(r->fd, &r->c, 1);
    r->err = r->res < 0 ? errno : 0;
    return NULL;
}

/* A waiting read keeps its file when the number is reused. */
static void reused_number(void)
{
    int a[2], b[2];
    CHECK_EQ(pipe(a), 0);
    struct rd r = { a[0], 0, 0, 0 };
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, read_one, &r, NULL), 0);
    CHECK_EQ(weft_sleep_ns(SETTLE_NS), 0);
    CHECK_EQ(pipe(b), 0);
    CHECK_EQ(dup2(b[0], a[0]), a[0]); /* a[0] now names pipe b's read end */
    close(b[0]);
    CHECK_EQ(weft_write(b[1], "B", 1), 1);
    CHECK_EQ(weft_sleep_ns(SETTLE_NS), 0);
    CHECK_EQ(weft_write(a[1], "A", 1), 1);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(r.res, 1);
    CHECK_EQ(r.c, 'A');
    char c = 0;
    CHECK_EQ(weft_read(a[0], &c, 1), 1);
    CHECK_EQ(c, 'B');
    close(a[0]);
    close(a[1]);
    close(b[1]);
}

static void *write_big(void *arg)
{
    int fd = *(int *)arg;
    static char out[BIG];
    for (int i = 0; i < BIG; i++)
        out[i] = (char)(i * 7);
    return (void *)(intptr_t)weft_write(fd, out, BIG);
}

/* EOF and EPIPE reach a waiting call; a big write is whole. */
static void ends_and_big_writes(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct rd r = { p[0], -2, 0, 0 };
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, read_one, &r, NULL), 0);
    CHECK_EQ(weft_sleep_ns(SETTLE_NS), 0);
    close(p[1]);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(r.res, 0);
    close(p[0]);

    /* a writer waits on a full pipe, then the read end goes: the pipe is
     * full before that (a loaded machine may start the writer late) */
    CHECK_EQ(pipe(p), 0);
    int cap = fcntl(p[1], F_GETPIPE_SZ);
    CHECK(cap > 0 && cap < BIG);
    CHECK_EQ(weft_spawn(&t, write_big, &p[1], NULL), 0);
    int queued = 0;
    for (int i = 0; i < FILL_TRIES && queued < cap; i++) {
        CHECK_EQ(weft_sleep_ns(SETTLE_NS), 0);
        CHECK_EQ(ioctl(p[0], FIONREAD, &queued), 0);
    }
    CHECK_EQ(queued, cap);
    CHECK_EQ(weft_sleep_ns(SETTLE_NS), 0); /* and the writer waits for room */
    close(p[0]);
    void *res;
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK((intptr_t)res > 0 && (intptr_t)res < BIG); /* what went in before the end */
    close(p[1]);

    int kinds[2][2];
    CHECK_EQ(pipe(kinds[0]), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, kinds[1]), 0);
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(weft_spawn(&t, write_big, &kinds[k][1], NULL), 0);
        static char in[BIG];
        long got = 0;
        while (got < BIG) {
            long n = weft_read(kinds[k][0], in + got, BIG - got);
            CHECK(n > 0);
            got += n;
        }
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((intptr_t)res, BIG);
        for (int i = 0; i < BIG; i++)
            CHECK_EQ(in[i], (char)(i * 7));
        close(kinds[k][0]);
        close(kinds[k][1]);
    }
}

static void no_wait(void)
{
    int p[2], s[2];
    char c;
    CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
    CHECK_EQ(weft_read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    CHECK_EQ(weft_recv(s[0], &c, 1, MSG_DONTWAIT), -1);
    CHECK_EQ(errno, EAGAIN);
    struct timeval tv = { 0, RCVTIMEO_US };
    CHECK_EQ(setsockopt(s[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    CHECK_EQ(weft_recv(s[0], &c, 1, 0), -1);
    CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
    CHECK_EQ(weft_read(s[0], &c, 1), -1);
    CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
    close(p[0]);
    close(p[1]);
    close(s[0]);
    close(s[1]);
}

static void shared_descriptor(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct rd r[NSHARED];
    weft_thread *t[NSHARED];
    for (int i = 0; i < NSHARED; i++) {
        r[i] = (struct rd){ p[0], 0, 0, 0 };
        CHECK_EQ(weft_spawn(&t[i], read_one, &r[i], NULL), 0);
    }
    CHECK_EQ(weft_sleep_ns(SETTLE_NS), 0);
    int sum = 0;
    for (int i = 0; i < NSHARED; i++) {
        char c = (char)(i + 1);
        sum += i + 1;
        CHECK_EQ(weft_write(p[1], &c, 1), 1);
    }
    for (int i = 0; i < NSHARED; i++) {
        CHECK_EQ(weft_join(t[i], NULL), 0);
        CHECK_EQ(r[i].res, 1);
        sum -= r[i].c;
    }
    CHECK_EQ(sum, 0);
    close(p[0]);
    close(p[1]);
}

static int child(void)
{
    alarm(CHILD_ALARM_S);
    signal(SIGPIPE, SIG_IGN);
    for (int workers = 1; workers <= 2; workers++) {
        test_init(workers, TEST_POLICY_ENV);
        reused_number();
        ends_and_big_writes();
        no_wait();
        shared_descriptor();
        CHECK_EQ(weft_finalize(), 0);
    }
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    static const char *const env[] = { "WEFT_IO=blocking", NULL };
    static test_child r;
    test_run_self(&r, "child", NULL, env, NULL);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || strcmp(r.out, "ok\n") != 0) {
        test_child_dump("WEFT_IO=blocking", &r);
        CHECK(!"child failed");
    }
    printf("ok\n");
    return 0;
}
