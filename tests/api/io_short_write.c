/* Tests that weft_write and weft_send on a blocking descriptor write
 * everything, as write(2) and send(2) do, however little room the pipe or
 * socket buffer has: 1 MiB through a pipe, a stream socketpair and TCP
 * loopback, drained slowly by a reader thread, arrives whole and in order
 * and the call returns 1 MiB (it returned the first 64 KiB, or whatever fit).
 * On an O_NONBLOCK pipe a write still stops where the pipe is full. A
 * blocking send or write whose peer goes away while it waits fails as the
 * system calls do: EPIPE, or ECONNRESET (not EPIPE, no SIGPIPE). Through io_uring and
 * on the hand-off path, on 1 and 2 workers. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

#define BYTES (1u << 20)

enum how { BY_WRITE, BY_SEND };

struct job {
    int fd;
    enum how how;
    unsigned char *data;
};

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + (i >> 12));
}

/* Reads BYTES in small pieces, yielding between them so the writer keeps
 * finding a full buffer, and checks every byte. */
static void *drain(void *arg)
{
    struct job *j = arg;
    unsigned char buf[3000];
    size_t got = 0;
    while (got < BYTES) {
        ssize_t n = weft_read(j->fd, buf, sizeof buf);
        CHECK(n > 0);
        for (ssize_t k = 0; k < n; k++)
            CHECK_EQ(buf[k], pattern(got + (size_t)k));
        got += (size_t)n;
        weft_yield();
    }
    return NULL;
}

static void *fill(void *arg)
{
    struct job *j = arg;
    ssize_t n = j->how == BY_WRITE ? weft_write(j->fd, j->data, BYTES)
                                   : weft_send(j->fd, j->data, BYTES, MSG_NOSIGNAL);
    CHECK_EQ(n, BYTES);
    return NULL;
}

static void transfer(int wfd, int rfd, enum how how, unsigned char *data)
{
    struct job w = { wfd, how, data }, r = { rfd, how, data };
    weft_thread *tw, *tr;
    CHECK_EQ(weft_spawn(&tw, fill, &w, NULL), 0);
    CHECK_EQ(weft_spawn(&tr, drain, &r, NULL), 0);
    CHECK_EQ(weft_join(tw, NULL), 0);
    CHECK_EQ(weft_join(tr, NULL), 0);
}

/* ---- the peer goes away while a blocking send waits ------------------- */

static atomic_int sigpipes;

static void on_sigpipe(int sig)
{
    (void)sig;
    atomic_fetch_add(&sigpipes, 1);
}

struct waiting_send {
    int fd;
    enum how how;
    atomic_int started;
    long ret;
    int err;
};

static void *send_into_full(void *arg)
{
    struct waiting_send *s = arg;
    static char block[4096];
    atomic_store(&s->started, 1);
    s->ret = s->how == BY_WRITE ? weft_write(s->fd, block, sizeof block)
                                : weft_send(s->fd, block, sizeof block, 0);
    s->err = weft_errno();
    return NULL;
}

/* As send(2) and write(2): a peer that shuts down makes the waiting call
 * fail with EPIPE; one that closes with data unread, with ECONNRESET and
 * no SIGPIPE. (Whether the EPIPE raises SIGPIPE depends on where in the
 * kernel the blocked send was: a unix socket's does not, TCP's does.) */
static void peer_gone(enum how how, int by_close)
{
    int s[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    CHECK_EQ(fcntl(s[0], F_SETFL, O_NONBLOCK), 0);
    static char chunk[4096];
    while (write(s[0], chunk, sizeof chunk) > 0)
        ;
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(fcntl(s[0], F_SETFL, 0), 0);
    struct waiting_send ws = { .fd = s[0], .how = how };
    weft_thread *t;
    int before = atomic_load(&sigpipes);
    CHECK_EQ(weft_spawn(&t, send_into_full, &ws, NULL), 0);
    while (!atomic_load(&ws.started))
        weft_yield();
    CHECK_EQ(weft_sleep_ns(20 * 1000000ull), 0);
    if (by_close)
        close(s[1]);
    else
        CHECK_EQ(shutdown(s[1], SHUT_RDWR), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(ws.ret, -1);
    CHECK_EQ(ws.err, by_close ? ECONNRESET : EPIPE);
    if (by_close)
        CHECK_EQ(atomic_load(&sigpipes), before);
    close(s[0]);
    if (!by_close)
        close(s[1]);
}

static void run(int workers)
{
    test_init(workers, TEST_POLICY_ENV);
    unsigned char *data = malloc(BYTES);
    CHECK(data != NULL);
    for (size_t i = 0; i < BYTES; i++)
        data[i] = pattern(i);

    int p[2];
    CHECK_EQ(pipe(p), 0);
    transfer(p[1], p[0], BY_WRITE, data);
    close(p[0]);
    close(p[1]);

    int s[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    transfer(s[0], s[1], BY_SEND, data);
    transfer(s[1], s[0], BY_WRITE, data);
    close(s[0]);
    close(s[1]);

    io_tcp_pair(&s[0], &s[1]);
    transfer(s[0], s[1], BY_SEND, data);
    transfer(s[1], s[0], BY_WRITE, data);
    close(s[0]);
    close(s[1]);

    /* O_NONBLOCK: the write stops where the pipe is full, as write(2) does */
    CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
    ssize_t n = weft_write(p[1], data, BYTES);
    CHECK(n > 0 && n < (ssize_t)BYTES);
    errno = 0;
    CHECK_EQ(weft_write(p[1], data, BYTES), -1);
    CHECK_EQ(weft_errno(), EAGAIN);
    close(p[0]);
    close(p[1]);

    for (int by_close = 0; by_close < 2; by_close++) {
        peer_gone(BY_SEND, by_close);
        peer_gone(BY_WRITE, by_close);
    }

    free(data);
    CHECK_EQ(weft_finalize(), 0);
}

static void body(void)
{
    run(1);
    run(2);
}

int main(int argc, char **argv)
{
    alarm(120);
    signal(SIGPIPE, on_sigpipe);
    io_test_both_modes(argc, argv, body);
    return 0;
}
