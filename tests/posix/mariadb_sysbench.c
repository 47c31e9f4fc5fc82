/* mariadb_sysbench: Debian's MariaDB 10.11 (one-thread-per-connection,
 * InnoDB with its io_uring completion thread and its raw futexes) answers
 * sysbench oltp_point_select at 64 connections for 3 s with zero errors.
 * A private instance: mariadb-install-db into a temporary datadir, mariadbd
 * with its socket there and TCP on 127.0.0.1 and a free port only,
 * --skip-grant-tables. mariadbd runs as this test runs: natively, or under
 * the drop-in (LD_PRELOAD is kept for it only; the installer and sysbench
 * run without). Under the drop-in the server must have it loaded and use
 * at most 2 x CPUs + 16 kernel threads during the load. The server and the
 * datadir are removed on every exit (atexit; the alarm bound exits through
 * it too). Skipped (77) when mariadbd, mariadb-install-db or sysbench is
 * not installed. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"

#define BINS "/usr/sbin:/usr/bin:/usr/local/sbin:/usr/local/bin"

static char dir[] = "/tmp/weft_mariadbXXXXXX";
static int have_dir;
static pid_t server;
static char preload[1024];

static void cleanup(void)
{
    srv_stop(&server, 0, 100);
    if (have_dir) {
        srv_rm_tree(dir);
        have_dir = 0;
    }
}

static void show_file(const char *name)
{
    srv_show(dir, name);
}

/* Runs argv without the drop-in, its output into dir/log; its exit status,
 * or -1. While it runs, *peak (if not NULL) gets the most kernel threads
 * the server had. */
static int run(char *const argv[], const char *log, int *peak)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, log);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        unsetenv("LD_PRELOAD");
        /* mariadbd removes every #sql temporary file in its tmpdir when it
         * starts: the installers of this test's native and drop-in runs,
         * at the same time under ctest -j2, removed each other's in /tmp
         * ("Unknown table 'mysql.tmp_proxies_priv'"). A tmpdir of its own. */
        setenv("TMPDIR", dir, 1);
        int fd = creat(p, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(c, &st, WNOHANG) == 0) {
        if (peak && server > 0) {
            int k = srv_tasks(server);
            if (k > *peak)
                *peak = k;
        }
        usleep(100 * 1000);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs sysbench's oltp_point_select on the server at --mysql-port sport,
 * on 2 tables of 2000 rows, with the arguments tail (NULL-ended, at most 6)
 * after the common ones; as run. */
static int run_sysbench(const char *sysbench, char *sport, char *const tail[], const char *log,
                        int *peak)
{
    char *argv[16] = { (char *)sysbench,
                       "oltp_point_select",
                       "--db-driver=mysql",
                       "--mysql-host=127.0.0.1",
                       sport,
                       "--mysql-user=root",
                       "--mysql-db=sbtest",
                       "--tables=2",
                       "--table-size=2000" };
    size_t n = 9;
    for (size_t i = 0; tail[i]; i++)
        argv[n++] = tail[i];
    argv[n] = NULL;
    return run(argv, log, peak);
}

int main(void)
{
    const char *mariadbd = srv_find(BINS, "mariadbd");
    const char *install = srv_find(BINS, "mariadb-install-db");
    const char *sysbench = srv_find(BINS, "sysbench");
    if (!mariadbd || !install || !sysbench) {
        printf("mariadbd, mariadb-install-db or sysbench not installed: skipped\n");
        return 77;
    }
    const char *pre = getenv("LD_PRELOAD");
    snprintf(preload, sizeof preload, "%s", pre ? pre : "");
    CHECK(mkdtemp(dir) != NULL);
    have_dir = 1;
    atexit(cleanup);
    srv_bound("mariadb_sysbench", 100);
    struct passwd *pw = getpwuid(geteuid());
    CHECK(pw != NULL);
    char user[64], datadir[128], sock[128], port_s[16], tmpdir[128];
    snprintf(user, sizeof user, "--user=%s", pw->pw_name);
    snprintf(datadir, sizeof datadir, "--datadir=%s/data", dir);
    snprintf(sock, sizeof sock, "--socket=%s/sock", dir);
    snprintf(tmpdir, sizeof tmpdir, "--tmpdir=%s", dir); /* see run() */

    char *inst[] = { (char *)install,
                     "--no-defaults",
                     user,
                     datadir,
                     "--auth-root-authentication-method=normal",
                     "--skip-test-db",
                     "--innodb-log-file-size=16M",
                     NULL };
    if (run(inst, "install.log", NULL) != 0) {
        show_file("install.log");
        CHECK(!"mariadb-install-db failed");
    }

    /* A free port may be taken by another test before mariadbd binds it:
     * a server that exits at start is tried again on another port. */
    int port = 0, up = 0;
    char pid_file[160], err_log[160];
    snprintf(pid_file, sizeof pid_file, "--pid-file=%s/pid", dir);
    snprintf(err_log, sizeof err_log, "--log-error=%s/err.log", dir);
    for (int tries = 0; tries < 3 && !up; tries++) {
        port = srv_free_port();
        snprintf(port_s, sizeof port_s, "--port=%d", port);
        server = fork();
        CHECK(server >= 0);
        if (server == 0) {
            execl(mariadbd, "mariadbd", "--no-defaults", user, datadir, sock, tmpdir, port_s,
                  "--bind-address=127.0.0.1", "--skip-grant-tables", "--max-connections=200",
                  "--thread-handling=one-thread-per-connection", "--innodb-buffer-pool-size=32M",
                  "--innodb-log-file-size=16M", "--skip-log-bin", pid_file, err_log, (char *)NULL);
            _exit(127);
        }
        up = srv_wait_up(&server, 600, port, NULL, NULL, 0);
        if (server == 0)
            show_file("err.log");
    }
    if (!up)
        show_file("err.log");
    CHECK(up && server > 0);
    if (pt_dropin())
        CHECK(srv_maps_dropin(server));

    char sport[32];
    snprintf(sport, sizeof sport, "--mysql-port=%d", port);
    char *create[] = { (char *)srv_find(BINS, "mariadb"),
                       "--no-defaults",
                       sock,
                       "-uroot",
                       "-e",
                       "CREATE DATABASE sbtest",
                       NULL };
    CHECK(create[0] != NULL);
    CHECK(run(create, "create.log", NULL) == 0);
    char *prep[] = { "prepare", NULL };
    if (run_sysbench(sysbench, sport, prep, "prepare.log", NULL) != 0) {
        show_file("prepare.log");
        CHECK(!"sysbench prepare failed");
    }
    int peak = 0;
    char *load[] = { "--threads=64", "--time=3", "run", NULL };
    int rc = run_sysbench(sysbench, sport, load, "run.log", &peak);
    show_file("run.log");
    CHECK(rc == 0);
    char p[128], text[16384];
    snprintf(p, sizeof p, "%s/run.log", dir);
    FILE *f = fopen(p, "r");
    CHECK(f != NULL);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    CHECK(strstr(text, "FATAL") == NULL);
    const char *e = strstr(text, "ignored errors:");
    CHECK(e != NULL && strtol(e + strlen("ignored errors:"), NULL, 10) == 0);
    const char *t = strstr(text, "transactions:");
    CHECK(t != NULL && strtol(t + strlen("transactions:"), NULL, 10) > 100);
    CHECK(waitpid(server, NULL, WNOHANG) == 0); /* still up */
    printf("server kernel threads during the load (most): %d\n", peak);
    if (pt_dropin())
        pt_check_few_tasks(peak, "mariadbd");
    printf("ok\n");
    return 0;
}
