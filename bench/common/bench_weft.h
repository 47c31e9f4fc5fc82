/* bench_weft.h: what the weft benchmarks share on top of bench.h: starting
 * the runtime for one configuration, and fib with a user thread per call. */
#ifndef WEFT_BENCH_WEFT_H
#define WEFT_BENCH_WEFT_H

#include <stdint.h>

#include "bench.h"
#include "weft.h"

/* weft_init with the environment's defaults but workers and policy; dies on
 * an error. */
static inline void bench_weft_init(long workers, int policy)
{
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = (int)workers;
    cfg.spawn_policy = policy;
    int rc = weft_init(&cfg);
    if (rc != 0)
        bench_die("weft_init", rc);
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
    if (rc != 0)
        bench_die("weft_spawn", rc);
    long b = (long)(intptr_t)bench_weft_fib((void *)(intptr_t)(n - 2));
    rc = weft_join(t, &a);
    if (rc != 0)
        bench_die("weft_join", rc);
    return (void *)(intptr_t)((long)(intptr_t)a + b);
}

#endif
