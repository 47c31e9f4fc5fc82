/* pool.hpp: runs a Boost.Fiber benchmark body on 1 thread (round_robin) or on w threads sharing fibers by work_stealing.
 *
 * Boost.Fiber's work_stealing keeps a process-wide table sized by its first
 * thread count and a static barrier, so a process can set it up only once:
 * with_threads() accepts one w > 1 per process and must come after every
 * w = 1 run (bench_boost_workers() orders the list so). Idle threads of the
 * pool spin (suspend = false), like the idle workers of TBB and libgomp.
 */
#ifndef WEFT_BENCH_BOOSTFIBER_POOL_HPP
#define WEFT_BENCH_BOOSTFIBER_POOL_HPP

#include "bench.h"

#include <algorithm>
#include <boost/fiber/all.hpp>
#include <thread>
#include <vector>

namespace bf = boost::fibers;

/* Sorts o->workers ascending and drops every w > 1 after the first. */
inline void bench_boost_workers(bench_opts *o)
{
    std::sort(o->workers.v, o->workers.v + o->workers.len);
    int len = 0;
    for (int i = 0; i < o->workers.len; i++) {
        if (o->workers.v[i] > 1 && len > 0 && o->workers.v[len - 1] > 1) {
            fprintf(stderr,
                    "bench: Boost.Fiber work_stealing can be set up once per process: skipping "
                    "workers=%ld\n",
                    o->workers.v[i]);
            continue;
        }
        o->workers.v[len++] = o->workers.v[i];
    }
    o->workers.len = len;
}

/* Runs body() in a fiber context of w threads: the calling thread plus w-1
 * helpers that steal fibers until body() returns. */
template <typename F> void with_threads(long w, F body)
{
    if (w <= 1) {
        body();
        return;
    }
    bf::mutex mtx;
    bf::condition_variable cv;
    bool done = false;
    std::vector<std::thread> helpers;
    for (long i = 1; i < w; i++) {
        helpers.emplace_back([&] {
            bf::use_scheduling_algorithm<bf::algo::work_stealing>((std::uint32_t)w);
            std::unique_lock<bf::mutex> lk(mtx);
            cv.wait(lk, [&] { return done; });
        });
    }
    bf::use_scheduling_algorithm<bf::algo::work_stealing>((std::uint32_t)w);
    body();
    {
        std::unique_lock<bf::mutex> lk(mtx);
        done = true;
    }
    cv.notify_all();
    for (auto &t : helpers)
        t.join();
}

#endif
