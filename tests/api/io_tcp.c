/* Tests loopback TCP through the blocking-call mirrors: one user thread per
 * connection on both sides, 1,000 concurrent connections on 2 workers, each
 * echoing 64 KiB in uneven chunks; every byte must come back intact. Both
 * through io_uring and on the hand-off path (WEFT_IO=blocking: each waiting
 * call holds a kernel thread of its own there, about 2,000 at the peak). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "io_test.h"
#include "testutil.h"

#define BYTES (64 * 1024)

static int nconn;
static int listener;
static struct sockaddr_in addr;
static atomic_int served, verified;

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[4096];
    for (;;) {
        ssize_t n = weft_recv(fd, buf, sizeof buf, 0);
        CHECK(n >= 0);
        if (n == 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t m = weft_send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
            CHECK(m > 0);
            off += m;
        }
    }
    close(fd);
    atomic_fetch_add(&served, 1);
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    weft_attr a = WEFT_ATTR_INIT;
    a.detached = 1;
    for (int i = 0; i < nconn; i++) {
        int fd = weft_accept(listener, NULL, NULL);
        CHECK(fd >= 0);
        CHECK_EQ(weft_spawn(NULL, serve, (void *)(intptr_t)fd, &a), 0);
    }
    return NULL;
}

static void *client(void *arg)
{
    uint32_t seed = (uint32_t)(intptr_t)arg * 2654435761u + 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    CHECK_EQ(weft_connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    char *o = malloc(BYTES), *r = malloc(BYTES);
    CHECK(o && r);
    for (int i = 0; i < BYTES; i++)
        o[i] = (char)(seed >> (i % 24)) ^ (char)i;
    size_t sent = 0, got = 0;
    while (got < BYTES) {
        if (sent < BYTES) {
            size_t chunk = 1 + (seed = seed * 1103515245u + 12345u) % 8191;
            if (chunk > BYTES - sent)
                chunk = BYTES - sent;
            ssize_t m = weft_send(fd, o + sent, chunk, MSG_NOSIGNAL);
            CHECK(m > 0);
            sent += (size_t)m;
        }
        ssize_t n = weft_recv(fd, r + got, BYTES - got, sent < BYTES ? MSG_DONTWAIT : 0);
        if (n < 0) {
            CHECK_EQ(weft_errno(), EAGAIN);
            continue;
        }
        CHECK(n > 0);
        got += (size_t)n;
    }
    CHECK(!memcmp(o, r, BYTES));
    close(fd);
    free(o);
    free(r);
    atomic_fetch_add(&verified, 1);
    return NULL;
}

static void body(void)
{
    const char *mode = getenv("WEFT_IO");
    int blocking = mode && !strcmp(mode, "blocking");
    nconn = TEST_SANITIZED ? 100 : 1000;
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < (rlim_t)(2 * nconn + 64)) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < (rlim_t)(2 * nconn + 64))
            nconn = (int)(rl.rlim_cur - 64) / 2;
    }
    atomic_store(&served, 0);
    atomic_store(&verified, 0);

    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2;
    CHECK_EQ(weft_init(&cfg), 0);
    listener = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(listener >= 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    addr = io_bind_loopback(listener);
    CHECK_EQ(listen(listener, 4096), 0);

    weft_thread *acc;
    CHECK_EQ(weft_spawn(&acc, acceptor, NULL, NULL), 0);
    weft_thread **cl = calloc((size_t)nconn, sizeof *cl);
    CHECK(cl);
    for (int i = 0; i < nconn; i++)
        CHECK_EQ(weft_spawn(&cl[i], client, (void *)(intptr_t)i, NULL), 0);
    for (int i = 0; i < nconn; i++)
        CHECK_EQ(weft_join(cl[i], NULL), 0);
    CHECK_EQ(weft_join(acc, NULL), 0);
    CHECK_EQ(weft_finalize(), 0); /* waits for the detached servers */
    CHECK_EQ(atomic_load(&verified), nconn);
    CHECK_EQ(atomic_load(&served), nconn);
    close(listener);
    free(cl);
    printf("%s: %d connections x %d bytes echoed intact\n", blocking ? "hand-off" : "io_uring",
           nconn, BYTES);
}

int main(int argc, char **argv)
{
    io_test_both_modes(argc, argv, body);
    return 0;
}
