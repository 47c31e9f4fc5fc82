/* Tests the mirrors on named pipes (mkfifo), which must behave as on
 * pipes and as the system calls do: read, write, blocking and O_NONBLOCK,
 * end of file, EPIPE, a write larger than the pipe, poll, and the errors
 * of the calls a FIFO cannot serve (ESPIPE, ENOTSOCK). From a user thread,
 * the initial thread and a plain kernel thread, in both I/O modes (the
 * kernel refuses RWF_NOWAIT on a FIFO, where weft_read used to fail with
 * EOPNOTSUPP). Then, on one worker, a thread waiting on a FIFO leaves the
 * worker to the others, and 256 waiting readers hold no kernel thread
 * each. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

#define BIG      (1 << 20) /* more than a pipe holds */
#define NREADERS 256
#define PER_FIFO 4

static char dir[32];
static atomic_int seq;

/* A new FIFO in dir, its path in path (64 bytes: dir has fewer than 32). */
static void make_fifo(char *path)
{
    snprintf(path, 64, "%s/f%d", dir, atomic_fetch_add(&seq, 1));
    CHECK_EQ(mkfifo(path, 0600), 0);
}

/* A new FIFO opened as a blocking reader *rd and writer *wr. */
static void fifo_pair(int *rd, int *wr)
{
    char path[64];
    make_fifo(path);
    *rd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* no writer yet: must not wait */
    CHECK(*rd >= 0);
    *wr = open(path, O_WRONLY | O_CLOEXEC);
    CHECK(*wr >= 0);
    CHECK_EQ(fcntl(*rd, F_SETFL, 0), 0);
    unlink(path);
}

static void set_nonblock(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);
    CHECK(fl >= 0);
    CHECK_EQ(fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK), 0);
}

struct drain {
    int fd;
    long n;
};

static void *drain_all(void *arg)
{
    struct drain *d = arg;
    char buf[65536];
    ssize_t r;
    while ((r = read(d->fd, buf, sizeof buf)) > 0)
        d->n += r;
    return NULL;
}

static void *fifo_calls(void *arg)
{
    char b[64];
    /* the case: O_RDWR, holding data */
    char path[64];
    make_fifo(path);
    int rw = open(path, O_RDWR | O_CLOEXEC);
    CHECK(rw >= 0);
    CHECK_EQ(write(rw, "hello", 5), 5);
    CHECK_EQ(weft_read(rw, b, sizeof b), 5);
    CHECK(!memcmp(b, "hello", 5));
    CHECK_EQ(weft_write(rw, "abc", 3), 3);
    CHECK_EQ(read(rw, b, sizeof b), 3);
    CHECK(!memcmp(b, "abc", 3));
    close(rw);
    unlink(path);

    int rd, wr;
    fifo_pair(&rd, &wr);
    CHECK_EQ(weft_write(wr, "xyz", 3), 3);
    CHECK_EQ(weft_read(rd, b, 2), 2);
    CHECK_EQ(weft_read(rd, b + 2, sizeof b), 1);
    CHECK(!memcmp(b, "xyz", 3));
    /* the calls a FIFO cannot serve fail as the system calls do */
    EXPECT_ERR(weft_pread(rd, b, 1, 0), ESPIPE);
    EXPECT_ERR(weft_pwrite(wr, "p", 1, 0), ESPIPE);
    EXPECT_ERR(weft_recv(rd, b, 1, 0), ENOTSOCK);
    EXPECT_ERR(weft_send(wr, "s", 1, 0), ENOTSOCK);
    EXPECT_ERR(weft_accept(rd, NULL, NULL), ENOTSOCK);
    struct sockaddr sa = { .sa_family = AF_UNIX };
    EXPECT_ERR(weft_connect(wr, &sa, sizeof sa), ENOTSOCK);
    EXPECT_ERR(weft_read(wr, b, 1), EBADF);
    EXPECT_ERR(weft_write(rd, "w", 1), EBADF);
    /* O_NONBLOCK: EAGAIN at once */
    set_nonblock(rd, 1);
    EXPECT_ERR(weft_read(rd, b, 1), EAGAIN);
    set_nonblock(rd, 0);
    /* poll */
    CHECK_EQ(weft_poll(rd, POLLIN, 0), 0);
    CHECK_EQ(weft_poll(rd, POLLIN, 10), 0);
    CHECK_EQ(weft_poll(wr, POLLOUT, 0), POLLOUT);
    CHECK_EQ(write(wr, "q", 1), 1);
    CHECK_EQ(weft_poll(rd, POLLIN, -1), POLLIN);
    CHECK_EQ(weft_read(rd, b, 1), 1);
    /* a blocking write larger than the pipe writes it all */
    char *big = malloc(BIG);
    CHECK(big != NULL);
    memset(big, 'B', BIG);
    struct drain d = { rd, 0 };
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, drain_all, &d), 0);
    CHECK_EQ(weft_write(wr, big, BIG), BIG);
    close(wr); /* the drain sees the end */
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
    CHECK_EQ(d.n, BIG);
    /* end of file once no writer is left */
    CHECK_EQ(weft_read(rd, b, sizeof b), 0);
    close(rd);
    /* no reader left: EPIPE (SIGPIPE ignored) */
    fifo_pair(&rd, &wr);
    close(rd);
    EXPECT_ERR(weft_write(wr, "e", 1), EPIPE);
    close(wr);
    /* O_NONBLOCK writer on a full FIFO: a part, then EAGAIN */
    fifo_pair(&rd, &wr);
    set_nonblock(wr, 1);
    long cap = fcntl(wr, F_GETPIPE_SZ);
    CHECK(cap > 0 && cap < BIG);
    CHECK_EQ(weft_write(wr, big, BIG), cap);
    EXPECT_ERR(weft_write(wr, big, 1), EAGAIN);
    close(wr);
    close(rd);
    free(big);
    return arg;
}

/* ---- waiting on one worker -------------------------------------------- */

static int wfd[2];
static atomic_int reader_done;

static void *slow_reader(void *arg)
{
    char b[8];
    CHECK_EQ(weft_read(wfd[0], b, sizeof b), 4);
    CHECK(!memcmp(b, "wake", 4));
    atomic_store(&reader_done, 1);
    return arg;
}

static int many[NREADERS / PER_FIFO][2];
static atomic_int got;

static void *many_reader(void *arg)
{
    int f = (int)(intptr_t)arg / PER_FIFO;
    char c;
    CHECK_EQ(weft_read(many[f][0], &c, 1), 1);
    CHECK_EQ(c, 'm');
    atomic_fetch_add(&got, 1);
    return NULL;
}

/* A thread blocked in weft_read on a FIFO leaves its worker to the
 * others: here the caller, on the only worker, is the one that writes. */
static void waits(void)
{
    test_init(1, WEFT_WORK_FIRST);
    fifo_pair(&wfd[0], &wfd[1]);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, slow_reader, NULL, NULL), 0);
    CHECK_EQ(weft_sleep_ns(20 * 1000000ull), 0);
    CHECK_EQ(atomic_load(&reader_done), 0);
    weft_thread_info info;
    CHECK_EQ(weft_thread_info_get(t, &info), 0);
    CHECK_EQ(info.state, WEFT_STATE_BLOCKING);
    CHECK_EQ(weft_write(wfd[1], "wake", 4), 4);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(atomic_load(&reader_done), 1);
    close(wfd[0]);
    close(wfd[1]);

    weft_stats st0, st1;
    CHECK_EQ(weft_stats_get(&st0), 0);
    for (int f = 0; f < NREADERS / PER_FIFO; f++)
        fifo_pair(&many[f][0], &many[f][1]);
    static weft_thread *r[NREADERS];
    for (int i = 0; i < NREADERS; i++)
        CHECK_EQ(weft_spawn(&r[i], many_reader, (void *)(intptr_t)i, NULL), 0);
    CHECK_EQ(weft_sleep_ns(20 * 1000000ull), 0);
    CHECK_EQ(atomic_load(&got), 0);
    for (int f = 0; f < NREADERS / PER_FIFO; f++)
        CHECK_EQ(weft_write(many[f][1], "mmmm", PER_FIFO), PER_FIFO);
    for (int i = 0; i < NREADERS; i++)
        CHECK_EQ(weft_join(r[i], NULL), 0);
    CHECK_EQ(atomic_load(&got), NREADERS);
    /* a waiting reader holds no kernel thread of its own */
    CHECK_EQ(weft_stats_get(&st1), 0);
    printf("%d readers: %llu hand-offs\n", NREADERS,
           (unsigned long long)(st1.io_handoffs - st0.io_handoffs));
    CHECK(st1.io_handoffs - st0.io_handoffs < NREADERS / 4);
    for (int f = 0; f < NREADERS / PER_FIFO; f++) {
        close(many[f][0]);
        close(many[f][1]);
    }
    CHECK_EQ(weft_finalize(), 0);
}

static void body(void)
{
    io_test_run(fifo_calls, IO_IN_INITIAL | IO_IN_PTHREAD);
    waits();
}

int main(int argc, char **argv)
{
    test_clear_env();
    alarm(120);
    signal(SIGPIPE, SIG_IGN);
    snprintf(dir, sizeof dir, "/tmp/weft-fifo-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    io_test_both_modes(argc, argv, body);
    rmdir(dir);
    printf("io_fifo: ok\n");
    return 0;
}
