/* Tests the deadlock report of share/weft/weft-gdb.py's "info weft-threads"
 * in real gdb (batch mode), live and in a core file written by gcore: a
 * parked thread's line ends with the thread it waits for (", owner N" for
 * a mutex's holder, ", joins N" for weft_join), and each cycle is listed as
 * "deadlock: A -> B -> A". The target holds a mutex cycle (a, b), a join
 * cycle (c, d) and a waiter on a mutex the running initial thread holds (e:
 * named, on no cycle). gdb kills the target at its breakpoint, so the stuck
 * threads need no release. Skipped (77) without gdb, without ptrace, or in
 * sanitizer builds (the extension is for the Release build). */
#define _GNU_SOURCE
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "dump_test.h"
#include "gdb_test.h"
#include "testutil.h"

static weft_mutex ma = WEFT_MUTEX_INIT, mb = WEFT_MUTEX_INIT, mm = WEFT_MUTEX_INIT;
static weft_barrier bar;
static weft_sem go;
static weft_thread *ta, *tb, *tc, *td, *te;
/* a: ma then mb, b: mb then ma; c joins d, d joins c */
static dump_locks l_ab = { &ma, &mb, &bar }, l_ba = { &mb, &ma, &bar };
static dump_join j_c = { &go, &tc }, j_d = { &go, &td };

static void *e_fn(void *x)
{
    CHECK_EQ(weft_mutex_lock(&mm), 0);
    return x;
}

/* gdb's breakpoint */
__attribute__((noinline)) void observe_deadlock_gdb_stop(void);
__attribute__((noinline)) void observe_deadlock_gdb_stop(void)
{
    __asm__ volatile("" ::: "memory");
}

static unsigned long long id(weft_thread *t)
{
    return (unsigned long long)weft_thread_id(t);
}

static void spawn(weft_thread **t, weft_fn fn, void *arg, const char *name)
{
    weft_attr at = WEFT_ATTR_INIT;
    at.name = name;
    CHECK_EQ(weft_spawn(t, fn, arg, &at), 0);
    weft_thread_id(*t);
}

/* Sets up the waits, writes what gdb must show to path, stops. */
static int target(const char *path)
{
    test_init(1, WEFT_WORK_FIRST);
    CHECK_EQ(weft_barrier_init(&bar, 2), 0);
    CHECK_EQ(weft_sem_init(&go, 0), 0);
    CHECK_EQ(weft_mutex_lock(&mm), 0);
    spawn(&ta, dump_lock_meet_lock, &l_ab, "a");
    spawn(&tb, dump_lock_meet_lock, &l_ba, "b");
    spawn(&tc, dump_wait_join, &j_d, "c");
    spawn(&td, dump_wait_join, &j_c, "d");
    spawn(&te, e_fn, NULL, "e");
    CHECK_EQ(weft_sem_post(&go), 0);
    CHECK_EQ(weft_sem_post(&go), 0);
    weft_thread *all[] = { ta, tb, tc, td, te };
    for (int i = 0; i < 5; i++) { /* one worker: they run when we yield */
        weft_thread_info info;
        for (int k = 0; k < 10000; k++) {
            CHECK_EQ(weft_thread_info_get(all[i], &info), 0);
            if (info.state == WEFT_STATE_PARKED)
                break;
            weft_yield();
        }
        CHECK_EQ(info.state, WEFT_STATE_PARKED);
    }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    /* "<thread id> <its line's tail>", then the deadlock lines */
    fprintf(f, "%llu , owner %llu\n", id(ta), id(tb));
    fprintf(f, "%llu , owner %llu\n", id(tb), id(ta));
    fprintf(f, "%llu , joins %llu\n", id(tc), id(td));
    fprintf(f, "%llu , joins %llu\n", id(td), id(tc));
    fprintf(f, "%llu , owner %llu\n", id(te), id(weft_self()));
    unsigned long long x = id(ta) < id(tb) ? id(ta) : id(tb), y = x == id(ta) ? id(tb) : id(ta);
    fprintf(f, "deadlock: %llu -> %llu -> %llu\n", x, y, x);
    x = id(tc) < id(td) ? id(tc) : id(td);
    y = x == id(tc) ? id(td) : id(tc);
    fprintf(f, "deadlock: %llu -> %llu -> %llu\n", x, y, x);
    CHECK_EQ(fclose(f), 0);
    observe_deadlock_gdb_stop();
    _exit(0); /* gdb kills us first; the stuck threads stay stuck */
}

/* The line of out that starts with start (NULL if none), as a copy. */
static char *line_starting(const char *out, const char *start)
{
    size_t n = strlen(start);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, start, n) == 0)
            return strndup(p, strcspn(p, "\n"));
    return NULL;
}

/* Every expectation of the target holds in gdb's output. */
static void check_output(const char *out, const char *want)
{
    int deadlocks = 0, lines = 0;
    for (const char *p = out; (p = strstr(p, "\ndeadlock: ")) != NULL; p++)
        deadlocks++;
    char *copy = strdup(want), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        int ok;
        if (strncmp(l, "deadlock: ", 10) == 0) {
            char *got = line_starting(out, l);
            ok = got && strcmp(got, l) == 0;
            free(got);
            lines++;
        } else {
            char start[64], *tail = strchr(l, ' ') + 1;
            snprintf(start, sizeof start, "thread %.*s ", (int)(tail - 1 - l), l);
            char *got = line_starting(out, start);
            ok = got && strlen(got) >= strlen(tail) &&
                 strcmp(got + strlen(got) - strlen(tail), tail) == 0;
            free(got);
        }
        if (!ok) {
            fprintf(stderr, "gdb output lacks \"%s\":\n%s\n", l, out);
            CHECK(0);
        }
    }
    free(copy);
    if (deadlocks != lines) {
        fprintf(stderr, "%d deadlock lines, want %d:\n%s\n", deadlocks, lines, out);
        CHECK(0);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char *s = calloc(1, 4096);
    CHECK(s != NULL);
    size_t n = fread(s, 1, 4095, f);
    CHECK(n > 0);
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "target") == 0)
        return target(argv[2]);
    /* the script from the tree: $WEFT_GDB_SCRIPT, else found from this file */
    char script[4096];
    const char *env = getenv("WEFT_GDB_SCRIPT");
    if (env) {
        snprintf(script, sizeof script, "%s", env);
    } else {
        char here[4096];
        snprintf(here, sizeof here, "%s", __FILE__);
        snprintf(script, sizeof script, "%s/../../share/weft/weft-gdb.py", dirname(here));
    }
    gdb_need(script);
    char exe[4096];
    gdb_self_exe(exe, sizeof exe);
    char dir[] = "/tmp/weft-dlgdb-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char core[4200], want[4200], ex[4200], args[8400];
    snprintf(core, sizeof core, "%s/core", dir);
    snprintf(want, sizeof want, "%s/want", dir);
    snprintf(ex, sizeof ex, "-ex 'source %s' -ex 'info weft-threads'", script);
    snprintf(args, sizeof args, "%s target %s", exe, want);

    char *out = gdb_live("observe_deadlock_gdb_stop", ex, core, args);
    gdb_skip_without_ptrace(out);
    if (access(want, R_OK) != 0) {
        fprintf(stderr, "the target did not reach its breakpoint:\n%s\n", out);
        CHECK(0);
    }
    char *w = slurp(want);
    check_output(out, w);
    free(out);

    out = gdb_on_core(exe, core, ex);
    if (out) {
        check_output(out, w);
        free(out);
        unlink(core);
    }
    free(w);
    unlink(want);
    rmdir(dir);
    return 0;
}
