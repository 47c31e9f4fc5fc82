/* Tests that a user-thread stack overflow ends the process (in a child
 * process) with one line on stderr naming the thread's id and name and its
 * stack size, and that an unrelated SIGSEGV in a user thread still kills the
 * process with SIGSEGV as usual. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

/* ---- child side -------------------------------------------------------- */

static atomic_int stop;

static void *overflow(void *arg)
{
    (void)arg;
    printf("id=%llu\n", (unsigned long long)weft_thread_id(weft_self()));
    fflush(stdout);
    return (void *)test_runaway(0);
}

static void *segv(void *arg)
{
    (void)arg;
    printf("id=%llu\n", (unsigned long long)weft_thread_id(weft_self()));
    fflush(stdout);
    *(volatile int *)(uintptr_t)arg = 1; /* arg is NULL */
    return NULL;
}

static void recurse_in_place(void *arg)
{
    *(long *)arg = test_runaway(0);
}

/* The overflow happens inside weft_blocking, on the caller's own stack,
 * while its worker is handed to another kernel thread. */
static void *overflow_in_blocking(void *arg)
{
    printf("id=%llu\n", (unsigned long long)weft_thread_id(weft_self()));
    fflush(stdout);
    long r = 0;
    weft_blocking(recurse_in_place, &r);
    return arg;
}

static void *spawn_overflow(void *arg)
{
    weft_attr a = WEFT_ATTR_INIT;
    a.name = "cfg-default-size";
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, overflow, NULL, &a), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    return arg;
}

/* Runs fn in a thread with a 64 KiB stack and the given name, and joins
 * it (an overflow ends the process first). */
static void dive(void *(*fn)(void *), const char *name)
{
    weft_attr a = WEFT_ATTR_INIT;
    a.stack_size = 65536;
    a.name = name;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, fn, NULL, &a), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
}

static int child(const char *mode)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2;
    weft_thread *t;
    if (strcmp(mode, "attr") == 0) {
        /* Explicit stack size and name. */
        CHECK_EQ(weft_init(&cfg), 0);
        dive(overflow, "deep-diver");
    } else if (strcmp(mode, "config") == 0) {
        /* The configured default size, help-first, spawned from another
         * thread, with other threads around. */
        cfg.stack_size = 131072;
        cfg.spawn_policy = WEFT_HELP_FIRST;
        CHECK_EQ(weft_init(&cfg), 0);
        weft_thread *others[8];
        for (int i = 0; i < 8; i++)
            CHECK_EQ(weft_spawn(&others[i], test_yield_until_set, &stop, NULL), 0);
        CHECK_EQ(weft_spawn(&t, spawn_overflow, NULL, NULL), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
        atomic_store(&stop, 1);
        for (int i = 0; i < 8; i++)
            CHECK_EQ(weft_join(others[i], NULL), 0);
    } else if (strcmp(mode, "blocking") == 0) {
        CHECK_EQ(weft_init(&cfg), 0);
        dive(overflow_in_blocking, "blocked-diver");
    } else if (strcmp(mode, "segv") == 0) {
        CHECK_EQ(weft_init(&cfg), 0);
        weft_attr a = WEFT_ATTR_INIT;
        a.name = "null-writer";
        CHECK_EQ(weft_spawn(&t, segv, NULL, &a), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
    } else {
        return 2;
    }
    weft_finalize();
    return 0; /* not reached: the thread above kills the process */
}

/* ---- parent side ------------------------------------------------------- */

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

/* The line of stderr that mentions the overflow (NUL-terminated copy). */
static int find_line(const char *err, const char *word, char *line, size_t cap)
{
    const char *p = err;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len >= cap)
            len = cap - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        if (contains_ci(line, word))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static int has_number(const char *s, unsigned long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%llu", v);
    size_t n = strlen(num);
    for (const char *p = strstr(s, num); p; p = strstr(p + 1, num)) {
        int left_ok = p == s || p[-1] < '0' || p[-1] > '9';
        int right_ok = p[n] < '0' || p[n] > '9';
        if (left_ok && right_ok)
            return 1;
    }
    return 0;
}

static void check_overflow(const char *mode, const char *name, unsigned long long size,
                           const char *size_alt)
{
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    test_run_self(r, mode, NULL, NULL, NULL);
    unsigned long long id = 0;
    char line[1024];
    int ok = 1;
    /* Abnormal end: killed by a signal (SIGABRT expected), or under
     * sanitizers possibly a non-zero exit from their own reporting. */
    if (!(WIFSIGNALED(r->status) ||
          (TEST_SANITIZED && WIFEXITED(r->status) && WEXITSTATUS(r->status) != 0)))
        ok = 0;
    if (ok && sscanf(r->out, "id=%llu", &id) != 1)
        ok = 0;
    if (ok && !find_line(r->err, "overflow", line, sizeof line))
        ok = 0;
    if (ok && (!strstr(line, name) || !has_number(line, id) ||
               !(has_number(line, size) || strstr(line, size_alt))))
        ok = 0;
    /* Exactly one line, unless a sanitizer adds its own report. */
    if (ok && !TEST_SANITIZED && test_count_lines(r->err) != 1)
        ok = 0;
    if (!ok) {
        test_child_dump(mode, r);
        fprintf(stderr, "expected one line with \"overflow\", id %llu, name \"%s\", size %llu\n",
                id, name, size);
        CHECK(!"bad stack overflow report");
    }
    if (!TEST_SANITIZED && WTERMSIG(r->status) != SIGABRT)
        fprintf(stderr, "note: overflow ended the process with signal %d\n", WTERMSIG(r->status));
    printf("%s: %s", mode, r->err);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc >= 2)
        return child(argv[1]);
    test_clear_env();

    check_overflow("attr", "deep-diver", 65536, "64 KiB");
    check_overflow("config", "cfg-default-size", 131072, "128 KiB");
    check_overflow("blocking", "blocked-diver", 65536, "64 KiB");

    /* An ordinary NULL write is not an overflow: SIGSEGV as usual. */
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    test_run_self(r, "segv", NULL, NULL, NULL);
    int ok;
    if (TEST_SANITIZED)
        ok = (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGSEGV) ||
             (WIFEXITED(r->status) && WEXITSTATUS(r->status) != 0);
    else
        ok = WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGSEGV;
    if (ok && contains_ci(r->err, "stack overflow"))
        ok = 0;
    if (!ok) {
        test_child_dump("segv", r);
        CHECK(!"a NULL write must end the process with SIGSEGV, not an overflow report");
    }
    free(r);
    return 0;
}
