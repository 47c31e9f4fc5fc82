/* sync_ops.h: one interface over weft's and pthreads' mutex and condition
 * variable, through void pointers, for the synchronisation benchmarks that
 * run the same code on both (an indirect call per operation for either). */
#ifndef WEFT_BENCH_SYNC_OPS_H
#define WEFT_BENCH_SYNC_OPS_H

#include <pthread.h>
#include <weft.h>

struct bench_sync_ops {
    int (*lock)(void *m);
    int (*unlock)(void *m);
    int (*wait)(void *c, void *m);
    int (*signal)(void *c);
};

static inline int bench_weft_lock(void *m)
{
    return weft_mutex_lock(m);
}
static inline int bench_weft_unlock(void *m)
{
    return weft_mutex_unlock(m);
}
static inline int bench_weft_wait(void *c, void *m)
{
    return weft_cond_wait(c, m);
}
static inline int bench_weft_signal(void *c)
{
    return weft_cond_signal(c);
}
static inline int bench_pthread_lock(void *m)
{
    return pthread_mutex_lock(m);
}
static inline int bench_pthread_unlock(void *m)
{
    return pthread_mutex_unlock(m);
}
static inline int bench_pthread_wait(void *c, void *m)
{
    return pthread_cond_wait(c, m);
}
static inline int bench_pthread_signal(void *c)
{
    return pthread_cond_signal(c);
}

static const struct bench_sync_ops bench_weft_sync = { bench_weft_lock, bench_weft_unlock,
                                                       bench_weft_wait, bench_weft_signal };
static const struct bench_sync_ops bench_pthread_sync = { bench_pthread_lock, bench_pthread_unlock,
                                                          bench_pthread_wait,
                                                          bench_pthread_signal };

#endif
