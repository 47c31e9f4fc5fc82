/* c11.c: <threads.h> on the drop-in. glibc's thrd_create, mtx_lock,
 * call_once and the rest call its own internals, never the interposed
 * pthread names, so each is defined here on the pthread functions of
 * this library. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

#include "posix/posix.h"
#include "sched/sched.h"

static int thrd_err(int e)
{
    switch (e) {
    case 0: return thrd_success;
    case EBUSY: return thrd_busy;
    case ETIMEDOUT: return thrd_timedout;
    case ENOMEM:
    case EAGAIN: return thrd_nomem;
    default: return thrd_error;
    }
}

struct c11_start {
    thrd_start_t fn;
    void *arg;
};

/* WEFT_ENTRY, as start in thread.c: the user's function runs above it. */
static WEFT_ENTRY void *c11_entry(void *arg)
{
    struct c11_start s = *(struct c11_start *)arg;
    free(arg);
    return (void *)(intptr_t)s.fn(s.arg);
}

PT_API int thrd_create(thrd_t *t, thrd_start_t fn, void *arg)
{
    struct c11_start *s = malloc(sizeof *s);
    if (!s)
        return thrd_nomem;
    s->fn = fn;
    s->arg = arg;
    int e = pthread_create((pthread_t *)t, NULL, c11_entry, s);
    if (e)
        free(s);
    return thrd_err(e);
}
PT_API int thrd_join(thrd_t t, int *res)
{
    void *r;
    int e = pthread_join((pthread_t)t, &r);
    if (!e && res)
        *res = (int)(intptr_t)r;
    return thrd_err(e);
}
PT_API int thrd_detach(thrd_t t)
{
    return thrd_err(pthread_detach((pthread_t)t));
}
PT_API _Noreturn void thrd_exit(int res)
{
    pthread_exit((void *)(intptr_t)res);
}
PT_API thrd_t thrd_current(void)
{
    return (thrd_t)pthread_self();
}
PT_API int thrd_equal(thrd_t a, thrd_t b)
{
    return a == b;
}
PT_API void thrd_yield(void)
{
    sched_yield();
}
PT_API int thrd_sleep(const struct timespec *d, struct timespec *rem)
{
    if (weft__posix_on_user()) {
        weft__posix_sleep_ns((uint64_t)d->tv_sec * 1000000000u + (uint64_t)d->tv_nsec);
        if (rem)
            rem->tv_sec = rem->tv_nsec = 0;
        return 0;
    }
    if (nanosleep(d, rem) == 0)
        return 0;
    return errno == EINTR ? -1 : -2;
}

PT_API int mtx_init(mtx_t *m, int type)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    if (type & mtx_recursive)
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    return thrd_err(pthread_mutex_init((pthread_mutex_t *)m, &a));
}
PT_API int mtx_lock(mtx_t *m)
{
    return thrd_err(pthread_mutex_lock((pthread_mutex_t *)m));
}
PT_API int mtx_trylock(mtx_t *m)
{
    return thrd_err(pthread_mutex_trylock((pthread_mutex_t *)m));
}
PT_API int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abs)
{
    return thrd_err(pthread_mutex_timedlock((pthread_mutex_t *)m, abs));
}
PT_API int mtx_unlock(mtx_t *m)
{
    return thrd_err(pthread_mutex_unlock((pthread_mutex_t *)m));
}
PT_API void mtx_destroy(mtx_t *m)
{
    pthread_mutex_destroy((pthread_mutex_t *)m);
}

PT_API int cnd_init(cnd_t *c)
{
    return thrd_err(pthread_cond_init((pthread_cond_t *)c, NULL));
}
PT_API int cnd_signal(cnd_t *c)
{
    return thrd_err(pthread_cond_signal((pthread_cond_t *)c));
}
PT_API int cnd_broadcast(cnd_t *c)
{
    return thrd_err(pthread_cond_broadcast((pthread_cond_t *)c));
}
PT_API int cnd_wait(cnd_t *c, mtx_t *m)
{
    return thrd_err(pthread_cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m));
}
PT_API int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abs)
{
    return thrd_err(pthread_cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, abs));
}
PT_API void cnd_destroy(cnd_t *c)
{
    pthread_cond_destroy((pthread_cond_t *)c);
}

PT_API int tss_create(tss_t *k, tss_dtor_t d)
{
    return thrd_err(pthread_key_create((pthread_key_t *)k, d));
}
PT_API void *tss_get(tss_t k)
{
    return pthread_getspecific((pthread_key_t)k);
}
PT_API int tss_set(tss_t k, void *v)
{
    return thrd_err(pthread_setspecific((pthread_key_t)k, v));
}
PT_API void tss_delete(tss_t k)
{
    pthread_key_delete((pthread_key_t)k);
}

PT_API void call_once(once_flag *f, void (*fn)(void))
{
    pthread_once((pthread_once_t *)f, fn);
}
