/* apache_worker: Debian's Apache 2.4 with mpm_worker (a fork-first daemon:
 * the parent forks children, each with a listener thread and 32 worker
 * threads) serves a file on 127.0.0.1 from a private configuration in a
 * temporary directory (its own Listen, PidFile, ErrorLog, runtime
 * directory), run in the foreground as this test runs: natively, or under
 * the drop-in (LD_PRELOAD is inherited by apache2 and its children, not by
 * wrk). 100 plain GETs must return the file; then wrk loads it for 2 s at
 * 50 connections and every answer must be a 200. Under the drop-in each
 * child must have the drop-in loaded and use at most 2 x CPUs + 16 kernel
 * threads. The server (its process group) and the directory are removed on
 * every exit of the test (atexit; a SIGALRM bound exits through it too).
 * Two Listens: the children then serialise accept on a robust
 * process-shared pthread mutex in shared memory, the fork-first daemon's
 * case of issue 27 (it failed with EDEADLK in every child before
 * process-shared objects worked across processes). Skipped (77) when apache2
 * or its mpm_worker module is not installed. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

#define MODS "/usr/lib/apache2/modules"

static const char *find(const char *name)
{
    static char buf[2][256];
    static int k;
    const char *dirs[] = { "/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin" };
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

static int body_is(const char *ans, const char *body)
{
    const char *b = strstr(ans, "\r\n\r\n");
    return (strncmp(ans, "HTTP/1.1 200", 12) == 0 || strncmp(ans, "HTTP/1.0 200", 12) == 0) && b &&
           strcmp(b + 4, body) == 0;
}

static char dir[] = "/tmp/weft_apacheXXXXXX";
static int have_dir;
static pid_t server;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    remove(p);
    return 0;
}

/* The server's whole process group (the parent and its children), then the
 * directory. */
static void cleanup(void)
{
    if (server > 0) {
        kill(-server, SIGTERM);
        for (int i = 0; i < 30 && waitpid(server, NULL, WNOHANG) == 0; i++)
            usleep(100 * 1000);
        kill(-server, SIGKILL);
        waitpid(server, NULL, 0);
        for (int i = 0; i < 50 && kill(-server, 0) == 0; i++)
            usleep(20 * 1000); /* children reparented: gone once they are reaped */
        server = 0;
    }
    if (have_dir) {
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        have_dir = 0;
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "apache_worker: time bound reached\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    exit(1); /* through cleanup */
}

static void show_log(void)
{
    char p[128], line[512];
    snprintf(p, sizeof p, "%s/error.log", dir);
    FILE *f = fopen(p, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fclose(f);
}

/* The server's children: pids into kids (at most cap), their count. */
static int children(pid_t parent, pid_t *kids, int cap)
{
    char p[64], buf[256];
    snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)parent, (int)parent);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    int n = 0;
    if (fgets(buf, sizeof buf, f))
        for (char *s = strtok(buf, " \n"); s && n < cap; s = strtok(NULL, " \n"))
            kids[n++] = (pid_t)atoi(s);
    fclose(f);
    return n;
}

static int maps_dropin(pid_t pid)
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

int main(void)
{
    const char *apache = find("apache2"), *wrk = find("wrk");
    if (!apache || access(MODS "/mod_mpm_worker.so", R_OK) != 0) {
        printf("apache2 (with mpm_worker) not installed: skipped\n");
        return 77;
    }
    CHECK(mkdtemp(dir) != NULL);
    have_dir = 1;
    atexit(cleanup);
    signal(SIGALRM, on_alarm);
    alarm(60);
    /* The children may run as nobody: they must reach the file. */
    CHECK(chmod(dir, 0755) == 0);
    char path[256], body[] = "weft serves this file through apache's mpm_worker\n";
    snprintf(path, sizeof path, "%s/hello.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fputs(body, f) >= 0 && fclose(f) == 0);
    int port = free_port(), port2 = free_port();
    while (port2 == port)
        port2 = free_port();
    snprintf(path, sizeof path, "%s/httpd.conf", dir);
    f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f,
            "ServerRoot %s\nServerName 127.0.0.1\nListen 127.0.0.1:%d\nListen 127.0.0.1:%d\n"
            "LoadModule mpm_worker_module " MODS "/mod_mpm_worker.so\n"
            "LoadModule authz_core_module " MODS "/mod_authz_core.so\n"
            "LoadModule mime_module " MODS "/mod_mime.so\n"
            "TypesConfig /dev/null\n"
            "PidFile %s/httpd.pid\nErrorLog %s/error.log\nLogLevel warn\n"
            "DefaultRuntimeDir %s\nDocumentRoot %s\n"
            "StartServers 2\nServerLimit 4\nThreadsPerChild 32\nMaxRequestWorkers 128\n"
            "<Directory %s>\n  Require all granted\n</Directory>\n",
            dir, port, port2, dir, dir, dir, dir, dir);
    if (geteuid() == 0) /* Apache refuses to serve as root */
        fprintf(f, "User nobody\nGroup nogroup\n");
    CHECK(fclose(f) == 0);

    server = fork();
    CHECK(server >= 0);
    if (server == 0) {
        setpgid(0, 0); /* its own group: the cleanup reaches every child */
        execl(apache, "apache2", "-f", path, "-DFOREGROUND", (char *)NULL);
        _exit(127);
    }
    setpgid(server, server);
    char ans[4096];
    int up = 0;
    for (int i = 0; i < 200 && !up; i++) {
        up = get(port, "/hello.txt", ans, sizeof ans) > 0;
        if (!up)
            usleep(50 * 1000);
        if (waitpid(server, NULL, WNOHANG) != 0) {
            server = 0;
            show_log();
            CHECK(!"apache2 exited");
        }
    }
    CHECK(up);
    for (int i = 0; i < 100; i++) {
        CHECK(get(port, "/hello.txt", ans, sizeof ans) > 0);
        if (!body_is(ans, body)) {
            fprintf(stderr, "answer %d: %.200s\n", i, ans);
            show_log();
        }
        CHECK(body_is(ans, body));
    }
    if (wrk) {
        int pfd[2];
        CHECK(pipe(pfd) == 0);
        pid_t w = fork();
        CHECK(w >= 0);
        if (w == 0) {
            unsetenv("LD_PRELOAD");
            dup2(pfd[1], 1);
            dup2(pfd[1], 2);
            char url[96];
            snprintf(url, sizeof url, "http://127.0.0.1:%d/hello.txt", port);
            execl(wrk, "wrk", "-t", "2", "-c", "50", "-d", "2s", "--timeout", "5s", url,
                  (char *)NULL);
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
        printf("%s", out);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CHECK(strstr(out, "Non-2xx") == NULL);
        char *p = strstr(out, " requests in ");
        CHECK(p != NULL);
        while (p > out && p[-1] >= '0' && p[-1] <= '9')
            p--;
        CHECK(strtol(p, NULL, 10) > 100);
    }
    CHECK(waitpid(server, NULL, WNOHANG) == 0); /* still up */
    CHECK(get(port, "/hello.txt", ans, sizeof ans) > 0 && body_is(ans, body));
    pid_t kids[16];
    int n = children(server, kids, 16);
    CHECK(n >= 1);
    for (int i = 0; i < n; i++) {
        char t[64];
        snprintf(t, sizeof t, "/proc/%d/task", (int)kids[i]);
        int k = pt_count_tasks(t);
        printf("child %d: %d kernel threads\n", (int)kids[i], k);
        if (pt_dropin()) {
            CHECK(maps_dropin(kids[i]));
            pt_check_few_tasks(k, "an apache child");
        }
    }
    printf("ok\n");
    return 0;
}
