/* futex.c: futexes made through syscall() (libstdc++'s std::atomic::wait,
 * libgomp, InnoDB) park a user thread instead of its worker.
 *
 * syscall(SYS_futex, ...) is the only system call wrapped here; every
 * other number is glibc's syscall() unchanged. From a user thread on a
 * worker, FUTEX_WAIT and FUTEX_WAIT_BITSET (private or shared, either
 * clock) wait in park.c on the word: the compare and the queueing are atomic
 * with respect to park.c's wakes, as the kernel's are with its own. A
 * wake (FUTEX_WAKE, FUTEX_WAKE_BITSET) from any thread wakes up to n
 * waiters in park.c and then makes the real wake for kernel threads that
 * wait in the kernel: so a wake may rouse up to n of each (a spurious
 * wake-up, which every futex user must take). Its result is the kernel's
 * count. A bitset is not matched: a WAIT_BITSET waiter wakes for any wake
 * of its word. Requeues and FUTEX_WAKE_OP make the real call and wake
 * every park.c waiter of both words (they then retry, as after a spurious
 * wake-up). The PI and requeue-PI operations are the real call (a user
 * thread then holds its worker until the rescue). docs/posix.md.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "posix/rw.h"

#define NS_PER_S 1000000000l

/* *rel later on CLOCK_MONOTONIC (the clock FUTEX_WAIT measures with). */
static struct timespec deadline(const struct timespec *rel)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    now.tv_sec += rel->tv_sec;
    now.tv_nsec += rel->tv_nsec;
    if (now.tv_nsec >= NS_PER_S) {
        now.tv_sec++;
        now.tv_nsec -= NS_PER_S;
    }
    return now;
}

static long fail(int err)
{
    errno = err;
    return -1;
}

/* A wait of the calling user thread in park.c: 0 or -1 with EAGAIN,
 * ETIMEDOUT, EINTR (a pthread_kill or a cancellation broke it off),
 * EINVAL (a bad timeout). */
static long user_wait(uint32_t *addr, uint32_t val, int cmd, int op, const struct timespec *t)
{
    struct timespec abs;
    const struct timespec *at = NULL;
    clockid_t clk = CLOCK_MONOTONIC;
    if (t) {
        if (t->tv_sec < 0 || t->tv_nsec < 0 || t->tv_nsec >= NS_PER_S)
            return fail(EINVAL);
        if (cmd == FUTEX_WAIT) {
            abs = deadline(t);
            at = &abs;
        } else {
            at = t; /* WAIT_BITSET: absolute */
            if (op & FUTEX_CLOCK_REALTIME)
                clk = CLOCK_REALTIME;
        }
    }
    weft__posix_deliver();
    int r = weft__posix_park((_Atomic uint32_t *)addr, val, clk, at);
    if (r == EINTR)
        weft__posix_deliver(); /* the handler runs before EINTR, as in the kernel */
    if (r == 0)
        return 0;
    return fail(r == EAGAIN ? EWOULDBLOCK : r);
}

PT_API long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    if (__builtin_expect(!weft__posix_rw_resolved, 0))
        weft__posix_rw_resolve();
    if (nr != SYS_futex)
        return weft__real_syscall(nr, a1, a2, a3, a4, a5, a6);
    uint32_t *addr = (uint32_t *)a1;
    int op = (int)a2;
    int cmd = op & FUTEX_CMD_MASK;
    switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
        if (cmd == FUTEX_WAIT_BITSET && (uint32_t)a6 == 0)
            return fail(EINVAL);
        /* shared (no FUTEX_PRIVATE_FLAG) too: libstdc++'s atomic wait uses
         * it. A wake from another process never reaches park.c (a limit) */
        if (weft__posix_rw_user())
            return user_wait(addr, (uint32_t)a3, cmd, op, (const struct timespec *)a4);
        break;
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
        if ((int)a3 > 0)
            weft__posix_unpark((_Atomic uint32_t *)addr, (int)a3);
        break;
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
    case FUTEX_WAKE_OP:
        weft__posix_unpark((_Atomic uint32_t *)addr, INT32_MAX);
        if (a5)
            weft__posix_unpark((_Atomic uint32_t *)a5, INT32_MAX);
        break;
    default: break;
    }
    return weft__real_syscall(nr, a1, a2, a3, a4, a5, a6);
}
