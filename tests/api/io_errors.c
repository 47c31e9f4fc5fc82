/* Tests that the blocking-call mirrors fail exactly like the calls they
 * mirror, from user threads and plain kernel threads, through io_uring and
 * on the spare-thread path: EBADF, ECONNREFUSED, EAGAIN on an empty
 * non-blocking pipe (not hidden by parking), ENOTSOCK, and end of file. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"

/* errno through weft_errno(): the thread may resume on another worker, and
 * the compiler may keep errno's address from before the call (weft.h). */
/* A loopback port nobody listens on. */
static struct sockaddr_in closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(s >= 0);
    struct sockaddr_in a = io_bind_loopback(s);
    close(s); /* bound then closed: connecting is refused */
    return a;
}

static void *errors(void *arg)
{
    char b[8];
    EXPECT_ERR(weft_read(-1, b, 1), EBADF);
    EXPECT_ERR(weft_write(987654, b, 1), EBADF);
    EXPECT_ERR(weft_pread(-5, b, 1, 0), EBADF);
    EXPECT_ERR(weft_recv(-1, b, 1, 0), EBADF);
    EXPECT_ERR(weft_send(-1, b, 1, 0), EBADF);

    int p[2];
    CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
    EXPECT_ERR(weft_read(p[0], b, 1), EAGAIN); /* empty non-blocking pipe */
    EXPECT_ERR(weft_recv(p[0], b, 1, 0), ENOTSOCK);
    CHECK_EQ(weft_write(p[1], "q", 1), 1);
    CHECK_EQ(weft_read(p[0], b, 8), 1);
    close(p[1]);
    CHECK_EQ(weft_read(p[0], b, 8), 0); /* end of file */
    close(p[0]);

    struct sockaddr_in a = closed_port();
    int s = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_ERR(weft_connect(s, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
    close(s);
    EXPECT_ERR(weft_accept(-1, NULL, NULL), EBADF);
    CHECK_EQ(weft_poll(987654, POLLIN, 10), POLLNVAL); /* like poll(2): reported in revents */
    CHECK_EQ(weft_poll(-1, POLLIN, 10), 0);            /* a negative fd is ignored: timeout */
    return arg;
}

static void body(void)
{
    io_test_run(errors, IO_IN_INITIAL | IO_IN_PTHREAD);
}

int main(int argc, char **argv)
{
    io_test_both_modes(argc, argv, body);
    return 0;
}
