// Tests weft::runtime and weft::spawn / weft::handle (SPEC "C++ interface:
// weft.hpp"): results (values, void, references, move-only), decay-copied
// and moved arguments, exceptions across join, the destructor's and move
// assignment's join, id and joinable, the weft_attr overload (const,
// non-const and rvalue attrs), errors as std::system_error, callables too
// large for the copied space or over-aligned, callables whose copy throws,
// spawns from a plain kernel thread; on 1 and 2 workers, both policies.
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "check.h"
#include "cxx_test.hpp"
#include "weft.hpp"



struct custom_error {
    int value;
};

static long twice(long x)
{
    return 2 * x;
}

static void results()
{
    // values, from a function and from a lambda with arguments
    CHECK_EQ(weft::spawn(twice, 21).join(), 42);
    CHECK_EQ(weft::spawn([](int a, long b, char c) { return a + b + c; }, 1, 2L, 'a').join(),
             1 + 2 + 'a');
    CHECK(weft::spawn([] { return 2.5; }).join() == 2.5);
    CHECK(weft::spawn([] { return true; }).join());
    // void
    int ran = 0;
    weft::handle<void> hv = weft::spawn([&ran] { ran = 1; });
    hv.join();
    CHECK_EQ(ran, 1);
    // a result larger than a pointer, and one that is not trivially copyable
    struct big {
        long v[8];
    };
    big b = weft::spawn([] {
                big x{};
                x.v[7] = 7;
                return x;
            }).join();
    CHECK_EQ(b.v[7], 7);
    CHECK(weft::spawn([] { return std::string(100, 'x'); }).join() == std::string(100, 'x'));
    // move-only
    std::unique_ptr<int> p = weft::spawn([] { return std::make_unique<int>(5); }).join();
    CHECK(p && *p == 5);
    // a reference
    static int target = 3;
    int &r = weft::spawn([]() -> int & { return target; }).join();
    CHECK(&r == &target);
}

static void arguments(bool help_first)
{
    // decay-copied: the thread works on copies made at the spawn
    std::string s = "before";
    int n = 1;
    auto h = weft::spawn(
        [](std::string copy, int ncopy) {
            weft::yield();
            return copy + std::to_string(ncopy);
        },
        s, n);
    s = "after";
    n = 2;
    CHECK(h.join() == "before1");
    // help-first: the child has not run when the spawn returns
    if (help_first) {
        int seen = 0;
        auto h2 = weft::spawn([](int v, int *out) { *out = v; }, n, &seen);
        n = 3;
        h2.join();
        CHECK_EQ(seen, 2);
    }
    // std::ref passes a reference
    int shared = 0;
    weft::spawn([](int &x) { x = 9; }, std::ref(shared)).join();
    CHECK_EQ(shared, 9);
    // move-only callable and arguments, moved in
    auto up = std::make_unique<int>(4);
    auto f = [q = std::make_unique<int>(6)](std::unique_ptr<int> a) { return *q * *a; };
    CHECK_EQ(weft::spawn(std::move(f), std::move(up)).join(), 24);
    CHECK(!up);
    // a string literal decays to a pointer; an array argument too
    CHECK_EQ(weft::spawn([](const char *c) { return strlen(c); }, "four").join(), 4);
    // a callable larger than the copied space, and an over-aligned one
    std::array<char, 10000> large;
    large.fill('y');
    large[9999] = 'z';
    CHECK_EQ(weft::spawn([large] { return large[9999] + large[0]; }).join(), 'z' + 'y');
    struct alignas(64) aligned {
        char c;
    } al{ 'a' };
    CHECK_EQ(weft::spawn([al] {
                 return (long)(reinterpret_cast<uintptr_t>(&al) % 64) + al.c;
             }).join(),
             'a');
}

static void exceptions()
{
    // the thread's exception, of its own type, rethrown by join
    auto h = weft::spawn([] {
        weft::yield();
        throw custom_error{ 7 };
        return 1;
    });
    bool caught = false;
    try {
        h.join();
    } catch (const custom_error &e) {
        caught = e.value == 7;
    }
    CHECK(caught);
    CHECK(!h.joinable());
    // void, string and move-only results: the same
    for (int i = 0; i < 3; i++) {
        caught = false;
        try {
            if (i == 0)
                weft::spawn([] { throw std::runtime_error("v"); }).join();
            else if (i == 1)
                weft::spawn([]() -> std::string { throw std::runtime_error("s"); }).join();
            else
                weft::spawn([]() -> std::unique_ptr<int> { throw std::runtime_error("u"); }).join();
        } catch (const std::runtime_error &e) {
            caught = strlen(e.what()) == 1;
        }
        CHECK(caught);
    }
    // many threads throw at once; each join gets its own thread's exception
    std::vector<weft::handle<int>> hs;
    for (int i = 0; i < 64; i++)
        hs.push_back(weft::spawn([i] {
            weft::yield();
            if (i % 2)
                throw custom_error{ i };
            return i;
        }));
    for (int i = 0; i < 64; i++) {
        try {
            CHECK_EQ(hs[i].join(), i);
            CHECK(i % 2 == 0);
        } catch (const custom_error &e) {
            CHECK_EQ(e.value, i);
        }
    }
    // weft_exit ends a thread as its return would: destructors run
    static std::atomic<int> destroyed;
    destroyed = 0;
    struct counted {
        ~counted()
        {
            destroyed++;
        }
    };
    weft::spawn([] {
        counted c;
        weft_exit(nullptr);
    }).join();
    CHECK_EQ(destroyed.load(), 1);
}

static void handles()
{
    // id and joinable
    auto a = weft::spawn([] { weft::yield(); });
    auto b = weft::spawn([] { weft::yield(); });
    CHECK(a.joinable() && b.joinable());
    CHECK(a.id() != 0 && b.id() != 0 && a.id() != b.id());
    uint64_t self = weft::spawn([] { return weft_thread_id(weft_self()); }).join();
    CHECK(self != 0);
    a.join();
    CHECK(!a.joinable());
    CHECK_EQ(a.id(), 0);
    CHECK_EQ(system_error_code([&] { a.join(); }), EINVAL);
    // a moved-from handle is not joinable; the moved-to one is
    weft::handle<void> c = std::move(b);
    CHECK(!b.joinable() && c.joinable());
    c.join();
    // the destructor joins (and drops what the thread threw)
    std::atomic<int> done{ 0 };
    {
        auto d = weft::spawn([&done] {
            for (int i = 0; i < 10; i++)
                weft::yield();
            done = 1;
        });
        auto e = weft::spawn([] {
            weft::yield();
            throw std::runtime_error("dropped");
        });
    }
    CHECK_EQ(done.load(), 1);
    // move assignment joins the thread the handle held
    done = 0;
    auto f = weft::spawn([&done] {
        for (int i = 0; i < 10; i++)
            weft::yield();
        done = 2;
    });
    f = weft::spawn([] {});
    CHECK_EQ(done.load(), 2);
    f.join();
    // a default-constructed handle holds no thread
    weft::handle<int> none;
    CHECK(!none.joinable());
}

static const char *own_name()
{
    return weft_thread_name(weft_self());
}

static void attrs()
{
    weft_attr attr = WEFT_ATTR_INIT;
    attr.name = "mutable";
    CHECK(strcmp(weft::spawn(attr, own_name).join(), "mutable") == 0); // non-const lvalue
    const weft_attr &cattr = attr;
    CHECK(strcmp(weft::spawn(
                     cattr, [](int x) { return x + 1 > 0 ? own_name() : nullptr; }, 1)
                     .join(),
                 "mutable") == 0);
    weft_attr named = WEFT_ATTR_INIT;
    named.name = "rvalue";
    CHECK(strcmp(weft::spawn(std::move(named), own_name).join(), "rvalue") == 0);
    // a bound thread, a larger stack and a priority
    weft_attr more = WEFT_ATTR_INIT;
    more.bound = 1;
    more.stack_size = 1 << 20;
    CHECK_EQ(weft::spawn(
                 more, [](std::string s) { return s.size(); }, std::string(40, 'b'))
                 .join(),
             40);
    more.bound = 0;
    more.priority = WEFT_PRIO_HIGH;
    CHECK_EQ(weft::spawn(more, [] { return weft_priority(nullptr); }).join(), WEFT_PRIO_HIGH);
    // errors: the spawn throws, and the callable never runs
    std::atomic<int> ran{ 0 };
    weft_attr bad = WEFT_ATTR_INIT;
    bad.stack_size = 1000; // < 16 KiB
    CHECK_EQ(system_error_code([&] { weft::spawn(bad, [&ran] { ran++; }); }), EINVAL);
    std::string keep(50, 'k');
    CHECK_EQ(system_error_code([&] { weft::spawn(bad, [&ran, keep] { ran++; }); }), EINVAL);
    bad.stack_size = 0;
    bad.priority = 99;
    CHECK_EQ(system_error_code([&] { weft::spawn(bad, [&ran] { ran++; }); }), EINVAL);
    bad.priority = 0;
    bad.detached = 1; // a handle's thread is joinable
    CHECK_EQ(system_error_code([&] { weft::spawn(bad, [&ran] { ran++; }); }), EINVAL);
    CHECK_EQ(ran.load(), 0);
}

// A callable whose copy throws once `fail` is set: the spawn rethrows it.
struct fragile {
    static std::atomic<bool> fail;
    static std::atomic<int> calls;
    std::string text = "fragile";
    fragile() = default;
    fragile(const fragile &o) : text(o.text)
    {
        if (fail)
            throw custom_error{ 11 };
    }
    void operator()() const
    {
        calls++;
    }
};
std::atomic<bool> fragile::fail{ false };
std::atomic<int> fragile::calls{ 0 };

static void throwing_copies()
{
    fragile::calls = 0;
    fragile f;
    weft::spawn(f).join();
    CHECK_EQ(fragile::calls.load(), 1);
    fragile::fail = true;
    bool caught = false;
    try {
        weft::spawn(f);
    } catch (const custom_error &e) {
        caught = e.value == 11;
    }
    CHECK(caught);
    caught = false;
    try {
        weft::group g;
        g.run(f);
    } catch (const custom_error &e) {
        caught = e.value == 11;
    }
    CHECK(caught);
    fragile::fail = false;
    CHECK_EQ(fragile::calls.load(), 1);
}

// From a plain kernel thread: every route of the callable.
static void from_kernel_thread()
{
    std::string s(30, 'q');
    long got = 0;
    std::thread kt([&] {
        got = weft::spawn([](long x) { return x; }, 5L).join();
        got += weft::spawn([s] { return (long)s.size(); }).join();
        std::array<char, 5000> large{};
        got += weft::spawn([large] { return (long)large.size(); }).join();
        weft::group g;
        g.run([&got, s] { got += (long)s.size(); });
        g.wait();
    });
    join_kernel_thread(kt);
    CHECK_EQ(got, 5 + 30 + 5000 + 30);
}

static void runtime_errors()
{
    // a second runtime while one runs: EBUSY
    CHECK_EQ(system_error_code([] { weft::runtime again; }), EBUSY);
}

int main()
{
    weft_config bad;
    weft_config_default(&bad);
    bad.workers = -1;
    CHECK_EQ(system_error_code([&] { weft::runtime rt(&bad); }), EINVAL);
    for_each_runtime([&](int policy) {
    results();
    arguments(policy == WEFT_HELP_FIRST);
    exceptions();
    handles();
    attrs();
    throwing_copies();
    from_kernel_thread();
    runtime_errors();
    });
    // the runtime's destructor finalized: a new one starts
    weft::runtime rt;
    CHECK_EQ(weft::spawn([] { return 1; }).join(), 1);
    return 0;
}
