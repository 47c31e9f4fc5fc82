// cxx20: C++20 threads on the drop-in: std::thread, std::jthread,
// std::async, std::shared_mutex, std::latch, std::counting_semaphore,
// std::atomic::wait, thread_local with constructors and destructors, and
// exceptions thrown and caught in 200 threads that yield (and so may
// change kernel threads) between the throw and the catch.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <latch>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pcheck.h"

static std::atomic<int> ctors{ 0 }, dtors{ 0 };
struct Tracked {
    std::string s;
    Tracked() : s("thread-local state that lives on the heap")
    {
        ctors++;
    }
    ~Tracked()
    {
        dtors++;
    }
};
static thread_local Tracked tracked;

struct Boom : std::runtime_error {
    int id;
    explicit Boom(int i) : std::runtime_error("boom " + std::to_string(i)), id(i)
    {
    }
};

static void thrower(int id)
{
    std::this_thread::yield();
    throw Boom(id);
}

int main()
{
    // exceptions in 200 threads, with yields between throw and catch
    std::vector<std::thread> ts;
    std::atomic<int> caught{ 0 };
    for (int i = 0; i < 200; i++)
        ts.emplace_back([i, &caught] {
            for (int k = 0; k < 20; k++) {
                try {
                    try {
                        thrower(i * 100 + k);
                    } catch (const Boom &b) {
                        std::this_thread::yield();
                        CHECK(b.id == i * 100 + k);
                        throw;
                    }
                } catch (const std::exception &e) {
                    std::this_thread::yield();
                    CHECK(std::string(e.what()) == "boom " + std::to_string(i * 100 + k));
                    CHECK(std::uncaught_exceptions() == 0);
                    caught++;
                }
            }
            CHECK(tracked.s.size() > 10);
        });
    for (auto &t : ts)
        t.join();
    CHECK(caught == 200 * 20);
    CHECK(ctors == 200 && dtors == 200);

    // jthread with a stop token
    std::atomic<int> spins{ 0 };
    {
        std::jthread j([&](std::stop_token st) {
            while (!st.stop_requested()) {
                spins++;
                std::this_thread::yield();
            }
        });
        while (spins < 10)
            std::this_thread::yield();
    }
    // async
    auto f = std::async(std::launch::async, [] { return 6 * 7; });
    CHECK(f.get() == 42);
    // shared_mutex
    std::shared_mutex sm;
    long shared_count = 0;
    std::vector<std::thread> rw;
    for (int i = 0; i < 8; i++)
        rw.emplace_back([&, i] {
            for (int k = 0; k < 500; k++) {
                if ((k + i) % 5 == 0) {
                    std::unique_lock l(sm);
                    shared_count++;
                } else {
                    std::shared_lock l(sm);
                    (void)shared_count;
                }
            }
        });
    for (auto &t : rw)
        t.join();
    CHECK(shared_count == 8 * 100);
    // latch and counting_semaphore
    std::latch done(16);
    std::counting_semaphore<16> sem(0);
    std::vector<std::thread> ls;
    for (int i = 0; i < 16; i++)
        ls.emplace_back([&] {
            sem.release();
            done.arrive_and_wait();
        });
    for (int i = 0; i < 16; i++)
        sem.acquire();
    for (auto &t : ls)
        t.join();
    // atomic::wait / notify
    std::atomic<int> word{ 0 };
    std::thread w([&] {
        word.wait(0);
        CHECK(word.load() == 1);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    word = 1;
    word.notify_one();
    w.join();
    std::puts("ok");
    return 0;
}
