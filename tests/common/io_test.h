/* io_test.h: runs an I/O test body twice: through io_uring, then again in a
 * child process with WEFT_IO=blocking (the spare-thread path). */
#ifndef WEFT_TEST_IO_H
#define WEFT_TEST_IO_H

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

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
