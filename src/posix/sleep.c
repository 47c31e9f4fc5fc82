/* sleep.c: the sleeps of a user thread park it on weft's timer
 * (weft_sleep_ns) instead of holding its worker: nanosleep,
 * clock_nanosleep on CLOCK_REALTIME/MONOTONIC/BOOTTIME (relative or
 * TIMER_ABSTIME), usleep and sleep. A user thread's sleep is not broken
 * off by a signal (no EINTR; the remaining time, when asked for, is 0).
 * Other clocks, other kernel threads and children of fork: glibc's call.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "posix/rw.h"

#define NS_PER_S 1000000000ll

/* glibc's call, looked up once into *slot */
static void *real(void **slot, const char *name)
{
    if (!*slot)
        *slot = dlsym(RTLD_NEXT, name);
    return *slot;
}

static int bad(const struct timespec *t)
{
    return !t || t->tv_nsec < 0 || t->tv_nsec >= NS_PER_S || t->tv_sec < 0;
}

static void park_ns(int64_t ns)
{
    weft__posix_deliver();
    weft__posix_testcancel();
    if (ns > 0)
        weft_sleep_ns((uint64_t)ns);
    weft__posix_testcancel();
}

PT_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
    static void *r;
    if (!weft__posix_rw_user())
        return ((__typeof__(nanosleep) *)real(&r, "nanosleep"))(req, rem);
    if (bad(req)) {
        errno = EINVAL;
        return -1;
    }
    park_ns((int64_t)req->tv_sec * NS_PER_S + req->tv_nsec);
    if (rem)
        *rem = (struct timespec){ 0, 0 };
    return 0;
}

PT_API int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem)
{
    static void *r;
    if (!weft__posix_rw_user() ||
        (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME)) {
        return ((__typeof__(clock_nanosleep) *)real(&r, "clock_nanosleep"))(clk, flags, req, rem);
    }
    if (bad(req))
        return EINVAL;
    int64_t ns = (int64_t)req->tv_sec * NS_PER_S + req->tv_nsec;
    if (flags & TIMER_ABSTIME) {
        struct timespec now;
        clock_gettime(clk, &now);
        ns -= (int64_t)now.tv_sec * NS_PER_S + now.tv_nsec;
    }
    park_ns(ns);
    if (rem && !(flags & TIMER_ABSTIME))
        *rem = (struct timespec){ 0, 0 };
    return 0;
}

PT_API int usleep(useconds_t us)
{
    static void *r;
    if (!weft__posix_rw_user())
        return ((__typeof__(usleep) *)real(&r, "usleep"))(us);
    park_ns((int64_t)us * 1000);
    return 0;
}

PT_API unsigned sleep(unsigned s)
{
    static void *r;
    if (!weft__posix_rw_user())
        return ((__typeof__(sleep) *)real(&r, "sleep"))(s);
    park_ns((int64_t)s * NS_PER_S);
    return 0;
}
