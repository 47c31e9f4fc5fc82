/* httpd.c: a keep-alive HTTP/1.1 server with one thread per connection and
 * a static response; weft user threads by default, pthreads with -p (the
 * 1:1 baseline of the same code).
 *
 *   httpd [-p] [-w WORKERS] [-P PORT]
 *
 * Requests are read until the blank line that ends their header (no body);
 * every request gets the same 13-byte reply. Runs until killed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n"
                            "Connection: keep-alive\r\n\r\nHello, world!";
static int use_pthreads;

static ssize_t rd(int fd, char *b, size_t n)
{
    return use_pthreads ? recv(fd, b, n, 0) : weft_recv(fd, b, n, 0);
}

static ssize_t wr(int fd, const char *b, size_t n)
{
    return use_pthreads ? send(fd, b, n, MSG_NOSIGNAL) : weft_send(fd, b, n, MSG_NOSIGNAL);
}

/* Serves one connection: counts complete request headers in what arrives
 * (pipelined requests included) and answers each. */
static void *conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[8192];
    size_t have = 0;
    for (;;) {
        ssize_t n = rd(fd, buf + have, sizeof buf - have);
        if (n <= 0) {
            if (getenv("HTTPD_DEBUG"))
                fprintf(stderr, "recv: %zd %s\n", n, n < 0 ? strerror(weft_errno()) : "eof");
            break;
        }
        have += (size_t)n;
        char *p = buf, *end = buf + have, *e;
        int answered = 0;
        while ((e = memmem(p, (size_t)(end - p), "\r\n\r\n", 4))) {
            p = e + 4;
            answered++;
        }
        for (int i = 0; i < answered; i++)
            if (wr(fd, reply, sizeof reply - 1) != (ssize_t)(sizeof reply - 1))
                goto out;
        have = (size_t)(end - p);
        memmove(buf, p, have);
        if (have == sizeof buf)
            break; /* a header larger than the buffer: give up */
    }
out:
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    int workers = 0, port = 8080, c;
    while ((c = getopt(argc, argv, "pw:P:")) != -1) {
        switch (c) {
        case 'p': use_pthreads = 1; break;
        case 'w': workers = atoi(optarg); break;
        case 'P': port = atoi(optarg); break;
        default: fprintf(stderr, "usage: %s [-p] [-w WORKERS] [-P PORT]\n", argv[0]); return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 4096) != 0) {
        perror("httpd: bind/listen");
        return 1;
    }
    weft_config cfg;
    weft_config_default(&cfg);
    if (workers > 0)
        cfg.workers = workers;
    if (!use_pthreads && weft_init(&cfg) != 0) {
        fprintf(stderr, "httpd: weft_init failed\n");
        return 1;
    }
    fprintf(stderr, "httpd: %s on 127.0.0.1:%d\n",
            use_pthreads ? "pthread per connection" : "weft user thread per connection", port);
    pthread_attr_t pa;
    pthread_attr_init(&pa);
    pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&pa, 64 << 10);
    weft_attr wa = WEFT_ATTR_INIT;
    wa.detached = 1;
    for (;;) {
        int fd = use_pthreads ? accept(ls, NULL, NULL) : weft_accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
                continue;
            perror("httpd: accept");
            return 1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (use_pthreads) {
            pthread_t t;
            if (pthread_create(&t, &pa, conn, (void *)(intptr_t)fd) != 0)
                close(fd);
        } else if (weft_spawn(NULL, conn, (void *)(intptr_t)fd, &wa) != 0) {
            close(fd);
        }
    }
}
