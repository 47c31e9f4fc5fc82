/* poll_ready: poll(2) of one descriptor that is ready already answers at
 * once, as the kernel does, and under the drop-in without a request on
 * weft's rings (what civetweb's worker makes before each read: a ring poll
 * and its linked timeout for a socket whose request had arrived). The
 * rings' submissions are read from /proc/self/fdinfo (SqHead of each
 * io_uring descriptor); natively there is none, and only the answers are
 * checked. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include "pcheck.h"

#define POLLS 1000

/* The submissions consumed so far by every io_uring of this process. */
static unsigned long ring_submissions(void)
{
    unsigned long sum = 0;
    DIR *d = opendir("/proc/self/fd");
    CHECK(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[300], link[64], line[128];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (!strstr(link, "io_uring"))
            continue;
        snprintf(path, sizeof path, "/proc/self/fdinfo/%s", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long v;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "SqHead: %lu", &v) == 1)
                sum += v;
        fclose(f);
    }
    closedir(d);
    return sum;
}

static void *poller(void *arg)
{
    int *sv = arg;
    unsigned long before = ring_submissions();
    for (int i = 0; i < POLLS; i++) {
        struct pollfd p = { sv[0], POLLIN, 0 };
        CHECK(poll(&p, 1, 5000) == 1);
        CHECK(p.revents == POLLIN);
        struct pollfd q[2] = { { sv[0], POLLIN, 0 }, { sv[1], POLLIN, 0 } };
        CHECK(poll(q, 2, 5000) == 1); /* only sv[0] has data */
        CHECK(q[0].revents == POLLIN && q[1].revents == 0);
    }
    unsigned long used = ring_submissions() - before;
    if (used >= POLLS / 10) {
        fprintf(stderr, "%lu ring submissions for %d polls of ready descriptors\n", used, POLLS);
        exit(1);
    }
    /* one that is not ready still waits, and is woken by the data */
    char c;
    CHECK(read(sv[0], &c, 1) == 1);
    struct pollfd p = { sv[0], POLLIN, 0 };
    CHECK(poll(&p, 1, 20) == 0);
    return NULL;
}

int main(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(write(sv[1], "x", 1) == 1);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, poller, sv) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
