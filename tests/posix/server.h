/* server.h: what the real-server tests (apache_worker, civetweb_wrk,
 * mariadb_sysbench) share to start a server program on 127.0.0.1, talk to
 * it, load it with wrk and remove it and its files on exit. Plain C on top
 * of pcheck.h; the including file defines _GNU_SOURCE. */
#ifndef SERVER_H
#define SERVER_H
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

/* The executable name in the first of dirs (':'-separated) that has it, or
 * NULL. The answer stays valid for the next 3 calls. */
static inline const char *srv_find(const char *dirs, const char *name)
{
    static char buf[4][256];
    static int k;
    for (const char *d = dirs; *d;) {
        size_t len = strcspn(d, ":");
        char *p = buf[k];
        snprintf(p, sizeof buf[0], "%.*s/%s", (int)len, d, name);
        if (access(p, X_OK) == 0) {
            k = (k + 1) % 4;
            return p;
        }
        d += len + (d[len] == ':');
    }
    return NULL;
}

/* A TCP port on 127.0.0.1 that was free a moment ago. */
static inline int srv_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(s >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
    socklen_t al = sizeof a;
    CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
    close(s);
    return ntohs(a.sin_port);
}

/* A socket connected to 127.0.0.1:port, or -1. */
static inline int srv_connect(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(s >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        close(s);
        return -1;
    }
    return s;
}

/* Whether something accepts connections on 127.0.0.1:port. */
static inline int srv_port_open(int port)
{
    int s = srv_connect(port);
    if (s >= 0)
        close(s);
    return s >= 0;
}

/* Reads fd to its end into out (at most cap - 1 bytes, NUL-ended); the
 * bytes read. */
static inline size_t srv_read_all(int fd, char *out, size_t cap)
{
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(fd, out + got, cap - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    return got;
}

/* One HTTP/1.0 GET of path: the whole answer into out (NUL-ended), or -1. */
static inline int srv_get(int port, const char *path, char *out, size_t cap)
{
    int s = srv_connect(port);
    if (s < 0)
        return -1;
    struct timeval tv = { 10, 0 };
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    CHECK(write(s, req, (size_t)n) == n);
    size_t got = srv_read_all(s, out, cap);
    close(s);
    return (int)got;
}

/* Waits up to tries x 50 ms for the server *pid to answer on port: a GET
 * of path (its answer into out) or, if path is NULL, a connection. Whether
 * it answered; if the server exited, *pid is reaped and set to 0. */
static inline int srv_wait_up(pid_t *pid, int tries, int port, const char *path, char *out,
                              size_t cap)
{
    int up = 0;
    for (int i = 0; i < tries && !up; i++) {
        up = path ? srv_get(port, path, out, cap) > 0 : srv_port_open(port);
        if (!up)
            usleep(50 * 1000);
        if (waitpid(*pid, NULL, WNOHANG) != 0) {
            *pid = 0;
            break;
        }
    }
    return up;
}

/* Stops the server *pid if it runs (SIGTERM, then after tenths x 100 ms
 * SIGKILL) and reaps it; with group, its whole process group, whose
 * reparented children are waited for too. Sets *pid to 0. */
static inline void srv_stop(pid_t *pid, int group, int tenths)
{
    pid_t s = *pid, target = group ? -s : s;
    if (s <= 0)
        return;
    kill(target, SIGTERM);
    for (int i = 0; i < tenths && waitpid(s, NULL, WNOHANG) == 0; i++)
        usleep(100 * 1000);
    kill(target, SIGKILL);
    waitpid(s, NULL, 0);
    for (int i = 0; group && i < 50 && kill(target, 0) == 0; i++)
        usleep(20 * 1000); /* children reparented: gone once they are reaped */
    *pid = 0;
}

static inline int srv_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    remove(p);
    return 0;
}

/* Removes the tree at dir, not following symbolic links. */
static inline void srv_rm_tree(const char *dir)
{
    nftw(dir, srv_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The name of the test, for the time bound's message. */
static const char *srv_test_name;

static inline void srv_on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = ": time bound reached\n";
    if (write(2, srv_test_name, strlen(srv_test_name)) < 0 || write(2, msg, sizeof msg - 1) < 0) {
    }
    exit(1); /* through the test's atexit cleanup */
}

/* Ends test after seconds with status 1 through its atexit handlers. */
static inline void srv_bound(const char *test, unsigned seconds)
{
    srv_test_name = test;
    signal(SIGALRM, srv_on_alarm);
    alarm(seconds);
}

/* Copies dir/name to stderr, if it can be read. */
static inline void srv_show(const char *dir, const char *name)
{
    char p[128], line[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fclose(f);
}

/* The kernel threads of process pid, or -1. */
static inline int srv_tasks(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    return pt_count_tasks(path);
}

/* Whether process pid has the drop-in mapped. */
static inline int srv_maps_dropin(pid_t pid)
{
    char p[64], line[512];
    snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "libweft-pthread") != NULL;
    fclose(f);
    return found;
}

/* Runs the wrk program at path without the drop-in: 2 threads, conns
 * connections, 2 s on url. Its output into out (NUL-ended), its wait
 * status as the result. */
static inline int srv_wrk(const char *path, const char *conns, const char *url, char *out,
                          size_t cap)
{
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t w = fork();
    CHECK(w >= 0);
    if (w == 0) {
        unsetenv("LD_PRELOAD");
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        execl(path, "wrk", "-t", "2", "-c", conns, "-d", "2s", "--timeout", "5s", url,
              (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    srv_read_all(pfd[0], out, cap);
    close(pfd[0]);
    int st;
    CHECK(waitpid(w, &st, 0) == w);
    return st;
}

/* Prints wrk's output out and checks the run: exit status 0 (st), no
 * answer other than 2xx, more than 100 requests. */
static inline void srv_wrk_check(const char *out, int st)
{
    printf("%s", out);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(strstr(out, "Non-2xx") == NULL);
    const char *p = strstr(out, " requests in ");
    CHECK(p != NULL);
    while (p > out && p[-1] >= '0' && p[-1] <= '9')
        p--;
    CHECK(strtol(p, NULL, 10) > 100);
}
#endif
