/* no_same_address.c: where identical addresses are impossible (simulated:
 * WEFT_DIST_NO_REEXEC=1 keeps address randomisation on), weft_dist_init
 * fails on every rank, with a non-zero code and one line on stderr that
 * says how to run, and never hangs. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include "dist_test.h"

int main(int argc, char **argv)
{
    alarm(DIST_TEST_ALARM_S);
    long aslr = check_read_long("/proc/sys/kernel/randomize_va_space", 2);
    int p = personality(0xffffffff);
    if (aslr == 0 || (p != -1 && (p & ADDR_NO_RANDOMIZE)))
        SKIP("address randomisation is off here: nothing to simulate");
    const char *no = getenv("WEFT_DIST_NO_REEXEC");
    if (!no || strcmp(no, "1") != 0)
        SKIP("run with WEFT_DIST_NO_REEXEC=1");
    char path[] = "/tmp/weft-dist-stderr.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    int saved = dup(2);
    CHECK(saved >= 0 && dup2(fd, 2) == 2);
    int rc = weft_dist_init(&argc, &argv);
    fflush(stderr);
    CHECK(dup2(saved, 2) == 2);
    char buf[1024] = { 0 };
    CHECK(pread(fd, buf, sizeof buf - 1, 0) >= 0);
    if (rc == ENOTSUP)
        SKIP("weft_dist is not available in this build");
    int size = 0;
    if (rc == 0) { /* one rank moves nothing: identical addresses are not needed */
        size = weft_dist_size();
        CHECK_EQ(size, 1);
        CHECK_EQ(weft_dist_finalize(), 0);
        return 0;
    }
    CHECK_EQ(rc, EADDRNOTAVAIL);
    CHECK_EQ(weft_dist_rank(), -1);
    /* at most one line per rank, naming the cause and the way to run */
    char *nl = strchr(buf, '\n');
    CHECK(nl == NULL || nl[1] == '\0');
    CHECK(strstr(buf, "randomisation") != NULL);
    CHECK(strstr(buf, "setarch") != NULL);
    return 0;
}
