/* bench_weft.h: what the weft benchmarks share on top of bench.h: starting
 * the runtime for one configuration, and fib with a user thread per call. */
#ifndef WEFT_BENCH_WEFT_H
#define WEFT_BENCH_WEFT_H

#include <stdint.h>

#include "bench.h"
#include "weft.h"

/* policy BENCH_POLICY_ENV: the environment's (weft_config_default). */
#define BENCH_POLICY_ENV (-1)

/* weft_init with the environment's defaults but workers and policy; dies on
 * an error. */
static inline void bench_weft_init(long workers, int policy)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = (int)workers;
    if (policy != BENCH_POLICY_ENV)
        cfg.spawn_policy = policy;
    int rc = weft_init(&cfg);
    bench_ok(rc, "weft_init");
}

/* fib(n) with one weft_spawn per call and the join that matches it (n in
 * the argument, the result in the return value). */
static inline void *bench_weft_fib(void *arg)
{
    long n = (long)(intptr_t)arg;
    if (n < 2)
        return arg;
    weft_thread *t;
    void *a;
    int rc = weft_spawn(&t, bench_weft_fib, (void *)(intptr_t)(n - 1), NULL);
    bench_ok(rc, "weft_spawn");
    long b = (long)(intptr_t)bench_weft_fib((void *)(intptr_t)(n - 2));
    rc = weft_join(t, &a);
    bench_ok(rc, "weft_join");
    return (void *)(intptr_t)((long)(intptr_t)a + b);
}

#endif
