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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"

#define MODS "/usr/lib/apache2/modules"
#define BINS "/usr/sbin:/usr/bin:/usr/local/bin:/usr/local/sbin"

static int body_is(const char *ans, const char *body)
{
    const char *b = strstr(ans, "\r\n\r\n");
    return (strncmp(ans, "HTTP/1.1 200", 12) == 0 || strncmp(ans, "HTTP/1.0 200", 12) == 0) && b &&
           strcmp(b + 4, body) == 0;
}

static char dir[] = "/tmp/weft_apacheXXXXXX";
static int have_dir;
static pid_t server;

/* The server's whole process group (the parent and its children), then the
 * directory. */
static void cleanup(void)
{
    srv_stop(&server, 1, 30);
    if (have_dir) {
        srv_rm_tree(dir);
        have_dir = 0;
    }
}

static void show_log(void)
{
    srv_show(dir, "error.log");
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

int main(void)
{
    const char *apache = srv_find(BINS, "apache2"), *wrk = srv_find(BINS, "wrk");
    if (!apache || access(MODS "/mod_mpm_worker.so", R_OK) != 0) {
        printf("apache2 (with mpm_worker) not installed: skipped\n");
        return 77;
    }
    CHECK(mkdtemp(dir) != NULL);
    have_dir = 1;
    atexit(cleanup);
    srv_bound("apache_worker", 60);
    /* The children may run as nobody: they must reach the file. */
    CHECK(chmod(dir, 0755) == 0);
    char path[256], body[] = "weft serves this file through apache's mpm_worker\n";
    snprintf(path, sizeof path, "%s/hello.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fputs(body, f) >= 0 && fclose(f) == 0);
    int port = srv_free_port(), port2 = srv_free_port();
    while (port2 == port)
        port2 = srv_free_port();
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
    int up = srv_wait_up(&server, 200, port, "/hello.txt", ans, sizeof ans);
    if (server == 0) {
        show_log();
        CHECK(!"apache2 exited");
    }
    CHECK(up);
    for (int i = 0; i < 100; i++) {
        CHECK(srv_get(port, "/hello.txt", ans, sizeof ans) > 0);
        if (!body_is(ans, body)) {
            fprintf(stderr, "answer %d: %.200s\n", i, ans);
            show_log();
        }
        CHECK(body_is(ans, body));
    }
    if (wrk) {
        char url[96], out[8192];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/hello.txt", port);
        int st = srv_wrk(wrk, "50", url, out, sizeof out);
        srv_wrk_check(out, st);
    }
    CHECK(waitpid(server, NULL, WNOHANG) == 0); /* still up */
    CHECK(srv_get(port, "/hello.txt", ans, sizeof ans) > 0 && body_is(ans, body));
    pid_t kids[16];
    int n = children(server, kids, 16);
    CHECK(n >= 1);
    for (int i = 0; i < n; i++) {
        int k = srv_tasks(kids[i]);
        printf("child %d: %d kernel threads\n", (int)kids[i], k);
        if (pt_dropin()) {
            CHECK(srv_maps_dropin(kids[i]));
            pt_check_few_tasks(k, "an apache child");
        }
    }
    printf("ok\n");
    return 0;
}
