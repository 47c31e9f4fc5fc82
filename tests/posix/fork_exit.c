/* fork_exit.c: in a child of fork made by a thread (not the initial one),
 * pthread_exit of that only thread ends the process as exit(0) would:
 * status 0 and the atexit handlers run (it crashed under the drop-in). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "pcheck.h"

static int *shared;

static void at_exit(void)
{
    *shared = 42;
}

static void *forker(void *arg)
{
    (void)arg;
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(atexit(at_exit) == 0);
        static int ret = 7;
        pthread_exit(&ret);
        _exit(3); /* not reached */
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(*shared == 42);
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77; /* ThreadSanitizer ends a forked child of a threaded process with its own status */
#endif
    shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(shared != MAP_FAILED);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, forker, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    return 0;
}
