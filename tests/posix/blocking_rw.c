/* blocking_rw: read, write, recv, send, accept, connect, readv, writev,
 * recvmsg and sendmsg with NPTL's meaning, natively and under the drop-in.
 * Under the drop-in, 200 threads blocked in read() on pipes or sockets
 * hold no kernel thread each: /proc/self/task stays at most 2 x CPUs + 16
 * (natively they are a kernel thread each, which is not checked). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

enum { NT = 200, BIG = 1 << 20 };

/* ---- many readers blocked at once ---- */
static int pipes[NT][2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;

static void *reader(void *arg)
{
    int i = (int)(intptr_t)arg;
    pthread_mutex_lock(&m);
    started++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&m);
    char c = 0;
    ssize_t r = read(pipes[i][0], &c, 1);
    CHECK(r == 1 && c == (char)i);
    return NULL;
}

static void many_readers(int n)
{
    pthread_t t[NT];
    for (int i = 0; i < n; i++) {
        if (i % 2)
            CHECK(pipe(pipes[i]) == 0);
        else
            CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pipes[i]) == 0);
        CHECK(pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i) == 0);
    }
    pthread_mutex_lock(&m);
    while (started < n)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    usleep(200 * 1000); /* let them reach read() */
    pt_check_few_tasks(pt_tasks(), "blocked readers");
    for (int i = 0; i < n; i++) {
        char c = (char)i;
        CHECK(write(pipes[i][1], &c, 1) == 1);
    }
    for (int i = 0; i < n; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
}

/* ---- semantics ---- */
static int sv[2];
static char *big;

static void *big_reader(void *arg)
{
    (void)arg;
    char *got = malloc(BIG);
    CHECK(got != NULL);
    size_t done = 0;
    while (done < BIG) {
        ssize_t r = recv(sv[1], got + done, BIG - done, 0);
        CHECK(r > 0);
        done += (size_t)r;
    }
    CHECK(memcmp(got, big, BIG) == 0);
    free(got);
    return NULL;
}

static int lsock;
static void *acceptor(void *arg)
{
    (void)arg;
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int s = accept4(lsock, (struct sockaddr *)&a, &al, SOCK_CLOEXEC);
    CHECK(s >= 0);
    CHECK(fcntl(s, F_GETFD) & FD_CLOEXEC);
    CHECK(!(fcntl(s, F_GETFL) & O_NONBLOCK));
    char buf[8];
    struct iovec v[2] = { { buf, 3 }, { buf + 3, 5 } };
    struct msghdr msg = { .msg_iov = v, .msg_iovlen = 2 };
    size_t got = 0;
    while (got < 8) {
        ssize_t r = recvmsg(s, &msg, MSG_WAITALL);
        CHECK(r > 0);
        got += (size_t)r;
        break;
    }
    CHECK(got == 8 && memcmp(buf, "abcdefgh", 8) == 0);
    CHECK(writev(s, v, 2) == 8);
    close(s);
    return NULL;
}

static void *semantics(void *arg)
{
    (void)arg;
    /* a big blocking send goes out whole while the peer reads */
    big = malloc(BIG);
    CHECK(big != NULL);
    for (int i = 0; i < BIG; i++)
        big[i] = (char)(i * 7);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, big_reader, NULL) == 0);
    CHECK(send(sv[0], big, BIG, 0) == BIG);
    CHECK(pthread_join(t, NULL) == 0);

    /* O_NONBLOCK still fails with EAGAIN */
    char c;
    CHECK(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
    errno = 0;
    CHECK(read(sv[1], &c, 1) == -1 && errno == EAGAIN);
    CHECK(recv(sv[1], &c, 1, 0) == -1 && errno == EAGAIN);
    CHECK(fcntl(sv[1], F_SETFL, 0) == 0);
    /* MSG_DONTWAIT on a blocking socket too */
    CHECK(recv(sv[1], &c, 1, MSG_DONTWAIT) == -1 && errno == EAGAIN);

    /* SO_RCVTIMEO times out with EAGAIN, after about the timeout */
    struct timeval tv = { 0, 100 * 1000 };
    CHECK(setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
    double t0 = pt_now_s(CLOCK_MONOTONIC);
    errno = 0;
    CHECK(read(sv[1], &c, 1) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK));
    CHECK(recv(sv[1], &c, 1, 0) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK));
    double dt = pt_now_s(CLOCK_MONOTONIC) - t0;
    CHECK(dt >= 0.15 && dt < 30);
    /* data within the timeout is read */
    CHECK(write(sv[0], "x", 1) == 1);
    CHECK(read(sv[1], &c, 1) == 1 && c == 'x');

    /* SO_SNDTIMEO: a full socket times out; a part sent is returned */
    CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0);
    ssize_t r = send(sv[0], big, BIG, 0);
    CHECK((r > 0 && r < BIG) || (r == -1 && errno == EAGAIN));
    close(sv[0]);
    close(sv[1]);

    /* accept4, connect, recvmsg, writev over TCP on loopback */
    lsock = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lsock >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK(bind(lsock, (struct sockaddr *)&a, sizeof a) == 0);
    socklen_t al = sizeof a;
    CHECK(getsockname(lsock, (struct sockaddr *)&a, &al) == 0);
    CHECK(listen(lsock, 8) == 0);
    CHECK(pthread_create(&t, NULL, acceptor, NULL) == 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(s, (struct sockaddr *)&a, sizeof a) == 0);
    struct iovec v[2] = { { "abc", 3 }, { "defgh", 5 } };
    struct msghdr msg = { .msg_iov = v, .msg_iovlen = 2 };
    CHECK(sendmsg(s, &msg, 0) == 8);
    char buf[9] = { 0 };
    size_t got = 0;
    while (got < 8) {
        struct iovec rv = { buf + got, 8 - got };
        r = readv(s, &rv, 1);
        CHECK(r > 0);
        got += (size_t)r;
    }
    CHECK(strcmp(buf, "abcdefgh") == 0);
    CHECK(read(s, buf, 1) == 0); /* the peer closed */
    CHECK(pthread_join(t, NULL) == 0);
    close(s);
    close(lsock);

    /* regular files: write, pwrite, pread, read */
    char path[] = "/tmp/weft_blocking_rwXXXXXX";
    int f = mkstemp(path);
    CHECK(f >= 0);
    unlink(path);
    CHECK(write(f, "hello", 5) == 5);
    CHECK(pwrite(f, "J", 1, 0) == 1);
    CHECK(pread(f, buf, 5, 0) == 5 && memcmp(buf, "Jello", 5) == 0);
    CHECK(lseek(f, 1, SEEK_SET) == 1);
    CHECK(read(f, buf, 4) == 4 && memcmp(buf, "ello", 4) == 0);
    close(f);
    /* errors as glibc's */
    CHECK(read(-1, buf, 1) == -1 && errno == EBADF);
    CHECK(recv(0x7ff0, buf, 1, 0) == -1 && errno == EBADF);
    free(big);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, semantics, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    many_readers(pt_dropin() ? NT : 50);
    return 0;
}
