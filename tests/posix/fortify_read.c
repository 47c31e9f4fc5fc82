/* fortify_read: a program built with _FORTIFY_SOURCE (as Debian builds
 * every package) calls __read_chk and __recv_chk for read and recv into
 * arrays of known size; those park the user thread too: 100 threads
 * blocked in them under the drop-in hold at most 2 x CPUs + 16 kernel
 * threads (natively one each, not checked). */
#if defined(__OPTIMIZE__) && !defined(_FORTIFY_SOURCE)
#define _FORTIFY_SOURCE 2
#endif
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pcheck.h"

enum { NT = 100 };
static int fds[NT][2];
static volatile size_t want = 4;

static void *reader(void *arg)
{
    int i = (int)(intptr_t)arg;
    char buf[4];
    size_t n = want; /* not known when compiled: the checked call */
    ssize_t r = i % 2 ? read(fds[i][0], buf, n) : recv(fds[i][0], buf, n, 0);
    CHECK(r == 1 && buf[0] == (char)i);
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) {
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds[i]) == 0);
        CHECK(pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i) == 0);
    }
    usleep(300 * 1000);
    pt_check_few_tasks(pt_tasks(), "blocked readers");
    for (int i = 0; i < NT; i++) {
        char c = (char)i;
        CHECK(write(fds[i][1], &c, 1) == 1);
    }
    for (int i = 0; i < NT; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        close(fds[i][0]);
        close(fds[i][1]);
    }
    return 0;
}
