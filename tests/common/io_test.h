/* io_test.h: runs an I/O test body twice: through io_uring, then again in a
 * child process with WEFT_IO=blocking (the spare-thread path); loopback
 * sockets for the tests. */
#ifndef WEFT_TEST_IO_H
#define WEFT_TEST_IO_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* call fails as a system call does: -1, and errno (read through
 * weft_errno, which no compiler caches) is err. */
#define EXPECT_ERR(call, err)                                                                      \
    do {                                                                                           \
        long r_ = (long)(call);                                                                    \
        int e_ = weft_errno();                                                                     \
        CHECK_EQ(r_, -1);                                                                          \
        CHECK_EQ(e_, (err));                                                                       \
    } while (0)

/* Where io_test_run runs the test function besides a user thread. */
enum { IO_IN_INITIAL = 1, IO_IN_PTHREAD = 2 };

/* Starts the runtime on 2 workers, runs fn(NULL) in a user thread, then
 * (where says) in the initial thread and in a plain kernel thread, and
 * finalizes. */
static inline void io_test_run(void *(*fn)(void *), unsigned where)
{
    test_init(2, TEST_POLICY_ENV);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, fn, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    if (where & IO_IN_INITIAL)
        fn(NULL);
    if (where & IO_IN_PTHREAD) {
        pthread_t pt;
        CHECK_EQ(pthread_create(&pt, NULL, fn, NULL), 0);
        CHECK_EQ(pthread_join(pt, NULL), 0);
    }
    CHECK_EQ(weft_finalize(), 0);
}

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

/* ---- loopback sockets ------------------------------------------------------ */

/* 127.0.0.1, port 0 (bind picks a free one). */
static inline struct sockaddr_in io_loopback(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    return a;
}

/* Binds socket s to a free loopback port; returns the address it got. */
static inline struct sockaddr_in io_bind_loopback(int s)
{
    struct sockaddr_in a = io_loopback();
    CHECK_EQ(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
    return a;
}

/* A connected loopback TCP pair: *a connected, *b accepted. */
static inline void io_tcp_pair(int *a, int *b)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    struct sockaddr_in addr = io_bind_loopback(l);
    CHECK_EQ(listen(l, 1), 0);
    *a = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(*a >= 0);
    CHECK_EQ(connect(*a, (struct sockaddr *)&addr, sizeof addr), 0);
    *b = accept(l, NULL, NULL);
    CHECK(*b >= 0);
    close(l);
}

#endif
