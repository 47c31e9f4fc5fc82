// Tests that weft::group::run and weft::spawn take no memory from the heap
// for a callable that fits the 4096 bytes weft copies to a child's stack
// (SPEC "C++ interface: weft.hpp"; issue 29): trivially copyable lambdas
// of 8 to 2048 bytes, and lambdas with members whose copies allocate
// nothing but are not trivially copyable (a short std::string, a
// std::shared_ptr), with void and scalar results; under both policies, so
// that the spawner both finds its child's callable built and parks for it.
// Counts operator new calls in the whole program (weft's own memory comes
// from malloc and mmap, not operator new).
#include <stdlib.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <string>

#include "check.h"
#include "cxx_test.hpp"
#include "weft.hpp"

static std::atomic<long> news{ 0 };

void *operator new(std::size_t n)
{
    news.fetch_add(1, std::memory_order_relaxed);
    if (void *p = malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void *p) noexcept
{
    free(p);
}
void operator delete(void *p, std::size_t) noexcept
{
    free(p);
}

static std::atomic<long> sink{ 0 };

template <std::size_t N> static void sized(weft::group &g)
{
    std::array<char, N> a;
    a.fill(1);
    g.run([a] { sink += a[N - 1]; });
    sink += weft::spawn([a](long x) { return a[0] + x; }, 1L).join();
}

static void spawns()
{
    weft::group g;
    sized<8>(g);
    sized<64>(g);
    sized<512>(g);
    sized<2048>(g);
    std::string s = "short"; // fits the string's own buffer: its copy allocates nothing
    auto shared = std::make_shared<int>(3);
    long before = news.load();
    for (int i = 0; i < 10; i++) {
        sized<8>(g);
        sized<64>(g);
        sized<512>(g);
        sized<2048>(g);
        g.run([s, shared] { sink += (long)s.size() + *shared; });
        g.run([s, shared]() mutable {
            s += "!";
            shared.reset();
        });
        weft::spawn([s, shared] { sink += (long)s.size() + *shared; }).join();
        sink += weft::spawn([](std::string t) { return (long)t.size(); }, s).join();
        g.wait();
    }
    CHECK_EQ(news.load() - before, 0);
    // the counter counts: a callable beyond the copied space is on the heap
    before = news.load();
    std::array<char, 5000> big{};
    weft::spawn([big] { sink += big[4999]; }).join();
    CHECK(news.load() - before > 0);
    CHECK_EQ(sink.load(), 10 * (4 * 3 + (5 + 3) * 2 + 5) + 4 * 3);
}

int main()
{
    for_each_runtime([&](int) {
    sink = 0;
    spawns();
    });
    return 0;
}
