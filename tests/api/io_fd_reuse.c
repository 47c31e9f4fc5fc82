/* Tests that a call pending on a descriptor stays on the file it started
 * on when the number is closed and reused meanwhile, as a blocked system
 * call does: a weft_write waiting on a full pipe whose number then names a
 * regular file still writes into the pipe (the file stays empty); a
 * weft_read or weft_recv waiting on an empty pipe or socket whose number
 * then names another pipe or socket returns the first one's data. dup2
 * replaces the number in one step, so it is certainly reused. The waiting
 * thread shares its worker with the one reusing the number and a third
 * that keeps the worker busy (1 worker), or runs on either worker (2);
 * through io_uring and on the hand-off path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

enum { WRITE_PIPE, READ_PIPE, RECV_SOCKET };

struct pending {
    int op, fd;
    atomic_int started;
    char buf[16];
};

static void *call(void *arg)
{
    struct pending *p = arg;
    atomic_store(&p->started, 1);
    ssize_t n;
    if (p->op == WRITE_PIPE)
        n = weft_write(p->fd, "MARK", 4);
    else if (p->op == READ_PIPE)
        n = weft_read(p->fd, p->buf, sizeof p->buf);
    else
        n = weft_recv(p->fd, p->buf, sizeof p->buf, 0);
    return (void *)(intptr_t)n;
}

/* Set once the number has been reused: until then a companion thread
 * (test_yield_until_set) keeps its worker busy, so that the worker always
 * has another thread to run. */
static atomic_int busy_stop;

/* Lets the call start and wait: it has run and found nothing to do. The
 * pause stalls this worker on purpose (usleep, not weft_sleep_ns): the
 * call must be on its file already, whatever the worker does next. */
static weft_thread *start(struct pending *p, weft_thread **companion)
{
    weft_thread *t;
    atomic_store(&busy_stop, 0);
    CHECK_EQ(weft_spawn(companion, test_yield_until_set, &busy_stop, NULL), 0);
    CHECK_EQ(weft_spawn(&t, call, p, NULL), 0);
    while (!atomic_load(&p->started))
        weft_yield();
    for (int i = 0; i < 5; i++)
        weft_yield();
    usleep(20 * 1000);
    return t;
}

static void stop_busy(weft_thread *companion)
{
    atomic_store(&busy_stop, 1);
    CHECK_EQ(weft_join(companion, NULL), 0);
}

static void pending_write(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
    char chunk[4096] = { 0 };
    size_t filled = 0;
    for (;;) {
        ssize_t n = write(p[1], chunk, sizeof chunk);
        if (n < 0) {
            CHECK_EQ(errno, EAGAIN);
            break;
        }
        filled += (size_t)n;
    }
    CHECK_EQ(fcntl(p[1], F_SETFL, 0), 0);

    struct pending w = { .op = WRITE_PIPE, .fd = p[1] };
    weft_thread *c, *t = start(&w, &c);

    char path[] = "/tmp/weft-io-reuse-XXXXXX";
    int f = mkstemp(path);
    CHECK(f >= 0);
    unlink(path);
    CHECK_EQ(dup2(f, p[1]), p[1]); /* the number now names the file */
    close(f);
    stop_busy(c);

    /* drain the pipe: the filler, then the pending call's bytes */
    char buf[4096];
    size_t got = 0;
    char tail[4] = { 0 };
    for (;;) {
        ssize_t n = weft_read(p[0], buf, sizeof buf);
        CHECK(n >= 0);
        if (n == 0)
            break; /* the pending write finished: no writer is left */
        for (ssize_t i = 0; i < n; i++, got++)
            if (got >= filled && got < filled + 4)
                tail[got - filled] = buf[i];
    }
    void *res;
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, 4);
    CHECK_EQ(got, filled + 4);
    CHECK(!memcmp(tail, "MARK", 4));
    struct stat st;
    CHECK_EQ(fstat(p[1], &st), 0);
    CHECK_EQ(st.st_size, 0); /* nothing went into the file */
    close(p[0]);
    close(p[1]);
}

static void pending_read(int op)
{
    int a[2], b[2];
    if (op == READ_PIPE) {
        CHECK_EQ(pipe(a), 0);
        CHECK_EQ(pipe(b), 0);
    } else {
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    }
    struct pending r = { .op = op, .fd = a[0] };
    weft_thread *c, *t = start(&r, &c);

    CHECK_EQ(write(b[1], "BBBB", 4), 4);
    CHECK_EQ(dup2(b[0], a[0]), a[0]); /* the number now names b */
    stop_busy(c);
    CHECK_EQ(write(a[1], "AAAA", 4), 4);
    void *res;
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, 4);
    CHECK(!memcmp(r.buf, "AAAA", 4));
    char buf[8];
    CHECK_EQ(read(a[0], buf, sizeof buf), 4); /* b's data is still there */
    CHECK(!memcmp(buf, "BBBB", 4));
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
}

static void body(void)
{
    for (int workers = 1; workers <= 2; workers++) {
        test_init(workers, TEST_POLICY_ENV);
        pending_write();
        pending_read(READ_PIPE);
        pending_read(RECV_SOCKET);
        CHECK_EQ(weft_finalize(), 0);
    }
}

int main(int argc, char **argv)
{
    alarm(60);
    signal(SIGPIPE, SIG_IGN); /* a pipe whose reading end was lost: a failed check, not a kill */
    io_test_both_modes(argc, argv, body);
    return 0;
}
