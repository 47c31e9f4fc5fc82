/* gdb_test.h: helpers shared by the tests that run share/weft/weft-gdb.py
 * in real gdb (batch mode) on this binary: the skips, this binary's path,
 * a command's output, and gdb on the live process and on its core file. Include after testutil.h (which wants
 * _GNU_SOURCE first). */
#ifndef WEFT_TEST_GDB_TEST_H
#define WEFT_TEST_GDB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#define GDB "/usr/bin/gdb"

/* Exits 77 (skipped) without gdb or the script (script: its path, or
 * NULL), or in a sanitizer build (the extension is for the Release build). */
static inline void gdb_need(const char *script)
{
    if (TEST_SANITIZED || !script || access(GDB, X_OK) != 0 || access(script, R_OK) != 0) {
        fprintf(stderr, "skipped: gdb, the script or a Release build is missing\n");
        exit(77);
    }
}

/* This binary's path (from /proc/self/exe), into exe. */
static inline void gdb_self_exe(char *exe, size_t n)
{
    ssize_t k = readlink("/proc/self/exe", exe, n - 1);
    CHECK(k > 0);
    exe[k] = '\0';
}

/* Runs the shell command cmd; returns its output (the caller frees it). */
static inline char *gdb_run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    CHECK(s != NULL);
    size_t k;
    while ((k = fread(s + len, 1, cap - len - 1, p)) > 0) {
        len += k;
        if (len + 1 == cap) {
            cap *= 2;
            s = realloc(s, cap);
            CHECK(s != NULL);
        }
    }
    s[len] = '\0';
    pclose(p);
    return s;
}

/* Exits 77 (skipped) where gdb's output out says ptrace is not permitted. */
static inline void gdb_skip_without_ptrace(const char *out)
{
    if (strstr(out, "ptrace") && strstr(out, "not permitted")) {
        fprintf(stderr, "skipped: no ptrace here\n%s", out);
        exit(77);
    }
}

/* gdb's output where it runs "exe_args" (this binary and its arguments)
 * with one worker to the breakpoint stop, runs the commands ex there,
 * writes the core file core and kills the process. The mprotect guard
 * keeps every slab page readable for gcore. */
static inline char *gdb_live(const char *stop, const char *ex, const char *core,
                             const char *exe_args)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd,
             "WEFT_STACK_GUARD=mprotect WEFT_WORKERS=1 timeout 120 " GDB
             " -nx -batch -ex 'set debuginfod enabled off' -ex 'break %s' "
             "-ex 'run' %s -ex 'gcore %s' -ex 'kill' --args %s 2>&1",
             stop, ex, core, exe_args);
    return gdb_run(cmd);
}

/* gdb's output for the commands ex on the core file core of exe, or NULL
 * (with a note on stderr) where gcore wrote none. */
static inline char *gdb_on_core(const char *exe, const char *core, const char *ex)
{
    if (access(core, R_OK) != 0) {
        fprintf(stderr, "note: gcore wrote no core file; core check skipped\n");
        return NULL;
    }
    char cmd[32768];
    snprintf(cmd, sizeof cmd,
             "timeout 120 " GDB " -nx -batch -ex 'set debuginfod enabled off' %s %s %s 2>&1", exe,
             core, ex);
    return gdb_run(cmd);
}

/* Fails, showing gdb's output out, unless out contains what. */
static inline void gdb_expect(const char *out, const char *what)
{
    if (!strstr(out, what)) {
        fprintf(stderr, "gdb output lacks \"%s\":\n%s\n", what, out);
        CHECK(0);
    }
}

/* The usual session of these tests: gdb runs this binary with the argument
 * "target" to the breakpoint stop and runs there the commands checks_fmt
 * (its one %s: the script, from WEFT_GDB_SCRIPT), then the same commands
 * on the core file gcore wrote there. *live gets the first output, *core
 * the second (NULL where gcore wrote no core file); the caller frees both.
 * Exits 77 (skipped) without gdb, the script, ptrace or a Release build. */
static inline void gdb_session(const char *stop, const char *checks_fmt, char **live, char **core)
{
    const char *script = getenv("WEFT_GDB_SCRIPT");
    gdb_need(script);
    char exe[4096];
    gdb_self_exe(exe, sizeof exe);
    char dir[] = "/tmp/weft-gdb-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char corefile[4200], checks[8192];
    snprintf(corefile, sizeof corefile, "%s/core", dir);
    snprintf(checks, sizeof checks, checks_fmt, script);
    char args[4200 + 8];
    snprintf(args, sizeof args, "%s target", exe);
    *live = gdb_live(stop, checks, corefile, args);
    gdb_skip_without_ptrace(*live);
    *core = gdb_on_core(exe, corefile, checks);
    unlink(corefile);
    rmdir(dir);
}

#endif
