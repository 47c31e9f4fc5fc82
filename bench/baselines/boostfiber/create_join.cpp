/* create_join.cpp: Boost.Fiber baseline for create+join: construct a fiber running an empty function, join it, per iteration.
 *
 * Fibers start with launch::dispatch (the child runs at once, like weft's
 * work-first) on the default stack allocator. workers=1: round_robin on the
 * calling thread; workers=w: work_stealing on w threads (see pool.hpp).
 *   baseline_boostfiber_create_join [-n ITER] [-r REPS] [-w LIST] [--callgrind]
 */
#include "pool.hpp"

static const long warmup = 1000;

static BENCH_NOINLINE void empty_fiber()
{
    BENCH_SINK(0);
}

BENCH_NOINLINE void bench_loop_boostfiber(long n);

BENCH_NOINLINE void bench_loop_boostfiber(long n)
{
    for (long i = 0; i < n; i++) {
        bf::fiber f(bf::launch::dispatch, empty_fiber);
        f.join();
    }
}

static void run(const bench_opts *o, long w, long n, double *samples)
{
    with_threads(w, [&] {
        bench_loop_boostfiber(warmup);
        bench_time_per_op(o, bench_loop_boostfiber, n, samples);
    });
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o, NULL);
    bench_boost_workers(&o);
    bench_cj_sweep(&o, "boostfiber", run);
    return 0;
}
