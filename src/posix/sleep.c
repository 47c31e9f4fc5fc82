/* sleep.c: the sleeps of a user thread park it on weft's timer
 * (park.c's timed wait) instead of holding its worker: nanosleep,
 * clock_nanosleep on CLOCK_REALTIME/MONOTONIC/BOOTTIME (relative or
 * TIMER_ABSTIME), usleep and sleep. As under NPTL, a signal whose handler
 * runs breaks the sleep off (EINTR, with the time left where the call
 * reports it; Linux never restarts these calls, SA_RESTART or not), and a
 * pthread_cancel acts at once (cancellation points).
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

/* The absolute time ns from now on clk. */
static struct timespec after(clockid_t clk, int64_t ns)
{
    struct timespec t;
    clock_gettime(clk, &t);
    int64_t n = t.tv_nsec + ns % NS_PER_S;
    t.tv_sec += (time_t)(ns / NS_PER_S + n / NS_PER_S);
    t.tv_nsec = (long)(n % NS_PER_S);
    return t;
}

/* Parks until abs on clk: 0, or EINTR once a signal's action ran. A
 * cancellation acts at the start, when it arrives, and at the end. */
static int park_until(clockid_t clk, const struct timespec *abs)
{
    weft__posix_testcancel(); /* runs pending signals first */
    _Atomic uint32_t word = 0;
    for (;;) {
        int r = weft__posix_park(&word, 0, clk, abs);
        if (r == ETIMEDOUT)
            break;
        if (r == EAGAIN) { /* the timer could not be armed: poll it */
            if (weft__posix_timed_out(clk, abs))
                break;
            weft_sleep_ns(1000000);
            continue;
        }
        if (r == EINTR) {
            int ran = weft__posix_deliver();
            weft__posix_testcancel();
            if (ran)
                return EINTR;
        }
    }
    weft__posix_testcancel();
    return 0;
}

/* What is left until abs on clk (0 if passed). */
static struct timespec left(clockid_t clk, const struct timespec *abs)
{
    struct timespec now;
    clock_gettime(clk, &now);
    int64_t d = (int64_t)(abs->tv_sec - now.tv_sec) * NS_PER_S + (abs->tv_nsec - now.tv_nsec);
    if (d < 0)
        d = 0;
    return (struct timespec){ (time_t)(d / NS_PER_S), (long)(d % NS_PER_S) };
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
    struct timespec abs = after(CLOCK_MONOTONIC, (int64_t)req->tv_sec * NS_PER_S + req->tv_nsec);
    if (park_until(CLOCK_MONOTONIC, &abs) == EINTR) {
        if (rem)
            *rem = left(CLOCK_MONOTONIC, &abs);
        errno = EINTR;
        return -1;
    }
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
    /* park.c's timer knows the realtime and monotonic clocks; boottime
     * runs with monotonic while the machine is awake */
    clockid_t on = clk == CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    struct timespec abs = *req;
    if (!(flags & TIMER_ABSTIME))
        abs = after(on, (int64_t)req->tv_sec * NS_PER_S + req->tv_nsec);
    else if (clk == CLOCK_BOOTTIME) {
        struct timespec now;
        clock_gettime(CLOCK_BOOTTIME, &now);
        int64_t d = (int64_t)(req->tv_sec - now.tv_sec) * NS_PER_S + (req->tv_nsec - now.tv_nsec);
        abs = after(on, d > 0 ? d : 0);
    }
    if (park_until(on, &abs) == EINTR) {
        if (rem && !(flags & TIMER_ABSTIME))
            *rem = left(on, &abs);
        return EINTR;
    }
    if (rem && !(flags & TIMER_ABSTIME))
        *rem = (struct timespec){ 0, 0 };
    return 0;
}

PT_API int usleep(useconds_t us)
{
    static void *r;
    if (!weft__posix_rw_user())
        return ((__typeof__(usleep) *)real(&r, "usleep"))(us);
    struct timespec abs = after(CLOCK_MONOTONIC, (int64_t)us * 1000);
    if (park_until(CLOCK_MONOTONIC, &abs) == EINTR) {
        errno = EINTR;
        return -1;
    }
    return 0;
}

PT_API unsigned sleep(unsigned s)
{
    static void *r;
    if (!weft__posix_rw_user())
        return ((__typeof__(sleep) *)real(&r, "sleep"))(s);
    struct timespec abs = after(CLOCK_MONOTONIC, (int64_t)s * NS_PER_S);
    if (park_until(CLOCK_MONOTONIC, &abs) == EINTR) {
        struct timespec l = left(CLOCK_MONOTONIC, &abs);
        return (unsigned)l.tv_sec + (l.tv_nsec >= NS_PER_S / 2); /* glibc rounds */
    }
    return 0;
}
