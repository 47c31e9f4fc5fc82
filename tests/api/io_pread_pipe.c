/* Tests that positional I/O on a descriptor that cannot seek fails as
 * pread(2)/pwrite(2) do, with ESPIPE, and leaves the data alone: a pipe's
 * waiting bytes stay readable, nothing is written. Pipes, stream and
 * datagram sockets; through io_uring and on the hand-off path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

/* rd holds "hello"; wr is its writing end: positional calls fail on both
 * and the 5 bytes are still there afterwards, nothing more. */
static void check_pair(int rd, int wr)
{
    char b[16];
    EXPECT_ERR(weft_pread(rd, b, sizeof b, 0), ESPIPE);
    EXPECT_ERR(weft_pread(rd, b, sizeof b, 3), ESPIPE);
    EXPECT_ERR(weft_pwrite(wr, "xyz", 3, 0), ESPIPE);
    EXPECT_ERR(weft_pwrite(rd, "xyz", 3, 7), ESPIPE);
    CHECK_EQ(fcntl(rd, F_SETFL, O_NONBLOCK), 0);
    CHECK_EQ(read(rd, b, sizeof b), 5);
    CHECK(!memcmp(b, "hello", 5));
    errno = 0;
    CHECK_EQ(read(rd, b, sizeof b), -1); /* nothing was written */
    CHECK_EQ(errno, EAGAIN);
}

static void *positional(void *arg)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(write(p[1], "hello", 5), 5);
    check_pair(p[0], p[1]);
    close(p[0]);
    close(p[1]);

    int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
    for (int i = 0; i < 3; i++) {
        int s[2];
        CHECK_EQ(socketpair(AF_UNIX, types[i], 0, s), 0);
        CHECK_EQ(write(s[1], "hello", 5), 5);
        check_pair(s[0], s[1]);
        close(s[0]);
        close(s[1]);
    }
    return arg;
}

static void body(void)
{
    io_test_run(positional, IO_IN_INITIAL);
}

int main(int argc, char **argv)
{
    alarm(60);
    io_test_both_modes(argc, argv, body);
    return 0;
}
