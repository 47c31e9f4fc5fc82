// Tests weft::mutex, weft::condition_variable and weft::yield (SPEC "C++
// interface: weft.hpp"): the mutex as a Lockable under std::lock_guard,
// std::unique_lock (try_to_lock, defer_lock) and std::scoped_lock of two
// mutexes taken in opposite orders; errors as std::system_error;
// condition_variable's wait with and without a predicate, notify_one and
// notify_all, wait_for and wait_until (steady_clock and system_clock) that
// time out, and that are woken in time, with and without predicates; yield
// interleaving two threads on one worker. 1 and 2 workers, both policies.
#include <errno.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "check.h"
#include "cxx_test.hpp"
#include "weft.hpp"

using namespace std::chrono_literals;



static void mutexes()
{
    weft::mutex m, m2;
    long total = 0, other = 0;
    {
        weft::group g;
        for (int t = 0; t < 8; t++) {
            g.run([&] {
                for (int i = 0; i < 500; i++) {
                    {
                        std::lock_guard<weft::mutex> lk(m);
                        long v = total;
                        if (i % 50 == 0)
                            weft::yield(); // switch while holding it
                        total = v + 1;
                    }
                    {
                        std::unique_lock<weft::mutex> lk(m2);
                        other++;
                    }
                }
            });
        }
        // scoped_lock takes both, in either order, without deadlock
        for (int t = 0; t < 4; t++) {
            g.run([&, t] {
                for (int i = 0; i < 200; i++) {
                    if (t % 2) {
                        std::scoped_lock lk(m, m2);
                        total++, other++;
                    } else {
                        std::scoped_lock lk(m2, m);
                        total++, other++;
                    }
                }
            });
        }
    }
    CHECK_EQ(total, 8 * 500 + 4 * 200);
    CHECK_EQ(other, 8 * 500 + 4 * 200);
    // try_lock, try_to_lock and defer_lock
    {
        std::unique_lock<weft::mutex> lk(m);
        bool got = weft::spawn([&m] { return m.try_lock(); }).join();
        CHECK(!got);
        lk.unlock();
        std::unique_lock<weft::mutex> t(m, std::try_to_lock);
        CHECK(t.owns_lock());
        std::unique_lock<weft::mutex> d(m2, std::defer_lock);
        CHECK(!d.owns_lock());
        d.lock();
        CHECK(d.owns_lock());
    }
    // errors: relocking what the caller holds, unlocking what it does not
    m.lock();
    CHECK_EQ(system_error_code([&] { m.lock(); }), EDEADLK);
    m.unlock();
    CHECK_EQ(system_error_code([&] { m.unlock(); }), EPERM);
    CHECK(m.native_handle() != nullptr);
}

static void waits()
{
    weft::mutex m;
    weft::condition_variable cv;
    // without a predicate: a loop, as a user writes it
    int ready = 0;
    auto h = weft::spawn([&] {
        std::unique_lock<weft::mutex> lk(m);
        while (!ready)
            cv.wait(lk);
        return ready;
    });
    weft::yield();
    {
        std::lock_guard<weft::mutex> lk(m);
        ready = 5;
    }
    cv.notify_one();
    CHECK_EQ(h.join(), 5);
    // with a predicate, notify_all wakes every waiter
    int go = 0;
    std::atomic<int> woken{ 0 };
    {
        weft::group g;
        for (int i = 0; i < 10; i++)
            g.run([&] {
                std::unique_lock<weft::mutex> lk(m);
                cv.wait(lk, [&] { return go != 0; });
                CHECK(lk.owns_lock());
                woken++;
            });
        weft::yield();
        {
            std::lock_guard<weft::mutex> lk(m);
            go = 1;
        }
        cv.notify_all();
    }
    CHECK_EQ(woken.load(), 10);
    // waiting without holding the lock is refused
    std::unique_lock<weft::mutex> none(m, std::defer_lock);
    CHECK_EQ(system_error_code([&] { cv.wait(none); }), EPERM);
}

static void timed_waits()
{
    weft::mutex m;
    weft::condition_variable cv;
    std::unique_lock<weft::mutex> lk(m);
    // time-outs: the time has passed when they return
    auto t0 = std::chrono::steady_clock::now();
    CHECK(cv.wait_for(lk, 20ms) == std::cv_status::timeout);
    CHECK(std::chrono::steady_clock::now() - t0 >= 20ms);
    CHECK(lk.owns_lock());
    t0 = std::chrono::steady_clock::now();
    CHECK(!cv.wait_for(lk, 15ms, [] { return false; }));
    CHECK(std::chrono::steady_clock::now() - t0 >= 15ms);
    auto until = std::chrono::steady_clock::now() + 10ms;
    CHECK(cv.wait_until(lk, until) == std::cv_status::timeout);
    CHECK(std::chrono::steady_clock::now() >= until);
    auto suntil = std::chrono::system_clock::now() + 10ms;
    CHECK(!cv.wait_until(lk, suntil, [] { return false; }));
    CHECK(std::chrono::system_clock::now() >= suntil);
    // a deadline already past, zero and negative durations: at once
    CHECK(cv.wait_until(lk, std::chrono::steady_clock::now() - 1s) == std::cv_status::timeout);
    CHECK(cv.wait_for(lk, 0ms) == std::cv_status::timeout);
    CHECK(!cv.wait_for(lk, -5ms, [] { return false; }));
    CHECK(cv.wait_for(lk, -5ms, [] { return true; }));
    // a predicate already true: no wait, even with a huge timeout
    CHECK(cv.wait_for(lk, std::chrono::hours(1000000), [] { return true; }));
    lk.unlock();
    // woken in time: with predicates, by notify_one, long before the timeout
    int flag = 0;
    auto h = weft::spawn([&] {
        std::unique_lock<weft::mutex> l(m);
        return cv.wait_for(l, 60s, [&] { return flag == 1; });
    });
    auto h2 = weft::spawn([&] {
        std::unique_lock<weft::mutex> l(m);
        return cv.wait_until(l, std::chrono::system_clock::now() + 60s, [&] { return flag == 1; });
    });
    for (int i = 0; i < 5; i++)
        weft::yield();
    t0 = std::chrono::steady_clock::now();
    {
        std::lock_guard<weft::mutex> l(m);
        flag = 1;
    }
    cv.notify_all();
    CHECK(h.join());
    CHECK(h2.join());
    CHECK(std::chrono::steady_clock::now() - t0 < 30s);
    // a floating-point duration
    lk.lock();
    CHECK(cv.wait_for(lk, std::chrono::duration<double, std::milli>(2.5)) ==
          std::cv_status::timeout);
}

static void yields()
{
    // two threads on one worker alternate at each yield
    std::vector<int> order;
    weft::mutex m;
    auto step = [&](int who) {
        for (int i = 0; i < 5; i++) {
            {
                std::lock_guard<weft::mutex> lk(m);
                order.push_back(who);
            }
            weft::yield();
        }
    };
    if (weft_num_workers() == 1) {
        {
            weft::group g;
            g.run([&] { step(1); });
            g.run([&] { step(2); });
        }
        CHECK_EQ(order.size(), 10);
        for (size_t i = 1; i < order.size(); i++)
            CHECK(order[i] != order[i - 1]);
    }
    // from a plain kernel thread: sched_yield
    std::thread kt([] { weft::yield(); });
    join_kernel_thread(kt);
}

int main()
{
    for_each_runtime([&](int) {
    mutexes();
    waits();
    timed_waits();
    yields();
    });
    // a mutex and a condition variable are usable as statics (constant init)
    static weft::mutex sm;
    static weft::condition_variable scv;
    weft::runtime rt;
    {
        std::lock_guard<weft::mutex> lk(sm);
        scv.notify_all();
    }
    return 0;
}
