/* civetweb_wrk: Debian's civetweb (a thread per connection, num_threads
 * 1000, tcp_nodelay 1) serves a small static file on 127.0.0.1 while wrk
 * loads it for 2 s at 100 connections; every answer is a 200 and a plain
 * GET before and after returns the file. The server runs as this test
 * runs: natively, or under the drop-in (LD_PRELOAD is inherited by it,
 * not by wrk). Under the drop-in it uses at most 2 x CPUs + 16 kernel
 * threads. Skipped (77) when civetweb or wrk is not installed. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"

#define BINS "/usr/bin:/usr/local/bin:/usr/sbin"

static pid_t server;
static void stop_server(void)
{
    srv_stop(&server, 0, 50);
}

int main(void)
{
    const char *civetweb = srv_find(BINS, "civetweb"), *wrk = srv_find(BINS, "wrk");
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
    int port = srv_free_port();
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
    int up = srv_wait_up(&server, 200, port, "/hello.txt", ans, sizeof ans);
    CHECK(server > 0);
    CHECK(up);
    CHECK(strncmp(ans, "HTTP/1.1 200", 12) == 0 || strncmp(ans, "HTTP/1.0 200", 12) == 0);
    CHECK(strstr(ans, "\r\n\r\n") && strcmp(strstr(ans, "\r\n\r\n") + 4, body) == 0);

    /* wrk, without the drop-in: 2 s at 100 connections */
    char url[96], out[8192];
    snprintf(url, sizeof url, "http://%s/hello.txt", ports);
    int st = srv_wrk(wrk, "100", url, out, sizeof out);
    int k = srv_tasks(server);
    srv_wrk_check(out, st);
    CHECK(waitpid(server, NULL, WNOHANG) == 0); /* still up */
    CHECK(srv_get(port, "/hello.txt", ans, sizeof ans) > 0);
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
