/* Tests that a user thread waiting inside a syscall mirror reports
 * WEFT_STATE_BLOCKING from weft_thread_info_get ("in weft_blocking or a
 * syscall mirror"), whichever way the mirror waits: in the worker's ring,
 * on the poller's readiness wait, on a timer or handed off to a kernel
 * thread. One thread per mirror family (read, write, recv, send, accept,
 * connect, poll, sleep), in both I/O modes; the dump still names what it
 * waits for ("io", "sleep") or says "blocking" for a hand-off. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "dump_test.h"
#include "io_test.h"
#include "testutil.h"

#define WAIT_S 10 /* bound on a thread's way into its call */

enum { F_READ, F_WRITE, F_RECV, F_SEND, F_ACCEPT, F_CONNECT, F_POLL, F_POLL_TIMEOUT, F_SLEEP, NF };
static const char *const fam[NF] = { "read",    "write", "recv",         "send", "accept",
                                     "connect", "poll",  "poll-timeout", "sleep" };

static int rd_pipe[2], wr_pipe[2], poll_pipe[2], rs_pair[2], ss_pair[2], acc_fd, con_fd;
static struct sockaddr_un con_addr;
static socklen_t con_len;
static atomic_int sleep_go;
static long got[NF];

static void *blocker(void *arg)
{
    int f = (int)(intptr_t)arg;
    char c = 'x';
    char big[4096];
    switch (f) {
    case F_READ: got[f] = weft_read(rd_pipe[0], &c, 1); break;
    case F_WRITE: got[f] = weft_write(wr_pipe[1], &c, 1); break;
    case F_RECV: got[f] = weft_recv(rs_pair[0], &c, 1, 0); break;
    case F_SEND:
        memset(big, 's', sizeof big);
        got[f] = weft_send(ss_pair[0], big, sizeof big, 0);
        break;
    case F_ACCEPT: {
        int s = weft_accept(acc_fd, NULL, NULL);
        got[f] = s >= 0;
        if (s >= 0)
            close(s);
        break;
    }
    case F_CONNECT: got[f] = weft_connect(con_fd, (struct sockaddr *)&con_addr, con_len); break;
    case F_POLL: got[f] = weft_poll(poll_pipe[0], POLLIN, -1); break;
    case F_POLL_TIMEOUT: got[f] = weft_poll(poll_pipe[0], POLLIN, 60000); break;
    case F_SLEEP:
        while (!atomic_load(&sleep_go))
            weft_sleep_ns(500000000ull);
        got[f] = 0;
        break;
    }
    return NULL;
}

/* The first line of t's entry in the dump. */
static void dump_line(weft_thread *t, char *line, size_t n)
{
    char *s = dump_text();
    const char *p = dump_thread(s, weft_thread_id(t));
    CHECK(p != NULL);
    dump_copy_line(p, line, n);
    free(s);
}

/* Waits until t is in its call (neither running nor ready), then checks
 * the state it reports. */
static void expect_blocking(weft_thread *t, int f)
{
    weft_thread_info info;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        CHECK_EQ(weft_thread_info_get(t, &info), 0);
        if (info.state != WEFT_STATE_RUNNING && info.state != WEFT_STATE_READY)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        CHECK(now.tv_sec - t0.tv_sec < WAIT_S);
        usleep(1000);
    }
    usleep(20000); /* settled: the state stays */
    CHECK_EQ(weft_thread_info_get(t, &info), 0);
    char line[512];
    dump_line(t, line, sizeof line);
    const char *word = f == F_SLEEP ? "sleep" : "io";
    int word_ok = strstr(line, word) != NULL || strstr(line, ": blocking,") != NULL;
    printf("%-12s state %d, %s\n", fam[f], info.state, line);
    if (info.state != WEFT_STATE_BLOCKING || !word_ok)
        fprintf(stderr, "%s (WEFT_IO=%s): state %d, want %d (BLOCKING); dump: %s\n", fam[f],
                getenv("WEFT_IO") ? getenv("WEFT_IO") : "auto", info.state, WEFT_STATE_BLOCKING,
                line);
    CHECK_EQ(info.state, WEFT_STATE_BLOCKING);
    CHECK(word_ok);
    CHECK_EQ(info.worker, -1);
}

/* Makes f's call return. */
static void release(int f)
{
    char c = 'r';
    char sink[65536];
    switch (f) {
    case F_READ: CHECK_EQ(write(rd_pipe[1], &c, 1), 1); break;
    case F_WRITE: CHECK(read(wr_pipe[0], sink, sizeof sink) > 0); break;
    case F_RECV: CHECK_EQ(write(rs_pair[1], &c, 1), 1); break;
    case F_SEND:
        while (read(ss_pair[1], sink, sizeof sink) > 0) {
        }
        break;
    case F_ACCEPT: {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a;
        socklen_t len = sizeof a;
        CHECK_EQ(getsockname(acc_fd, (struct sockaddr *)&a, &len), 0);
        CHECK_EQ(connect(s, (struct sockaddr *)&a, len), 0);
        close(s);
        break;
    }
    case F_CONNECT: break; /* body: it accepts the pending connection */
    case F_POLL:
    case F_POLL_TIMEOUT: CHECK_EQ(write(poll_pipe[1], &c, 1), 1); break;
    case F_SLEEP: atomic_store(&sleep_go, 1); break;
    }
}

/* A listener on an autobound abstract address: *a and *len name it. */
static int listener(struct sockaddr_un *a, socklen_t *len, int backlog)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(s >= 0);
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    CHECK_EQ(bind(s, (struct sockaddr *)a, sizeof(sa_family_t)), 0); /* autobind */
    *len = sizeof *a;
    CHECK_EQ(getsockname(s, (struct sockaddr *)a, len), 0);
    CHECK_EQ(listen(s, backlog), 0);
    return s;
}

static void body(void)
{
    test_init(2, TEST_POLICY_ENV);
    CHECK_EQ(pipe2(rd_pipe, O_CLOEXEC), 0);
    CHECK_EQ(pipe2(wr_pipe, O_CLOEXEC), 0);
    CHECK_EQ(pipe2(poll_pipe, O_CLOEXEC), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rs_pair), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ss_pair), 0);
    /* a full pipe: one page of room, filled */
    CHECK(fcntl(wr_pipe[1], F_SETPIPE_SZ, 4096) >= 4096);
    int cap = fcntl(wr_pipe[1], F_GETPIPE_SZ);
    char *fill = malloc((size_t)cap);
    CHECK(fill != NULL);
    memset(fill, 'f', (size_t)cap);
    CHECK_EQ(write(wr_pipe[1], fill, (size_t)cap), cap);
    free(fill);
    /* a full socket; the reader's end non-blocking, for draining it */
    char chunk[4096];
    memset(chunk, 'c', sizeof chunk);
    while (send(ss_pair[0], chunk, sizeof chunk, MSG_DONTWAIT) > 0) {
    }
    CHECK_EQ(fcntl(ss_pair[1], F_SETFL, O_NONBLOCK), 0);
    /* a listener with no client */
    struct sockaddr_un a;
    socklen_t alen;
    acc_fd = listener(&a, &alen, 4);

    weft_thread *t[NF];
    for (int f = 0; f < NF; f++) {
        if (f == F_CONNECT)
            continue; /* below, on its own listener */
        CHECK_EQ(weft_spawn(&t[f], blocker, (void *)(intptr_t)f, NULL), 0);
        expect_blocking(t[f], f);
    }
    for (int f = 0; f < NF; f++) {
        if (f == F_CONNECT)
            continue;
        release(f);
        CHECK_EQ(weft_join(t[f], NULL), 0);
    }
    CHECK_EQ(got[F_READ], 1);
    CHECK_EQ(got[F_WRITE], 1);
    CHECK_EQ(got[F_RECV], 1);
    CHECK_EQ(got[F_SEND], 4096);
    CHECK_EQ(got[F_ACCEPT], 1);
    CHECK_EQ(got[F_POLL], POLLIN);
    CHECK_EQ(got[F_POLL_TIMEOUT], POLLIN);
    CHECK_EQ(got[F_SLEEP], 0);

    /* connect: a listener whose backlog is full (backlog 0 admits one) */
    int full = listener(&con_addr, &con_len, 0);
    int first = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_EQ(connect(first, (struct sockaddr *)&con_addr, con_len), 0);
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int pr = connect(probe, (struct sockaddr *)&con_addr, con_len);
    close(probe);
    if (pr == -1 && errno == EAGAIN) {
        con_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK_EQ(weft_spawn(&t[F_CONNECT], blocker, (void *)(intptr_t)F_CONNECT, NULL), 0);
        expect_blocking(t[F_CONNECT], F_CONNECT);
        int s = accept(full, NULL, NULL); /* room for the blocked one */
        CHECK(s >= 0);
        CHECK_EQ(weft_join(t[F_CONNECT], NULL), 0);
        CHECK_EQ(got[F_CONNECT], 0);
        close(s);
        close(con_fd);
    } else {
        printf("connect: a full backlog does not make connect wait here, not checked\n");
    }
    close(first);
    close(full);
    close(acc_fd);
    for (int i = 0; i < 2; i++) {
        close(rd_pipe[i]);
        close(wr_pipe[i]);
        close(poll_pipe[i]);
        close(rs_pair[i]);
        close(ss_pair[i]);
    }
    CHECK_EQ(weft_finalize(), 0);
}

int main(int argc, char **argv)
{
    test_clear_env();
    alarm(120);
    io_test_both_modes(argc, argv, body);
    printf("io_thread_state: ok\n");
    return 0;
}
