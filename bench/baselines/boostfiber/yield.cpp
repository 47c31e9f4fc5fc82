/* yield.cpp: Boost.Fiber baseline for yield: K fibers on one thread (round_robin) each calling this_fiber::yield() N times.
 *
 *   baseline_boostfiber_yield [-n PER_FIBER] [-k LIST] [-r REPS] [--callgrind]
 */
#include "pool.hpp"

static const long warmup_yields = 1000;

BENCH_NOINLINE void bench_round_boostfiber(std::vector<bf::fiber> &fs, long n);

BENCH_NOINLINE void bench_round_boostfiber(std::vector<bf::fiber> &fs, long n)
{
    for (auto &f : fs)
        f = bf::fiber([n] {
            for (long i = 0; i < n; i++)
                boost::this_fiber::yield();
        });
    for (auto &f : fs)
        f.join();
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, "  default -n 1000000/K; one thread\n");
    for (int ki = 0; ki < o.threads.len; ki++) {
        double samples[BENCH_MAX_RUNS];
        char param[32];
        long k = o.threads.v[ki] > 0 ? o.threads.v[ki] : 1;
        long n = bench_size(&o, 1000000 / k);
        if (n < 1)
            n = 1;
        std::vector<bf::fiber> fs((size_t)k);
        bench_round_boostfiber(fs, warmup_yields / k + 1);
        for (int r = 0; r < o.reps; r++) {
            uint64_t t0 = bench_now_ns();
            bench_round_boostfiber(fs, n);
            samples[r] = (double)(bench_now_ns() - t0) / ((double)k * (double)n);
        }
        snprintf(param, sizeof param, "%ld", k);
        bench_report(&o, "yield", "boostfiber", 1, param, samples, o.reps, "ns/yield");
    }
    return 0;
}
