/* Tests the blocking-call mirrors between user threads: on a single worker a
 * reader parked in weft_read never deadlocks against a writer that is
 * another user thread (either order); pread/pwrite at offsets; concurrent
 * sleeps overlap instead of adding up; weft_poll reports readiness and
 * times out; the same calls work from a plain kernel thread; weft_blocking
 * runs a truly blocking call while the worker keeps running others. Both
 * through io_uring and on the spare-thread path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"

static int pfd[2];

static void *reader(void *arg)
{
    char buf[8] = { 0 };
    CHECK_EQ(weft_read(pfd[0], buf, 5), 5);
    CHECK(!memcmp(buf, "hello", 5));
    return arg;
}

static void *writer(void *arg)
{
    weft_yield();
    CHECK_EQ(weft_write(pfd[1], "hello", 5), 5);
    return arg;
}

static void *sleeper(void *arg)
{
    CHECK_EQ(weft_sleep_ns(200 * 1000000ull), 0);
    return arg;
}

static void *plain_thread(void *arg)
{
    (void)arg;
    int q[2];
    CHECK_EQ(pipe(q), 0);
    CHECK_EQ(weft_write(q[1], "ab", 2), 2);
    char b[2];
    CHECK_EQ(weft_read(q[0], b, 2), 2);
    CHECK_EQ(weft_poll(q[0], POLLIN, 10), 0);
    CHECK_EQ(weft_sleep_ns(1000000), 0);
    close(q[0]);
    close(q[1]);
    return NULL;
}

static int bpipe[2];
static atomic_int others_ran;

static void blocking_read(void *arg)
{
    char *c = arg;
    CHECK_EQ(read(bpipe[0], c, 1), 1); /* a real blocking read(2) */
}

static void *uses_blocking(void *arg)
{
    char c = 0;
    CHECK_EQ(weft_blocking(blocking_read, &c), 0);
    CHECK_EQ(c, 'z');
    return arg;
}

static void *feeds_blocking(void *arg)
{
    atomic_store(&others_ran, 1); /* ran while the other thread blocked */
    CHECK_EQ(weft_write(bpipe[1], "z", 1), 1);
    return arg;
}

static void body(void)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    CHECK_EQ(weft_init(&cfg), 0);
    CHECK_EQ(pipe(pfd), 0);

    for (int order = 0; order < 2; order++) {
        weft_thread *r, *w;
        if (order == 0) {
            CHECK_EQ(weft_spawn(&r, reader, NULL, NULL), 0);
            CHECK_EQ(weft_spawn(&w, writer, NULL, NULL), 0);
        } else {
            CHECK_EQ(weft_spawn(&w, writer, NULL, NULL), 0);
            CHECK_EQ(weft_spawn(&r, reader, NULL, NULL), 0);
        }
        CHECK_EQ(weft_join(r, NULL), 0);
        CHECK_EQ(weft_join(w, NULL), 0);
    }

    /* pread/pwrite at offsets of a file */
    char path[] = "/tmp/weft-io-basic-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK_EQ(weft_pwrite(fd, "0123456789", 10, 0), 10);
    CHECK_EQ(weft_pwrite(fd, "AB", 2, 4), 2);
    char b[10];
    CHECK_EQ(weft_pread(fd, b, 10, 0), 10);
    CHECK(!memcmp(b, "0123AB6789", 10));
    CHECK_EQ(weft_pread(fd, b, 10, 100), 0); /* past the end */
    errno = 0;
    CHECK_EQ(weft_pread(fd, b, 1, -1), -1);
    CHECK_EQ(errno, EINVAL);
    close(fd);

    /* 50 sleeps of 200 ms overlap: far less than the 10 s they add up to */
    double t0 = check_now();
    weft_thread *s[50];
    for (int i = 0; i < 50; i++)
        CHECK_EQ(weft_spawn(&s[i], sleeper, NULL, NULL), 0);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(weft_join(s[i], NULL), 0);
    double dt = check_now() - t0;
    printf("50 concurrent 200 ms sleeps: %.3f s\n", dt);
    CHECK(dt >= 0.19 && dt < 5.0);

    /* poll: readiness and timeout */
    CHECK_EQ(weft_poll(pfd[0], POLLIN, 30), 0);
    CHECK_EQ(weft_write(pfd[1], "x", 1), 1);
    CHECK_EQ(weft_poll(pfd[0], POLLIN, -1), POLLIN);
    CHECK_EQ(weft_poll(pfd[0], POLLIN, 0), POLLIN);
    CHECK_EQ(weft_read(pfd[0], b, 1), 1);

    /* weft_blocking: one worker, a read(2) that only another user thread
     * can satisfy */
    CHECK_EQ(pipe(bpipe), 0);
    weft_thread *u, *f;
    CHECK_EQ(weft_spawn(&u, uses_blocking, NULL, NULL), 0);
    CHECK_EQ(weft_spawn(&f, feeds_blocking, NULL, NULL), 0);
    CHECK_EQ(weft_join(u, NULL), 0);
    CHECK_EQ(weft_join(f, NULL), 0);
    CHECK_EQ(atomic_load(&others_ran), 1);
    CHECK_EQ(weft_blocking(NULL, NULL), EINVAL);

    /* from a plain kernel thread */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, plain_thread, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);

    close(pfd[0]);
    close(pfd[1]);
    close(bpipe[0]);
    close(bpipe[1]);
    CHECK_EQ(weft_finalize(), 0);
}

int main(int argc, char **argv)
{
    io_test_both_modes(argc, argv, body);
    return 0;
}
