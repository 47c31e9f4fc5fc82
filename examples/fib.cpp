// fib.cpp: fib(n) with a user thread per call, in C++: weft::spawn returns
// a handle whose join gives the child's result (or rethrows what it threw).
// Build against an installed weft:
//   c++ -std=c++17 fib.cpp $(pkg-config --cflags --libs weft)
#include <cstdio>
#include <cstdlib>

#include <weft.hpp>

static long fib(long n)
{
    if (n < 20) // below this, a thread costs more than it saves
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    weft::handle<long> child = weft::spawn(fib, n - 1);
    long b = fib(n - 2);
    return child.join() + b;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 30;
    weft::runtime rt; // workers from WEFT_WORKERS or the CPU count
    long f = fib(n), a = 0, b = 1;
    for (long i = 0; i < n; i++) { // the answer, the slow-witted way
        long c = a + b;
        a = b;
        b = c;
    }
    std::printf("fib(%ld) = %ld on %d workers\n", n, f, weft_num_workers());
    return f == a ? 0 : 1;
}
