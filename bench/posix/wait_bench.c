/* wait_bench: an unmodified pthread program that times the waits and opens
 * libweft-pthread routes (docs/posix.md, "Blocking calls (part 2)"):
 *   poll2, select2, epoll: two threads pass a byte back and forth through
 *     two pipes, each waiting with poll of 2 descriptors (its pipe and one
 *     never written), select of the same two, or epoll_wait;
 *   open_r, open_w: open (read-only, write-only) and close of a regular file.
 * Run it natively and under the drop-in (weft-run --workers 1, or
 * LD_PRELOAD=libweft-pthread.so WEFT_WORKERS=1). Build by hand:
 *   cc -O2 bench/posix/wait_bench.c -o wait_bench -lpthread
 * One line per pattern: name=<pattern> ns_per_op=<median> cpu_ns_per_op=<median> runs=<runs> n=<ops>
 * Usage: wait_bench [-n ops] [-r runs] [pattern]... */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int n_ops = 20000;
static int idle[2];
static char path[] = "/tmp/weft-wait-bench-XXXXXX";

enum { POLL2, SELECT2, EPOLL };

struct side {
    int kind, in, out, first;
};

static void wait_in(const struct side *s, int ep)
{
    if (s->kind == POLL2) {
        struct pollfd p[2] = { { idle[0], POLLIN, 0 }, { s->in, POLLIN, 0 } };
        if (poll(p, 2, -1) != 1)
            abort();
    } else if (s->kind == SELECT2) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(idle[0], &r);
        FD_SET(s->in, &r);
        if (select((s->in > idle[0] ? s->in : idle[0]) + 1, &r, NULL, NULL, NULL) != 1)
            abort();
    } else {
        struct epoll_event e;
        if (epoll_wait(ep, &e, 1, -1) != 1)
            abort();
    }
}

static void *side_run(void *arg)
{
    const struct side *s = arg;
    int ep = -1;
    if (s->kind == EPOLL) {
        ep = epoll_create1(0);
        struct epoll_event e = { .events = EPOLLIN };
        epoll_ctl(ep, EPOLL_CTL_ADD, s->in, &e);
    }
    char c = 0;
    for (int i = 0; i < n_ops; i++) {
        if (s->first && write(s->out, &c, 1) != 1)
            abort();
        wait_in(s, ep);
        if (read(s->in, &c, 1) != 1)
            abort();
        if (!s->first && write(s->out, &c, 1) != 1)
            abort();
    }
    if (ep >= 0)
        close(ep);
    return NULL;
}

static void pingpong(int kind)
{
    int a[2], b[2];
    if (pipe(a) || pipe(b))
        abort();
    struct side x = { kind, b[0], a[1], 1 }, y = { kind, a[0], b[1], 0 };
    pthread_t t, u;
    pthread_create(&t, NULL, side_run, &x);
    pthread_create(&u, NULL, side_run, &y);
    pthread_join(t, NULL);
    pthread_join(u, NULL);
    close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}

static void *opens(void *arg)
{
    int flags = (int)(intptr_t)arg;
    for (int i = 0; i < n_ops; i++) {
        int fd = open(path, flags);
        if (fd < 0)
            abort();
        close(fd);
    }
    return NULL;
}

static void open_loop(int flags)
{
    pthread_t t; /* a thread the program made: a user thread under the drop-in */
    pthread_create(&t, NULL, opens, (void *)(intptr_t)flags);
    pthread_join(t, NULL);
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int runs = 5;
    const char *names[] = { "poll2", "select2", "epoll", "open_r", "open_w" };
    int want[5] = { 0 }, any = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n_ops = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else
            for (int k = 0; k < 5; k++)
                if (!strcmp(argv[i], names[k]))
                    want[k] = any = 1;
    }
    if (runs < 1 || runs > 64 || n_ops < 1)
        return 2;
    if (pipe(idle))
        return 1;
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    for (int k = 0; k < 5; k++) {
        if (any && !want[k])
            continue;
        uint64_t wall[64], cpu[64];
        for (int r = 0; r < runs; r++) {
            uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            if (k < 3)
                pingpong(k);
            else
                open_loop(k == 3 ? O_RDONLY : O_WRONLY);
            wall[r] = (clock_ns(CLOCK_MONOTONIC) - w0) / (uint64_t)n_ops;
            cpu[r] = (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / (uint64_t)n_ops;
        }
        qsort(wall, (size_t)runs, sizeof *wall, cmp);
        qsort(cpu, (size_t)runs, sizeof *cpu, cmp);
        printf("name=%s ns_per_op=%llu cpu_ns_per_op=%llu runs=%d n=%d\n", names[k],
               (unsigned long long)wall[runs / 2], (unsigned long long)cpu[runs / 2], runs, n_ops);
    }
    unlink(path);
    return 0;
}
