// Tests that each user thread has its own C++ exception state (SPEC "C++
// interface: weft.hpp"; issue 29): 200 threads throw, then inside their
// catch blocks yield, spin past a short quantum (so that they are
// preempted) and move between workers, and then inspect and rethrow the
// exception being handled (std::current_exception, throw;) and nest
// another try/catch; std::uncaught_exceptions() in a destructor that
// switches during unwinding; a thread that spawns a child from inside a
// catch block (the child handles none, the parent keeps its own). Before
// the C++ runtime's per-thread globals travelled with the user thread,
// this ended in std::terminate or a crash. Runs in a child process with an
// alarm, so that a hang or a crash is reported as such.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>

#include "check.h"
#include "weft.hpp"

static const int THREADS = 200;
static const int ROUNDS = 3;

static std::atomic<long> spin_sink;
static std::atomic<int> handled;

// Spins about us microseconds in the program's own code, where a
// preemption may land.
static void spin_us(double us)
{
    double end = check_now() + us * 1e-6;
    unsigned long x = 0;
    while (check_now() < end)
        for (unsigned i = 0; i < 200; i++)
            x += i ^ (x >> 3);
    spin_sink += (long)x;
}

static std::string current_what()
{
    std::exception_ptr e = std::current_exception();
    CHECK(e != nullptr);
    try {
        std::rethrow_exception(e);
    } catch (const std::runtime_error &r) {
        return r.what();
    }
    return "";
}

struct switching_destructor {
    int *seen;
    ~switching_destructor()
    {
        weft::yield();
        spin_us(50);
        *seen = std::uncaught_exceptions();
        weft::yield();
        if (*seen == 1)
            *seen = std::uncaught_exceptions();
    }
};

static void one_thread(int i)
{
    const std::string mine = "thread " + std::to_string(i);
    for (int round = 0; round < ROUNDS; round++) {
        try {
            weft::yield();
            throw std::runtime_error(mine);
        } catch (const std::runtime_error &e) {
            // switch, be preempted and move inside the catch block
            for (int k = 0; k < 4; k++) {
                weft::yield();
                spin_us(150);
            }
            CHECK(mine == e.what());
            CHECK(current_what() == mine);
            CHECK_EQ(std::uncaught_exceptions(), 0);
            // a nested handler, which switches too, then the outer one again
            try {
                throw std::logic_error("nested");
            } catch (const std::logic_error &n) {
                weft::yield();
                spin_us(100);
                CHECK(strcmp(n.what(), "nested") == 0);
            }
            CHECK(current_what() == mine);
            // rethrow the one being handled, catch it again, switch again
            try {
                throw;
            } catch (const std::runtime_error &again) {
                weft::yield();
                CHECK(mine == again.what());
            }
            CHECK(current_what() == mine);
        }
        CHECK(std::current_exception() == nullptr);
        // the count of exceptions in flight, seen by a destructor that
        // switches while the stack unwinds
        int seen = -1;
        try {
            switching_destructor d{ &seen };
            throw 1;
        } catch (int) {
        }
        CHECK_EQ(seen, 1);
        CHECK_EQ(std::uncaught_exceptions(), 0);
    }
    // a child spawned inside a catch block handles nothing of its parent's
    try {
        throw std::runtime_error(mine);
    } catch (const std::runtime_error &) {
        bool clean =
            weft::spawn([] {
                weft::yield();
                return std::current_exception() == nullptr && std::uncaught_exceptions() == 0;
            }).join();
        CHECK(clean);
        CHECK(current_what() == mine);
    }
    handled++;
}

static int child(int workers, int policy)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    alarm(120);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = workers;
    cfg.spawn_policy = policy;
    cfg.quantum_us = 100; // short: threads spinning in catch blocks are preempted
    weft::runtime rt(&cfg);
    handled = 0;
    {
        weft::group g;
        for (int i = 0; i < THREADS; i++)
            g.run([i] { one_thread(i); });
        g.wait();
    }
    CHECK_EQ(handled.load(), THREADS);
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    printf("workers=%d policy=%d: %d threads, preempted %llu times (quantum)\n", workers, policy,
           THREADS, (unsigned long long)st.preempt_quantum);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3)
        return child(atoi(argv[1]), atoi(argv[2]));
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_SPAWN_POLICY");
    unsetenv("WEFT_QUANTUM");
    static const char *const runs[][2] = { { "1", "0" }, { "2", "0" }, { "2", "1" } };
    for (auto &r : runs) {
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            execl(argv[0], argv[0], r[0], r[1], (char *)nullptr);
            _exit(127);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
            CHECK(errno == EINTR);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "workers=%s policy=%s: child %s %d\n", r[0], r[1],
                    WIFSIGNALED(status) ? "killed by signal" : "exited with",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            return 1;
        }
    }
    return 0;
}
