/* Tests the three stack-protection modes: guard regions (or mprotect guard
 * pages) catch an overflow with the one-line report, also a frame larger
 * than a page; canary slots detect an overwritten canary when the thread
 * is switched out (yield, spawn, exit) and report a runaway recursion that
 * faults; and the mode falls back from mprotect to canary when the mapping
 * budget runs out, with a one-time notice. Each case runs in a child process
 * (re-executing this program). */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "stack/stack.h"
#include "testutil.h"

static volatile char sink;

/* Unbounded on purpose: it must hit the guard. */
#pragma GCC diagnostic ignored "-Winfinite-recursion"

static void *recurse(void *arg)
{
    char buf[512];
    memset(buf, (int)(intptr_t)arg, sizeof buf);
    sink = buf[(intptr_t)arg % 512];
    recurse((void *)((intptr_t)arg + 1));
    sink = buf[0];
    return NULL;
}

static void *smash_canary(void *arg)
{
    (void)arg;
    weft_thread *self = weft_self();
    memset(self->stack_lo, 0, 8); /* what an overflow would do */
    return NULL;
}

static void *nop(void *arg)
{
    return arg;
}

/* A frame larger than a one-page guard, written from its lowest address up
 * (as a function filling a local array does), without the probes of
 * -fstack-clash-protection: only a guard larger than the overrun catches
 * the first store. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-stack-clash-protection")))
#endif
static __attribute__((noinline)) void *
big_frame(void *arg)
{
    volatile char buf[96 << 10];
    buf[0] = 1;
    buf[sizeof buf - 1] = 2;
    return (void *)(intptr_t)(buf[0] + buf[sizeof buf - 1] + (intptr_t)arg);
}

static void *deep(void *arg)
{
    return (void *)test_runaway((intptr_t)arg);
}

static weft_sem parked = { { 0 } };

static void *park_here(void *arg)
{
    weft_sem_wait(&parked);
    return arg;
}

/* Overwrites its canary, switches out in the way arg names, then puts the
 * canary back: only a check at the switch can tell. */
static void *smash_and_switch(void *arg)
{
    weft_thread *self = weft_self();
    uint64_t saved;
    memcpy(&saved, self->stack_lo, sizeof saved);
    memset(self->stack_lo, 0, sizeof saved);
    if (!strcmp(arg, "yield")) {
        weft_yield();
    } else {
        weft_thread *c;
        CHECK_EQ(weft_spawn(&c, nop, NULL, NULL), 0);
        CHECK_EQ(weft_join(c, NULL), 0);
    }
    memcpy(self->stack_lo, &saved, sizeof saved);
    return NULL;
}

/* Prints the stack stats as the parent parses them. */
static void print_stack_stats(void)
{
    struct weft__stack_stats st;
    weft__stack_stats(&st);
    printf("slots %zu madvise %zu mprotect %zu canary %zu\n", st.slots, st.guard_madvise,
           st.guard_mprotect, st.guard_canary);
}

/* Spawns the victim fn (attributes a) among neighbours parked in the slots
 * around its own, and joins it. */
static void run_among_neighbours(void *(*fn)(void *), const weft_attr *a)
{
    enum { NEIGHBOURS = 8 };
    weft_thread *n[NEIGHBOURS], *t = NULL;
    CHECK_EQ(weft_sem_init(&parked, 0), 0);
    for (int i = 0; i < NEIGHBOURS; i++) {
        CHECK_EQ(weft_spawn(&n[i], park_here, NULL, NULL), 0);
        if (i == NEIGHBOURS / 2)
            CHECK_EQ(weft_spawn(&t, fn, NULL, a), 0);
    }
    weft_join(t, NULL);
}

static int child(const char *mode)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 1;
    CHECK_EQ(weft_init(&cfg), 0);
    weft_attr a = WEFT_ATTR_INIT;
    a.name = "victim";
    weft_thread *t;
    if (!strcmp(mode, "overflow")) {
        CHECK_EQ(weft_spawn(&t, recurse, NULL, &a), 0);
        weft_join(t, NULL);
        return 3; /* not reached */
    }
    if (!strcmp(mode, "canary")) {
        CHECK_EQ(weft_spawn(&t, smash_canary, NULL, &a), 0);
        weft_join(t, NULL);
        return 3; /* not reached: the free of t checks the canary */
    }
    if (!strcmp(mode, "bigframe")) {
        run_among_neighbours(big_frame, &a);
        return 3; /* not reached: the guard stops the first store */
    }
    if (!strcmp(mode, "canary-deep")) {
        /* Unbounded recursion with no guard page: it runs on through the
         * slots below until something stops it. */
        run_among_neighbours(deep, &a);
        return 3; /* not reached */
    }
    if (!strcmp(mode, "canary-yield") || !strcmp(mode, "canary-spawn")) {
        weft_thread *other;
        CHECK_EQ(weft_spawn(&other, nop, NULL, NULL), 0); /* something to switch to */
        CHECK_EQ(weft_spawn(&t, smash_and_switch, (void *)(strchr(mode, '-') + 1), &a), 0);
        weft_join(t, NULL);
        weft_join(other, NULL);
        return 3; /* not reached: the switch checks the canary */
    }
    if (!strcmp(mode, "budget")) {
        /* More live stacks than vm.max_map_count allows guard pages for:
         * help-first on one worker queues them all before any runs. */
        enum { M = 40000 };
        weft_thread **ts = calloc(M, sizeof *ts);
        CHECK(ts);
        cfg.spawn_policy = WEFT_HELP_FIRST;
        CHECK_EQ(weft_finalize(), 0);
        CHECK_EQ(weft_init(&cfg), 0);
        for (int i = 0; i < M; i++)
            CHECK_EQ(weft_spawn(&ts[i], nop, NULL, NULL), 0);
        print_stack_stats();
        for (int i = 0; i < M; i++)
            CHECK_EQ(weft_join(ts[i], NULL), 0);
        CHECK_EQ(weft_finalize(), 0);
        free(ts);
        return 0;
    }
    if (!strcmp(mode, "count")) {
        /* many live threads at once: all slabs carved */
        enum { N = 3000 };
        static weft_thread *ts[N];
        weft_attr h = WEFT_ATTR_INIT;
        for (int i = 0; i < N; i++)
            CHECK_EQ(weft_spawn(&ts[i], nop, NULL, &h), 0);
        print_stack_stats();
        for (int i = 0; i < N; i++)
            CHECK_EQ(weft_join(ts[i], NULL), 0);
        CHECK_EQ(weft_finalize(), 0);
        return 0;
    }
    return 4;
}

/* Runs this program as a child with WEFT_STACK_GUARD=guard and mode; returns
 * the wait status and the output. */
static int run_child(const char *self, const char *guard, const char *mode, char *out, size_t outsz)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        setenv("WEFT_STACK_GUARD", guard, 1);
        execl(self, self, mode, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < outsz && (r = read(p[0], out + n, outsz - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = 0;
    close(p[0]);
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    return st;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return child(argv[1]);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("sanitizers intercept SIGSEGV and abort themselves");
#endif
    char out[4096];
    const char *self = "/proc/self/exe";
    char path[4096];
    ssize_t len = readlink(self, path, sizeof path - 1);
    CHECK(len > 0);
    path[len] = 0;

    const char *guards[] = { "auto", "mprotect" };
    for (int i = 0; i < 2; i++) {
        int st = run_child(path, guards[i], "overflow", out, sizeof out);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
        CHECK(strstr(out, "stack overflow in user thread"));
        CHECK(strstr(out, "\"victim\""));
        CHECK(strstr(out, "hit the guard page"));
        CHECK(strstr(out, "stack size 65536 bytes"));
    }
    int st;
    /* A frame 32 KiB larger than the stack: caught by the guard's span. */
    for (int i = 0; i < 2; i++) {
        st = run_child(path, guards[i], "bigframe", out, sizeof out);
        if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) || !strstr(out, "hit the guard page") ||
            !strstr(out, "\"victim\"")) {
            fprintf(stderr, "bigframe (%s): status %#x, output:\n%s\n", guards[i], st, out);
            CHECK(!"a frame past a one-page guard must hit the guard");
        }
    }

    const char *canary_modes[] = { "canary", "canary-yield", "canary-spawn", "canary-deep" };
    for (int i = 0; i < 4; i++) {
        st = run_child(path, "canary", canary_modes[i], out, sizeof out);
        const char *what = i < 3 ? "canary overwritten" : "stack overflow in user thread";
        if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) || !strstr(out, what) ||
            !strstr(out, "\"victim\"") || !strstr(out, "stack size 65536 bytes") ||
            strchr(out, '\n') != out + strlen(out) - 1) {
            fprintf(stderr, "%s: status %#x, output:\n%s\n", canary_modes[i], st, out);
            CHECK(
                !"a canary-checked overflow must be reported in one line, at a switch or a fault");
        }
    }

    /* modes are what was asked for */
    st = run_child(path, "canary", "count", out, sizeof out);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(strstr(out, "mprotect 0 canary"));
    CHECK(strstr(out, "madvise 0 "));
    st = run_child(path, "mprotect", "count", out, sizeof out);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(strstr(out, "madvise 0 ") && strstr(out, "canary 0"));

    /* past the mapping budget: canary slots, one notice, everything runs */
    long maxmap = check_read_long("/proc/sys/vm/max_map_count", 0);
    if (maxmap > 0 && maxmap <= 65530) {
        st = run_child(path, "mprotect", "budget", out, sizeof out);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        size_t slots, mad, mpr, can;
        const char *line = strstr(out, "slots ");
        CHECK(line && sscanf(line, "slots %zu madvise %zu mprotect %zu canary %zu", &slots, &mad,
                             &mpr, &can) == 4);
        CHECK(mpr > 0 && can > 0 && mpr + can == slots);
        CHECK(2 * mpr < (size_t)maxmap);
        const char *n1 = strstr(out, "vm.max_map_count");
        CHECK(n1 && !strstr(n1 + 1, "guard pages would exceed")); /* one notice */
    }
    printf("stack_guard: ok\n");
    return 0;
}
