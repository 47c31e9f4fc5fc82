/* Tests weft_read, weft_pread and weft_write on files io_uring cannot read
 * without waiting (no RWF_NOWAIT support): a tmpfs file in /dev/shm, /proc
 * and /sys files and a directory. Each gives what read(2), pread(2) and
 * write(2) give on the same file (the bytes, or EISDIR), not EOPNOTSUPP.
 * From a user thread and a plain kernel thread, through io_uring and on the
 * hand-off path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

/* A file whose content does not change between reads: weft_read and
 * weft_pread give exactly what read(2) gives. */
static void same_as_read(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("%s: not here, not checked\n", path);
        return;
    }
    char want[512], got[512];
    ssize_t n = read(fd, want, sizeof want);
    CHECK(n > 0);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    CHECK_EQ(weft_read(fd, got, sizeof got), n);
    CHECK(!memcmp(want, got, (size_t)n));
    memset(got, 0, sizeof got);
    CHECK_EQ(weft_pread(fd, got, sizeof got, 0), n);
    CHECK(!memcmp(want, got, (size_t)n));
    if (n > 2) {
        CHECK_EQ(weft_pread(fd, got, 2, 1), 2);
        CHECK(!memcmp(want + 1, got, 2));
    }
    close(fd);
}

static void *special(void *arg)
{
    /* tmpfs */
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/weft-io-special-%d", (int)getpid());
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (fd >= 0) {
        unlink(path);
        CHECK_EQ(weft_write(fd, "tmpfs data", 10), 10);
        CHECK_EQ(weft_pwrite(fd, "TM", 2, 0), 2);
        char b[32];
        CHECK_EQ(weft_pread(fd, b, sizeof b, 0), 10);
        CHECK(!memcmp(b, "TMpfs data", 10));
        CHECK_EQ(lseek(fd, 2, SEEK_SET), 2);
        CHECK_EQ(weft_read(fd, b, sizeof b), 8);
        CHECK(!memcmp(b, "pfs data", 8));
        CHECK_EQ(weft_read(fd, b, sizeof b), 0);
        close(fd);
    } else {
        printf("/dev/shm: cannot create a file, tmpfs not checked\n");
    }

    same_as_read("/proc/version");
    same_as_read("/proc/sys/kernel/ostype");
    same_as_read("/sys/devices/system/cpu/possible");
    same_as_read("/sys/kernel/mm/transparent_hugepage/enabled");

    /* a /proc file whose content changes: still read, not refused */
    fd = open("/proc/self/stat", O_RDONLY);
    CHECK(fd >= 0);
    char st[1024];
    CHECK(weft_read(fd, st, sizeof st) > 0);
    close(fd);

    /* a directory */
    fd = open("/tmp", O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    EXPECT_ERR(weft_read(fd, st, sizeof st), EISDIR);
    EXPECT_ERR(weft_pread(fd, st, sizeof st, 0), EISDIR);
    close(fd);
    return arg;
}

static void body(void)
{
    io_test_run(special, IO_IN_PTHREAD);
}

int main(int argc, char **argv)
{
    alarm(60);
    io_test_both_modes(argc, argv, body);
    return 0;
}
