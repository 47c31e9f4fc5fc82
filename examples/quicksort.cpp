// quicksort.cpp: a parallel quicksort with weft::group, oneTBB's
// task_group shape: each partition sorts its left part in a member and its
// right part itself, then waits. Build against an installed weft:
//   c++ -std=c++17 quicksort.cpp $(pkg-config --cflags --libs weft)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <weft.hpp>

template <class It> static void quicksort(It lo, It hi)
{
    while (hi - lo > 2048) {
        auto pivot = *(lo + (hi - lo) / 2);
        It mid1 = std::partition(lo, hi, [pivot](const auto &x) { return x < pivot; });
        It mid2 = std::partition(mid1, hi, [pivot](const auto &x) { return !(pivot < x); });
        weft::group g; // its destructor waits, even when the right part throws
        g.run([lo, mid1] { quicksort(lo, mid1); });
        lo = mid2; // the right part, in this thread
        quicksort(lo, hi);
        g.wait(); // rethrows what the member threw
        return;
    }
    std::sort(lo, hi);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 10000000;
    std::vector<int> v((size_t)n);
    std::mt19937 rng(42);
    for (auto &x : v)
        x = (int)(rng() % 1000000);
    weft::runtime rt;
    quicksort(v.begin(), v.end());
    bool sorted = std::is_sorted(v.begin(), v.end());
    std::printf("sorted %ld ints on %d workers: %s\n", n, weft_num_workers(),
                sorted ? "ok" : "NOT SORTED");
    return sorted ? 0 : 1;
}
