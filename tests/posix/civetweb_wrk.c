/* civetweb_wrk: Debian's civetweb (a thread per connection, num_threads
 * 1000, tcp_nodelay 1) serves a small static file on 127.0.0.1 while wrk
 * loads it for 2 s at 100 connections; every answer is a 200 and a plain
 * GET before and after returns the file. The server runs as this test
 * runs: natively, or under the drop-in (LD_PRELOAD is inherited by it,
 * not by wrk). Under the drop-in it uses at most 2 x CPUs + 16 kernel
 * threads. Skipped (77) when civetweb or wrk is not installed. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static const char *find(const char *name)
{
    static char buf[2][256];
    static int k;
    const char *dirs[] = { "/usr/bin", "/usr/local/bin", "/usr/sbin" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *p = buf[k];
        snprintf(p, sizeof buf[0], "%s/%s", dirs[i], name);
        if (access(p, X_OK) == 0) {
            k ^= 1;
            return p;
        }
    }
    return NULL;
}

static int free_port(void)
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

/* One HTTP/1.0 GET of path: the whole answer into out (NUL-ended), or -1. */
static int get(int port, const char *path, char *out, size_t cap)
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
    struct timeval tv = { 10, 0 };
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    CHECK(write(s, req, (size_t)n) == n);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(s, out + got, cap - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    close(s);
    return (int)got;
}

static int tasks(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    return pt_count_tasks(path);
}

static pid_t server;
static void stop_server(void)
{
    if (server > 0) {
        kill(server, SIGTERM);
        for (int i = 0; i < 50 && waitpid(server, NULL, WNOHANG) == 0; i++)
            usleep(100 * 1000);
        kill(server, SIGKILL);
        waitpid(server, NULL, 0);
        server = 0;
    }
}

int main(void)
{
    const char *civetweb = find("civetweb"), *wrk = find("wrk");
    if (!civetweb || !wrk) {
        printf("civetweb or wrk not installed: skipped\n");
        return 77;
    }
    char dir[] = "/tmp/weft_civetwebXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char file[128], body[] = "weft serves this file through civetweb\n";
    snprintf(file, sizeof file, "%s/hello.txt", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL && fputs(body, f) >= 0 && fclose(f) == 0);
    int port = free_port();
    char ports[32];
    snprintf(ports, sizeof ports, "127.0.0.1:%d", port);

    server = fork();
    CHECK(server >= 0);
    if (server == 0) {
        CHECK(chdir(dir) == 0);
        execl(civetweb, "civetweb", "-listening_ports", ports, "-document_root", dir,
              "-num_threads", "1000", "-tcp_nodelay", "1", "-enable_directory_listing", "no",
              (char *)NULL);
        _exit(127);
    }
    atexit(stop_server);
    char ans[4096];
    int up = 0;
    for (int i = 0; i < 200 && !up; i++) {
        up = get(port, "/hello.txt", ans, sizeof ans) > 0;
        if (!up)
            usleep(50 * 1000);
        CHECK(waitpid(server, NULL, WNOHANG) == 0);
    }
    CHECK(up);
    CHECK(strncmp(ans, "HTTP/1.1 200", 12) == 0 || strncmp(ans, "HTTP/1.0 200", 12) == 0);
    CHECK(strstr(ans, "\r\n\r\n") && strcmp(strstr(ans, "\r\n\r\n") + 4, body) == 0);

    /* wrk, without the drop-in: 2 s at 100 connections */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t w = fork();
    CHECK(w >= 0);
    if (w == 0) {
        unsetenv("LD_PRELOAD");
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        char url[96];
        snprintf(url, sizeof url, "http://%s/hello.txt", ports);
        execl(wrk, "wrk", "-t", "2", "-c", "100", "-d", "2s", "--timeout", "5s", url, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char out[8192];
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof out && (r = read(pfd[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    close(pfd[0]);
    int st;
    CHECK(waitpid(w, &st, 0) == w);
    int k = tasks(server);
    printf("%s", out);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(strstr(out, "Non-2xx") == NULL);
    long reqs = 0;
    char *p = strstr(out, " requests in ");
    CHECK(p != NULL);
    while (p > out && p[-1] >= '0' && p[-1] <= '9')
        p--;
    reqs = strtol(p, NULL, 10);
    CHECK(reqs > 100);
    CHECK(waitpid(server, NULL, WNOHANG) == 0); /* still up */
    CHECK(get(port, "/hello.txt", ans, sizeof ans) > 0);
    CHECK(strstr(ans, "\r\n\r\n") && strcmp(strstr(ans, "\r\n\r\n") + 4, body) == 0);
    printf("server kernel threads: %d\n", k);
    if (pt_dropin())
        CHECK(k > 0);
    pt_check_few_tasks(k, "the server");
    stop_server();
    unlink(file);
    rmdir(dir);
    return 0;
}
