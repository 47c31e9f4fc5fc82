// Tests weft with C++ exceptions and destructors (as weft.h documents):
//  - exceptions thrown and caught inside a user thread work, across
//    switches inside the try block, and inside a weft_blocking callback;
//  - an exception that leaves a weft_blocking callback ends the process
//    with one "weft: " line (SIGABRT), never a SIGSEGV;
//  - an exception that leaves a thread function ends in std::terminate
//    (SIGABRT);
//  - weft_exit unwinds as pthread_exit does: destructors of the frames it
//    leaves run, in user threads (work-first, help-first, 2 workers) and
//    bound threads, and a catch (...) that rethrows lets it through.
// The aborting cases run in child processes with an alarm().
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

#include "check.h"
#include "weft.h"

static const unsigned CHILD_ALARM_S = 10;

// ---- a child process and its outcome ---------------------------------------

struct outcome {
    int status;
    char err[4096];
};

// Runs "self mode" in a child process; captures its stderr.
static outcome run_child(const char *self, const char *mode)
{
    outcome o{};
    int pe[2];
    CHECK(pipe(pe) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(pe[1], 2);
        close(pe[0]);
        close(pe[1]);
        execl(self, self, mode, (char *)nullptr);
        _exit(127);
    }
    close(pe[1]);
    size_t len = 0;
    ssize_t n;
    while ((n = read(pe[0], o.err + len, sizeof o.err - 1 - len)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            len += (size_t)n;
    close(pe[0]);
    while (waitpid(pid, &o.status, 0) < 0)
        CHECK(errno == EINTR);
    return o;
}

static void expect_abort(const char *self, const char *mode, const char *prefix)
{
    outcome o = run_child(self, mode);
    if (!WIFSIGNALED(o.status) || WTERMSIG(o.status) != SIGABRT || !strstr(o.err, prefix)) {
        fprintf(stderr, "--- child %s: status 0x%x\n%s---\n", mode, o.status, o.err);
        CHECK(!"expected an abort with a message");
    }
}

static void expect_exit0(const char *self, const char *mode)
{
    outcome o = run_child(self, mode);
    if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
        fprintf(stderr, "--- child %s: status 0x%x\n%s---\n", mode, o.status, o.err);
        CHECK(!"expected exit 0");
    }
}

static void start(int workers, int policy)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    cfg.spawn_policy = policy;
    CHECK_EQ(weft_init(&cfg), 0);
}

// ---- exceptions ------------------------------------------------------------

static void throw_in_call(void *)
{
    throw std::runtime_error("out of the callback");
}

static void catch_in_call(void *arg)
{
    try {
        throw std::runtime_error("inside");
    } catch (const std::runtime_error &) {
        *static_cast<int *>(arg) = 1;
    }
}

static void *catches(void *)
{
    int caught = 0;
    for (int i = 0; i < 100; i++) {
        try {
            weft_yield();
            throw i;
        } catch (int v) {
            CHECK_EQ(v, i);
            caught++;
        }
    }
    int inside = 0;
    CHECK_EQ(weft_blocking(catch_in_call, &inside), 0);
    CHECK_EQ(inside, 1);
    return reinterpret_cast<void *>(static_cast<intptr_t>(caught));
}

static void *throws_past_blocking(void *)
{
    try {
        weft_blocking(throw_in_call, nullptr);
    } catch (const std::exception &) {
    }
    return nullptr; // not reached: the library stops the process
}

static void *throws_uncaught(void *)
{
    weft_yield();
    throw std::runtime_error("nobody catches this");
}

// ---- weft_exit and destructors -----------------------------------------------

static std::atomic<int> destroyed;

struct counted {
    ~counted() { destroyed++; }
};

static __attribute__((noinline)) void exit_deep(void *result)
{
    counted inner;
    try {
        weft_exit(result);
    } catch (...) {
        destroyed += 100; // seen, then let through
        throw;
    }
}

static void *exits(void *arg)
{
    counted outer;
    weft_yield();
    exit_deep(arg);
    return nullptr;
}

static void exit_destructors(int workers, int policy, int bound)
{
    start(workers, policy);
    weft_attr attr = WEFT_ATTR_INIT;
    attr.bound = bound;
    for (int i = 0; i < 20; i++) {
        destroyed = 0;
        weft_thread *t;
        void *res = nullptr;
        CHECK_EQ(weft_spawn(&t, exits, reinterpret_cast<void *>(0x70 + i), &attr), 0);
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK(res == reinterpret_cast<void *>(0x70 + i));
        CHECK_EQ(destroyed.load(), 102);
    }
    CHECK_EQ(weft_finalize(), 0);
}

// ---- child modes -----------------------------------------------------------------

static int child(const char *mode)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    alarm(CHILD_ALARM_S);
    weft_fn fn;
    if (strcmp(mode, "catches") == 0) {
        for (int workers = 1; workers <= 2; workers++) {
            start(workers, WEFT_WORK_FIRST);
            weft_thread *t[4];
            for (auto &x : t)
                CHECK_EQ(weft_spawn(&x, catches, nullptr, nullptr), 0);
            for (auto &x : t) {
                void *res = nullptr;
                CHECK_EQ(weft_join(x, &res), 0);
                CHECK(res == reinterpret_cast<void *>(100));
            }
            CHECK_EQ(weft_finalize(), 0);
        }
        return 0;
    }
    if (strcmp(mode, "exit") == 0) {
        exit_destructors(1, WEFT_WORK_FIRST, 0);
        exit_destructors(1, WEFT_HELP_FIRST, 0);
        exit_destructors(2, WEFT_WORK_FIRST, 0);
        exit_destructors(2, WEFT_HELP_FIRST, 1);
        return 0;
    }
    if (strcmp(mode, "past-blocking") == 0)
        fn = throws_past_blocking;
    else if (strcmp(mode, "uncaught") == 0)
        fn = throws_uncaught;
    else
        return 2;
    start(1, WEFT_WORK_FIRST);
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, fn, nullptr, nullptr), 0);
    weft_join(t, nullptr);
    weft_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2)
        return child(argv[1]);
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_SPAWN_POLICY");
    expect_exit0(argv[0], "catches");
    expect_exit0(argv[0], "exit");
    expect_abort(argv[0], "past-blocking", "weft: ");
    expect_abort(argv[0], "uncaught", "terminate");
    return 0;
}
