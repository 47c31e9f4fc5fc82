/* Tests that a byte count past 32 bits is clamped as the kernel clamps it
 * (to MAX_RW_COUNT, 0x7ffff000), not truncated: with 10 bytes waiting,
 * n = 4 GiB reads the 10 bytes (not 0, end of file to the caller) and
 * n = 4 GiB + 4 reads 10 (not 4). weft_read and weft_pread on a pipe and
 * a file, weft_recv on a stream socket; through io_uring and on the
 * hand-off path. The buffer is small (the kernel copies only what is there)
 * and static, low in the address space: buf + n must stay below its top, or
 * read(2) itself fails with EFAULT. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

#define GIB ((size_t)1 << 30)

static const size_t counts[] = { 4 * GIB, 4 * GIB + 4, 0x7ffff000u + 1, 3 * GIB };
static char buf[64];

static void *clamps(void *arg)
{
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        int p[2];
        CHECK_EQ(pipe(p), 0);
        CHECK_EQ(write(p[1], "0123456789", 10), 10);
        CHECK_EQ(weft_read(p[0], buf, counts[i]), 10);
        CHECK(!memcmp(buf, "0123456789", 10));
        close(p[0]);
        close(p[1]);

        int s[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
        CHECK_EQ(write(s[1], "abcdefghij", 10), 10);
        CHECK_EQ(weft_recv(s[0], buf, counts[i], 0), 10);
        CHECK(!memcmp(buf, "abcdefghij", 10));
        close(s[0]);
        close(s[1]);

        char path[] = "/tmp/weft-io-clamp-XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        unlink(path);
        CHECK_EQ(write(fd, "ABCDEFGHIJ", 10), 10);
        CHECK_EQ(weft_pread(fd, buf, counts[i], 0), 10);
        CHECK(!memcmp(buf, "ABCDEFGHIJ", 10));
        CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
        CHECK_EQ(weft_read(fd, buf, counts[i]), 10);
        close(fd);
    }
    return arg;
}

static void body(void)
{
    io_test_run(clamps, 0);
}

int main(int argc, char **argv)
{
    alarm(60);
    io_test_both_modes(argc, argv, body);
    return 0;
}
