/* testutil.h: helpers shared by the black-box tests: sanitizer detection,
 * re-running the test binary as a child with a given environment and
 * capturing its output, and reading the resident memory of the process.
 * Include after defining _GNU_SOURCE (for cpu_set_t). */
#ifndef WEFT_TEST_TESTUTIL_H
#define WEFT_TEST_TESTUTIL_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "weft.h"

/* ---- sanitizers -------------------------------------------------------- */

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(WEFT_SANITIZE_ADDRESS) || defined(__SANITIZE_ADDRESS__) ||                             \
    __has_feature(address_sanitizer)
#define TEST_ASAN 1
#else
#define TEST_ASAN 0
#endif
#if defined(WEFT_SANITIZE_THREAD) || defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#else
#define TEST_TSAN 0
#endif
#define TEST_SANITIZED (TEST_ASAN || TEST_TSAN)

/* ---- environment ------------------------------------------------------- */

/* weft_init with the defaults (and environment) but for the worker count
 * and spawn policy. */
/* Recursion that only a stack overflow ends: frames of 512 bytes that
 * write only their two ends (so a canary below may survive it, and only the
 * fault tells). The limit is volatile so that the compiler cannot prove the
 * recursion endless. */
static long __attribute__((noinline, unused)) test_runaway(long n)
{
    static volatile long limit = 1L << 60; /* never reached */
    volatile char buf[512];
    buf[0] = (char)n;
    buf[511] = (char)n;
    if (n >= limit)
        return n;
    return test_runaway(n + 1) + buf[0] + buf[511];
}

/* policy TEST_POLICY_ENV: the environment's (weft_config_default). */
#define TEST_POLICY_ENV (-1)

static inline void test_init(int workers, int policy)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    if (policy != TEST_POLICY_ENV)
        cfg.spawn_policy = policy;
    CHECK_EQ(weft_init(&cfg), 0);
}

/* weft_init with the defaults (and environment) but for the worker count
 * and the preemption quantum (quantum_us: < 0 off, 0 the default). */
static inline void test_init_quantum(int workers, long quantum_us)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    cfg.quantum_us = quantum_us;
    CHECK_EQ(weft_init(&cfg), 0);
}

/* Whether the runtime can preempt: ThreadSanitizer builds stay cooperative. */
static inline int test_preemption_possible(void)
{
    return !TEST_TSAN;
}

/* Removes every variable weft reads, so a test starts from the defaults
 * whatever the environment ctest was started in. */
static inline void test_clear_env(void)
{
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_STACK_SIZE");
    unsetenv("WEFT_SPAWN_POLICY");
    unsetenv("WEFT_DUMP_SIGNAL");
    unsetenv("WEFT_TRACE");
}

/* Number of CPUs in the calling thread's affinity mask. */
static inline int test_affinity_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    return CPU_COUNT(&set);
}

/* Spawns fn(arg) at priority prio (the other attributes the defaults). */
static inline weft_thread *test_spawn_prio(int prio, weft_fn fn, void *arg)
{
    weft_attr a = WEFT_ATTR_INIT;
    a.priority = prio;
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, fn, arg, &a), 0);
    return t;
}

/* The size of the calling kernel thread's stack (pthread_getattr_np). */
static inline size_t test_own_stack_size(void)
{
    pthread_attr_t pa;
    void *lo;
    size_t size;
    CHECK_EQ(pthread_getattr_np(pthread_self(), &pa), 0);
    CHECK_EQ(pthread_attr_getstack(&pa, &lo, &size), 0);
    pthread_attr_destroy(&pa);
    return size;
}

/* A thread body that yields until the atomic_int flag (its argument) is
 * set: it keeps its worker with a ready thread. Returns flag. */
static __attribute__((unused)) void *test_yield_until_set(void *flag)
{
    while (!atomic_load((atomic_int *)flag))
        weft_yield();
    return flag;
}

/* ---- plain threads ----------------------------------------------------- */

/* pthread_join for a caller that may be a user thread: the initial thread
 * is pinned to worker 0, so blocking it in pthread_join would take that
 * worker away from the threads the joined pthread may be waiting for. */
static inline int test_pthread_join(pthread_t pt, void **res)
{
    int rc;
    while ((rc = pthread_tryjoin_np(pt, res)) == EBUSY)
        weft_yield();
    return rc;
}

/* ---- child processes --------------------------------------------------- */

typedef struct test_child {
    int status;      /* as from waitpid */
    char out[16384]; /* stdout, NUL-terminated (truncated if longer) */
    char err[16384]; /* stderr, NUL-terminated (truncated if longer) */
    size_t out_len, err_len;
} test_child;

static inline void test_child_drain(int fd, char *buf, size_t cap, size_t *len, int *open_)
{
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        *open_ = 0;
        return;
    }
    size_t room = cap - 1 - *len;
    size_t take = (size_t)n < room ? (size_t)n : room;
    memcpy(buf + *len, tmp, take);
    *len += take;
    buf[*len] = '\0';
}

/* Runs this test binary again as "/proc/self/exe mode [arg]" in a child
 * process. env is a NULL-terminated list of "NAME=VALUE" (set) or "NAME"
 * (unset) applied after test_clear_env(); cpus, if not NULL, is the child's
 * affinity mask. Waits for the child and captures stdout and stderr. */
static inline void test_run_self(test_child *r, const char *mode, const char *arg,
                                 const char *const *env, const cpu_set_t *cpus)
{
    int po[2], pe[2];
    memset(r, 0, sizeof *r);
    fflush(stdout);
    fflush(stderr);
    CHECK(pipe(po) == 0);
    CHECK(pipe(pe) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        test_clear_env();
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq) {
                char name[128];
                size_t n = (size_t)(eq - env[i]);
                if (n >= sizeof name)
                    _exit(126);
                memcpy(name, env[i], n);
                name[n] = '\0';
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        if (cpus && sched_setaffinity(0, sizeof *cpus, cpus) != 0)
            _exit(126);
        execl("/proc/self/exe", "/proc/self/exe", mode, arg, (char *)NULL);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    int open_o = 1, open_e = 1;
    while (open_o || open_e) {
        struct pollfd p[2] = { { open_o ? po[0] : -1, POLLIN, 0 },
                               { open_e ? pe[0] : -1, POLLIN, 0 } };
        if (poll(p, 2, -1) < 0) {
            CHECK(errno == EINTR);
            continue;
        }
        if (open_o && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            test_child_drain(po[0], r->out, sizeof r->out, &r->out_len, &open_o);
        if (open_e && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            test_child_drain(pe[0], r->err, sizeof r->err, &r->err_len, &open_e);
    }
    close(po[0]);
    close(pe[0]);
    while (waitpid(pid, &r->status, 0) < 0)
        CHECK(errno == EINTR);
}

/* Number of '\n'-terminated lines in s (plus one for an unterminated tail). */
static inline int test_count_lines(const char *s)
{
    int n = 0;
    const char *p = s;
    for (; *p; p++)
        if (*p == '\n')
            n++;
    if (p != s && p[-1] != '\n')
        n++;
    return n;
}

/* Prints a child's outcome, for failure diagnostics. */
static inline void test_child_dump(const char *what, const test_child *r)
{
    fprintf(stderr, "--- child %s: ", what);
    if (WIFEXITED(r->status))
        fprintf(stderr, "exit %d\n", WEXITSTATUS(r->status));
    else if (WIFSIGNALED(r->status))
        fprintf(stderr, "signal %d\n", WTERMSIG(r->status));
    else
        fprintf(stderr, "status 0x%x\n", r->status);
    fprintf(stderr, "--- stdout:\n%s--- stderr:\n%s---\n", r->out, r->err);
}

/* A check of a child's outcome r: where cond is false, prints the child's
 * status and output (test_child_dump, as `what`), then fails as
 * CHECK(!why) does (why: a string literal that says what was expected). */
#define CHECK_CHILD(cond, what, r, why)                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test_child_dump(what, r);                                                              \
            CHECK(!why);                                                                           \
        }                                                                                          \
    } while (0)

/* test_run_self(mode) with env and no argument or mask; checks that the
 * child exited 0 (else prints its status and output and fails). */
static inline void test_run_self_ok(test_child *r, const char *mode, const char *const *env)
{
    test_run_self(r, mode, NULL, env, NULL);
    CHECK_CHILD(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, mode, r, "exit 0");
}

/* The overflow report of a kernel thread's stack: the child r (run as
 * mode) printed "id=N size=S" on stdout, died of SIGABRT, and wrote one
 * line on stderr with "overflow", name (the thread's name, quoted),
 * "thread N " and "stack size S bytes". Else prints what it got and fails. */
static inline void test_expect_overflow_report(const test_child *r, const char *mode,
                                               const char *name)
{
    unsigned long long id = 0;
    size_t size = 0;
    char want_id[32], want_size[48];
    int got = sscanf(r->out, "id=%llu size=%zu", &id, &size) == 2;
    int ok = got && WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT;
    snprintf(want_id, sizeof want_id, "thread %llu ", id);
    snprintf(want_size, sizeof want_size, "stack size %zu bytes", size);
    ok = ok && test_count_lines(r->err) == 1 && strstr(r->err, "overflow") &&
         strstr(r->err, name) && strstr(r->err, want_id) && strstr(r->err, want_size);
    if (!ok) {
        test_child_dump(mode, r);
        fprintf(stderr, "expected SIGABRT and one line with \"overflow\", \"%s\", \"%s\", \"%s\"\n",
                name, want_id, want_size);
        CHECK(!"bad stack overflow report");
    }
}

/* test_run_self(mode) with no argument, environment or mask, into a
 * test_child the caller frees. */
static inline test_child *test_run_mode(const char *mode)
{
    test_child *r = malloc(sizeof *r);
    CHECK(r != NULL);
    test_run_self(r, mode, NULL, NULL, NULL);
    return r;
}

/* The start of a test that runs itself again (test_run_self): with a mode
 * argument the process is that child and exits with child(mode); without,
 * it is the parent and starts from the defaults (test_clear_env). */
static inline void test_main_or_child(int argc, char **argv, int (*child)(const char *mode))
{
    if (argc >= 2)
        exit(child(argv[1]));
    test_clear_env();
}

/* ---- memory ------------------------------------------------------------ */

/* Resident set size of the process in bytes (from /proc/self/statm). */
static inline long long test_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long size = 0, resident = 0;
    CHECK(f != NULL);
    CHECK(fscanf(f, "%lld %lld", &size, &resident) == 2);
    fclose(f);
    return resident * (long long)sysconf(_SC_PAGESIZE);
}

/* ---- stack use ------------------------------------------------------------ */

/* Touches about `bytes` of stack through volatile arrays in nested frames. */
static __attribute__((noinline, unused)) int test_use_stack(size_t bytes)
{
    volatile char buf[8192];
    memset((char *)buf, (int)(bytes & 0x7f), sizeof buf);
    if (bytes <= sizeof buf)
        return buf[100];
    return test_use_stack(bytes - sizeof buf) + buf[sizeof buf - 1];
}

/* A thread body for test_use_stack: arg is the byte count. */
static __attribute__((unused)) void *test_deep(void *arg)
{
    return (void *)(intptr_t)test_use_stack((size_t)(uintptr_t)arg);
}

/* ---- configurations ------------------------------------------------------ */

/* The run of a stress test over configurations, bounded by alarm(120) and
 * from the default environment: config(workers, policy, seed) with 2 and
 * 3 workers under each spawn policy, the seed varied per configuration. */
static inline void test_run_configs(void (*config)(int workers, int policy, uint64_t seed),
                                    uint64_t seed)
{
    alarm(120);
    test_clear_env();
    for (int workers = 2; workers <= 3; workers++)
        for (int policy = 0; policy < 2; policy++)
            config(workers, policy ? WEFT_HELP_FIRST : WEFT_WORK_FIRST,
                   seed + (uint64_t)workers * 7 + (uint64_t)policy);
}

/* ---- randomness -------------------------------------------------------- */

static inline uint64_t test_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
