/* io_test.h: runs an I/O test body twice: through io_uring, then again in a
 * child process with WEFT_IO=blocking (the spare-thread path). */
#ifndef WEFT_TEST_IO_H
#define WEFT_TEST_IO_H

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"

/* call fails as a system call does: -1, and errno (read through
 * weft_errno, which no compiler caches) is err. */
#define EXPECT_ERR(call, err)                                                                      \
    do {                                                                                           \
        long r_ = (long)(call);                                                                    \
        int e_ = weft_errno();                                                                     \
        CHECK_EQ(r_, -1);                                                                          \
        CHECK_EQ(e_, (err));                                                                       \
    } while (0)

/* Returns after running body() in this process and, from the parent only,
 * in a child with WEFT_IO=blocking. */
static inline void io_test_both_modes(int argc, char **argv, void (*body)(void))
{
    (void)argc;
    body();
    const char *mode = getenv("WEFT_IO");
    if (mode && !strcmp(mode, "blocking"))
        return;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("WEFT_IO", "blocking", 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

#endif
