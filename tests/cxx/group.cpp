// Tests weft::group (SPEC "C++ interface: weft.hpp"): run of any callable
// (lambdas, functions, move-only and non-trivially-copyable ones, results
// dropped), wait returning once every member finished, rethrowing the first
// exception since the last wait and dropping the others, reuse after a
// wait, the destructor's wait, members that run into their own group,
// nested groups (fib), runs from several threads at once and from a plain
// kernel thread; on 1 and 2 workers, both policies.
#include <errno.h>
#include <stdlib.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "cxx_test.hpp"
#include "weft.hpp"


struct custom_error {
    int value;
};

static std::atomic<long> counter;

static void add_one()
{
    counter++;
}

static long fib(long n)
{
    if (n < 2)
        return n;
    long a = 0, b = 0;
    weft::group g;
    g.run([&a, n] { a = fib(n - 1); });
    b = fib(n - 2);
    g.wait();
    return a + b;
}

static void basics()
{
    counter = 0;
    weft::group g;
    for (int i = 0; i < 100; i++)
        g.run([] {
            weft::yield();
            counter++;
        });
    g.run(add_one);
    g.run(&add_one);
    g.run([] { return 5; }); // the result is dropped
    g.wait();
    CHECK_EQ(counter.load(), 102);
    // move-only and non-trivially-copyable callables
    auto p = std::make_unique<long>(10);
    g.run([q = std::move(p)] { counter += *q; });
    std::string s(64, 's');
    g.run([s] { counter += (long)s.size(); });
    std::vector<int> v(1000, 1);
    g.run([v] { counter += (long)v.size(); });
    g.wait();
    CHECK_EQ(counter.load(), 102 + 10 + 64 + 1000);
    // an lvalue callable is copied: the group's copy runs, the original stays
    std::string text = "lvalue";
    auto f = [text] { counter += (long)text.size(); };
    g.run(f);
    g.wait();
    CHECK_EQ(counter.load(), 102 + 10 + 64 + 1000 + 6);
    CHECK_EQ(fib(15), 610);
}

static void exceptions()
{
    weft::group g;
    // only the first thrown since the last wait is rethrown
    std::atomic<int> ran{ 0 };
    g.run([] { throw custom_error{ 1 }; });
    for (int i = 0; i < 50; i++)
        g.run([&ran, i] {
            weft::yield();
            ran++;
            if (i % 5 == 0)
                throw custom_error{ 100 + i };
        });
    bool caught = false;
    try {
        g.wait();
    } catch (const custom_error &e) {
        caught = e.value == 1 || (e.value >= 100 && e.value < 150);
    }
    CHECK(caught);
    CHECK_EQ(ran.load(), 50); // every member ran before the rethrow
    // the others were dropped: the next wait has nothing to rethrow
    g.wait();
    // the group is used again, with an exception of another type
    g.run([] {
        weft::yield();
        throw std::out_of_range("second");
    });
    caught = false;
    try {
        g.wait();
    } catch (const std::out_of_range &) {
        caught = true;
    }
    CHECK(caught);
    g.run([] {});
    g.wait();
    // members that throw in nested groups: rethrown through each level
    caught = false;
    try {
        weft::group outer;
        outer.run([] {
            weft::group inner;
            inner.run([] { throw custom_error{ 3 }; });
            inner.wait(); // rethrows into the member, which outer keeps
        });
        outer.wait();
    } catch (const custom_error &e) {
        caught = e.value == 3;
    }
    CHECK(caught);
}

static void destructor()
{
    // the destructor waits for every member, and drops a kept exception
    std::atomic<int> done{ 0 };
    {
        weft::group g;
        for (int i = 0; i < 20; i++)
            g.run([&done] {
                for (int k = 0; k < 5; k++)
                    weft::yield();
                done++;
            });
        g.run([] { throw custom_error{ 9 }; });
    }
    CHECK_EQ(done.load(), 20);
}

static void own_group()
{
    // members spawn into their own group: a tree of runs, one wait
    counter = 0;
    weft::group g;
    struct tree {
        static void grow(weft::group *gr, int depth)
        {
            counter++;
            if (depth > 0) {
                gr->run([gr, depth] { grow(gr, depth - 1); });
                gr->run([gr, depth] { grow(gr, depth - 1); });
            }
        }
    };
    g.run([&g] { tree::grow(&g, 8); });
    g.wait();
    CHECK_EQ(counter.load(), (1 << 9) - 1);
}

static void concurrent_runs()
{
    // runs into one group from several user threads and a kernel thread
    counter = 0;
    weft::group g;
    {
        weft::group spawners;
        for (int t = 0; t < 4; t++)
            spawners.run([&g] {
                for (int i = 0; i < 50; i++)
                    g.run([] { counter++; });
            });
        std::thread kt([&g] {
            for (int i = 0; i < 50; i++)
                g.run([s = std::string(20, 'k')] { counter += s.size() == 20; });
        });
        spawners.wait();
        join_kernel_thread(kt);
    }
    g.wait();
    CHECK_EQ(counter.load(), 250);
    // a plain kernel thread runs and waits a group of its own
    std::thread kt2([] {
        weft::group kg;
        kg.run([] { counter++; });
        kg.run([] { throw custom_error{ 4 }; });
        bool caught = false;
        try {
            kg.wait();
        } catch (const custom_error &e) {
            caught = e.value == 4;
        }
        CHECK(caught);
    });
    join_kernel_thread(kt2);
    CHECK_EQ(counter.load(), 251);
}

int main()
{
    for_each_runtime([&](int) {
    basics();
    exceptions();
    destructor();
    own_group();
    concurrent_runs();
    });
    return 0;
}
